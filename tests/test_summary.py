"""summary.json is built in one place (crates/ecnlab-sim/src/summary.rs): the emulator's
comes from `_core.summary_from_measurements`, the FCT size classes from `_core.fct_classes`."""

import json
import tomllib
from pathlib import Path

import pytest

from ecnlab import _core, api
from ecnlab.report import run_report
from ecnlab.sweep import store


@pytest.fixture(scope="module")
def sim():
    # Web-search messages over 4 classes, plus probes: every size class and several queues.
    doc = tomllib.loads((Path(api.__file__).parent / "scenarios" / "tcn-isolation.toml").read_text())
    doc["traffic"][0]["flows"] = 150
    doc["probes"] = [{"src": 1, "dst": 0, "interval": "100us"}]
    return api.run(doc)


def test_fct_classes_are_the_cores_and_python_reads_them_from_it():
    classes = _core.fct_classes()
    assert classes == [("all", None, None), ("small", None, 100_000), ("medium", 100_000, 10_000_000),
                       ("large", 10_000_000, None)]
    names = tuple(c[0] for c in classes)
    assert store._FCT == names and run_report.BUCKETS == names
    assert run_report.BUCKET_LABEL["small"] == "small (≤ 100 KB)"
    assert run_report.BUCKET_LABEL["large"] == "large (> 10 MB)"


def test_measurements_give_the_simulators_own_summary(sim):
    """What the emulator hands the core (flows' outcomes, probes' samples, per-queue counters
    and the listed queues), taken from a simulated run, gives that run's figures."""
    s = sim.summary
    m = {
        "scenario": s["scenario"], "seed": s["seed"], "sim_time_s": s["sim_time_s"],
        "measure_from_s": s["measure_from_s"], "events": s["events"], "packet_hops": s["packet_hops"],
        "flows": [{k: f[k] for k in ("class", "size", "start_s", "fct_us", "slowdown")} for f in sim.flows],
        "timeouts": s["flows"]["timeouts"], "timeouts_after_finish": s["flows"]["timeouts_after_finish"],
        "syn_timeouts": s["flows"].get("syn_timeouts"), "tlp_probes": s["flows"].get("tlp_probes"),
        "undos": s["flows"].get("undos"),
        "counters": [{k: s[k] for k in ("marks_by_reason", "drops_by_reason", "unmarkable_by_reason")}],
        "queues": s["queues"],
        "probes": [{k: p[k] for k in ("id", "src", "dst", "class", "rtt_us")} for p in sim.probes],
    }
    e = json.loads(_core.summary_from_measurements(json.dumps(m)))
    assert s["fct"]["small"]["count"] > 0 and s["probe_rtt"]["count"] > 0
    for k in ("fct", "flows", "marks", "drops", "marks_by_reason", "drops_by_reason", "unmarkable_by_reason",
              "queues", "probes", "probe_rtt", "scenario", "seed", "sim_time_s", "measure_from_s", "packet_hops"):
        assert e[k] == s[k], k
    # What an emulation does not measure stays out (the emulator adds its own block).
    assert not {"fct_by_class", "ports", "nics", "long_flows", "counting", "emulation"} & set(e)


def test_measurements_that_do_not_read_raise_value_error():
    with pytest.raises(ValueError, match="measurements"):
        _core.summary_from_measurements(json.dumps({"scenario": "x", "flows": [], "bogus": 1}))
