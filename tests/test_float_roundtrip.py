"""Floats cross the Rust/Python boundary as JSON text both ways: Rust writes them (ryu) and
Python reads them, Python writes them (repr) and Rust reads them (serde_json, with its
`float_roundtrip` feature, Cargo.toml). Both writers give the shortest text that reads back
to the same double, so every value must come back bit for bit: a resolved scenario read
again by the core, and the summary the emulator's path builds from a run's measurements,
which must be the simulator's own summary of that run."""

import json

import pytest

import ecnlab
from ecnlab import _core
from ecnlab.scenario import builtin_names, to_json


def _floats(v, path=""):
    """Every float of a JSON document, by path."""
    if isinstance(v, float):
        yield path, v
    elif isinstance(v, dict):
        for k, x in v.items():
            yield from _floats(x, f"{path}.{k}")
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from _floats(x, f"{path}.{i}")


@pytest.mark.parametrize("name", builtin_names())
def test_a_resolved_scenario_reads_back_to_the_same_bits(name):
    once = json.loads(_core.resolve_json(to_json(ecnlab.resolve(name))))
    twice = json.loads(_core.resolve_json(json.dumps(once)))
    moved = [(p, a, b) for (p, a), (_, b) in zip(_floats(once), _floats(twice)) if a.hex() != b.hex()]
    assert not moved, moved[:5]
    assert twice == once


def test_the_emulators_path_gives_the_simulators_summary_bit_for_bit():
    # Many flows and probes: FCTs and RTTs with full 17-digit mantissas (x / 1e3 of ns).
    doc = ecnlab.resolve("tcn-isolation", ["traffic.0.flows=400"])
    doc["probes"] = [{"src": 1, "dst": 0, "class": 1, "interval": "200us"}]
    r = ecnlab.run(doc)
    s = r.summary
    assert s["flows"]["completed"] > 100 and s["probe_rtt"]["count"] > 100
    measurements = {
        "scenario": s["scenario"], "seed": s["seed"], "sim_time_s": s["sim_time_s"],
        "measure_from_s": s["measure_from_s"], "events": s["events"], "packet_hops": s["packet_hops"],
        "flows": [{k: f[k] for k in ("class", "size", "start_s", "fct_us", "slowdown")} for f in r.flows],
        "timeouts": s["flows"]["timeouts"], "timeouts_after_finish": s["flows"]["timeouts_after_finish"],
        "syn_timeouts": s["flows"].get("syn_timeouts"), "tlp_probes": s["flows"].get("tlp_probes"),
        "undos": s["flows"].get("undos"),
        "counters": [{k: s[k] for k in ("marks_by_reason", "drops_by_reason", "unmarkable_by_reason")}],
        "queues": s["queues"],
        "probes": [{k: p[k] for k in ("id", "src", "dst", "class", "rtt_us")} for p in r.probes],
        "ports": s["ports"], "nics": s["nics"], "long_flow_goodputs_bps": s["long_flows"]["goodput_bps"],
        "counting": s["counting"],
    }
    built = json.loads(_core.summary_from_measurements(json.dumps(measurements)))
    for key in ("fct", "flows", "probe_rtt", "probes", "queues", "ports", "nics", "long_flows", "marks", "drops"):
        want, got = dict(_floats(s[key])), dict(_floats(built[key]))
        assert got.keys() == want.keys(), (key, sorted(want.keys() ^ got.keys())[:3])
        moved = [(p, a, got[p]) for p, a in want.items() if a.hex() != got[p].hex()]
        assert not moved, (key, moved[:3])
        assert built[key] == s[key], key
