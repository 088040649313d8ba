"""Same seed, same results, bit for bit: every built-in scenario and one run of every
catalog entry, at a quick scale, through `ecnlab run` (twice, concurrently), the Python API
(all in one process, one after another), a sweep's local worker processes and Dask
workers. Every result file must be byte-identical; summary.json only without its
`wall_time_s` line (the one wall-clock field)."""

import json
import re
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import ecnlab
from ecnlab.api import resolve
from ecnlab.reproduce import CATALOG
from ecnlab.scenario import builtin_names
from ecnlab.sweep import Point, override

from conftest import ECNLAB, ROOT

SEED = 3
FILES = ("summary.json", "flows.csv", "timeseries.csv", "probes.csv", "scenario.json")


def _seconds(v: Any) -> float:
    m = re.fullmatch(r"\s*([0-9.eE+-]+)\s*(s|ms|us|ns)\s*", str(v))
    assert m, f"cannot read the duration {v!r}"
    return float(m.group(1)) * {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}[m.group(2)]


def _quick(doc: dict[str, Any]) -> list[str]:
    """Overrides that shrink a scenario to well under a second of work, as the catalog's
    quick scale does with fewer flows: a shorter duration (at most 0.3 s, or 1/40 of the
    scenario's, for the slow dual-AQM links), a warm-up inside it, at most 1000 time-series
    samples, and at most ~40 generated flows and 3 incast queries per traffic entry."""
    ovs = []
    d = _seconds(doc.get("duration", "1s"))
    dur = min(d, max(0.3, d / 40))
    if dur < d:
        ovs.append(f'duration="{dur * 1e3:g}ms"')
    metrics = doc.get("metrics") or {}
    warmup = metrics.get("warmup")
    if warmup is not None and _seconds(warmup) >= dur / 2:
        ovs.append(f'metrics.warmup="{dur * 1e3 / 4:g}ms"')
    if "sample_interval" in metrics and _seconds(metrics["sample_interval"]) < dur / 1000:
        ovs.append(f'metrics.sample_interval="{dur * 1e3:g}us"')  # 1000 samples, not 30,000
    traffic = doc.get("traffic") or []
    flows = max(5, 40 // max(1, len(traffic)))
    for i, t in enumerate(traffic):
        if t.get("flows", 0) > flows:
            ovs.append(f"traffic.{i}.flows={flows}")
        if t.get("queries", 0) > 3:
            ovs.append(f"traffic.{i}.queries=3")
    return ovs


@dataclass
class Case:
    id: str
    scenario: Any  # a built-in name, or a scenario dict (catalog entries built in code)
    overrides: list[str]


def _cases() -> list[Case]:
    """Every built-in scenario as shipped, and the last quick-scale run of every catalog
    entry (its schemes, transports and variants: TCN, ECN#, MQ-ECN, DCQCN, ...)."""
    out = [Case(n, n, _quick(resolve(n))) for n in builtin_names()]
    for i, e in CATALOG.items():
        points = e.points("quick", [SEED])
        if not points:  # an entry the catalog does not run (the authors' hardware)
            continue
        p = points[-1]
        doc = resolve(p.scenario, p.overrides)
        out.append(Case(f"catalog:{i}", p.scenario, list(p.overrides) + _quick(doc)))
    return out


CASES = _cases()
IDS = [c.id for c in CASES]


def _comparable(d: Path) -> dict[str, bytes]:
    files = {f: (d / f).read_bytes() for f in FILES}
    files["summary.json"] = re.sub(rb'\n  "wall_time_s": [^\n]*', b"", files["summary.json"])
    return files


def _assert_identical(a: Path, b: Path, what: str) -> None:
    fa, fb = _comparable(a), _comparable(b)
    for f in FILES:
        assert fa[f] == fb[f], f"{f} differs between {what}: {_first_difference(fa[f], fb[f])}"


def _first_difference(x: bytes, y: bytes) -> str:
    lx, ly = x.decode().splitlines(), y.decode().splitlines()
    for i, (p, q) in enumerate(zip(lx, ly)):
        if p != q:
            return f"line {i + 1}: {p!r} != {q!r}"
    return f"{len(lx)} vs {len(ly)} lines"


def _toml_document(doc: dict[str, Any]) -> str:
    """A scenario dict as a TOML file `ecnlab run` reads back to the same dict, keys in order
    (scenario.json keeps it; tomli_w would put tables last)."""
    return "".join(override(json.dumps(k), v) + "\n" for k, v in doc.items())


def _cli_args(case: Case, out: Path, scratch: Path) -> list[str]:
    if isinstance(case.scenario, dict):
        f = scratch / f"{case.id.replace(':', '-')}.toml"
        f.write_text(_toml_document(case.scenario))
        scen = str(f)
    else:
        scen = case.scenario
    args = [str(ECNLAB), "run", scen, "--seed", str(SEED), "--out", str(out), "-q"]
    for o in case.overrides:
        args += ["--set", o]
    return args


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """Every case run once more by a sweep's local worker processes (two at a time)."""
    out = tmp_path_factory.mktemp("determinism") / "sweep"
    pts = [Point(c.scenario, c.overrides, SEED, {"case": c.id}) for c in CASES]
    df = ecnlab.sweep(pts, out=out, jobs=2, progress=False)
    assert list(df["status"]) == ["ok"] * len(CASES), df[df["status"] != "ok"][["case", "error"]].to_string()
    return out, dict(zip(df["case"], df["key"]))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_same_seed_same_bytes_across_cli_api_and_sweep_workers(case, store, tmp_path):
    cli = [tmp_path / "cli1", tmp_path / "cli2"]
    procs = [subprocess.Popen(_cli_args(case, d, tmp_path), cwd=ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for d in cli]
    api = ecnlab.run(case.scenario, seed=SEED, overrides=case.overrides)  # meanwhile, in this process
    api.write(tmp_path / "api")
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    sweep_out, keys = store
    _assert_identical(cli[0], cli[1], "two `ecnlab run`s")
    _assert_identical(cli[0], tmp_path / "api", "`ecnlab run` and ecnlab.run()")
    _assert_identical(cli[0], sweep_out / "runs" / keys[case.id], "`ecnlab run` and a sweep worker")
    s = json.loads((tmp_path / "api" / "summary.json").read_text())
    assert s["seed"] == SEED and s["events"] > 0


DASK_CASES = ["tcn-static", "ecnsharp-leafspine", "catalog:tcn-capacity", "catalog:ecnsharp-dcqcn",
              "catalog:dualq-step"]


def test_same_bytes_on_dask_workers(store, tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    cases = [c for c in CASES if c.id in DASK_CASES]
    assert len(cases) == len(DASK_CASES)
    pts = [Point(c.scenario, c.overrides, SEED, {"case": c.id}) for c in cases]
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        df = ecnlab.sweep(pts, out=tmp_path / "dask", cluster=client, progress=False)
    assert list(df["status"]) == ["ok"] * len(cases)
    sweep_out, keys = store
    for c in cases:
        assert dict(zip(df["case"], df["key"]))[c.id] == keys[c.id]
        _assert_identical(sweep_out / "runs" / keys[c.id], tmp_path / "dask" / "runs" / keys[c.id],
                          f"a local sweep worker and a Dask worker ({c.id})")


def test_same_bytes_from_concurrent_runs_in_one_process(tmp_path):
    """Two runs at once in one process's threads (as a Dask worker with several threads
    does) share nothing that changes their results."""
    case = next(c for c in CASES if c.id == "catalog:ecnsharp-sched")
    outs = [tmp_path / f"t{i}" for i in range(3)]
    errors = []

    def go(d):
        try:
            ecnlab.run(case.scenario, seed=SEED, overrides=case.overrides).write(d)
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=go, args=(d,)) for d in outs[:2]]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    go(outs[2])
    _assert_identical(outs[0], outs[1], "two concurrent runs")
    _assert_identical(outs[0], outs[2], "a concurrent and a lone run")


def test_a_different_seed_gives_different_traffic(tmp_path):
    """The comparison above is not vacuous: the seed reaches the simulator."""
    case = next(c for c in CASES if c.id == "ecnsharp-star")
    a = ecnlab.run(case.scenario, seed=SEED, overrides=case.overrides)
    b = ecnlab.run(case.scenario, seed=SEED + 1, overrides=case.overrides)
    assert [f["size"] for f in a.flows] != [f["size"] for f in b.flows]
