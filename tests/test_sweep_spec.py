"""The sweep file's one check (``sweep/spec.py``): a key on two axes, values or seeds given
twice, points that are the same run; and a user's scenario without a ``seed`` key swept
as any other (it crashed with ``KeyError: 'seed'``, exit 1, nothing written)."""

import csv

import pytest

from conftest import ROOT, run_cli

FAST = 'set = {"duration" = "2ms", "metrics.warmup" = "0s"}\n'


def _spec(tmp_path, text):
    p = tmp_path / "sweep.toml"
    p.write_text(text)
    return p


def _refused(tmp_path, text, says):
    p = _spec(tmp_path, text)
    r = run_cli("sweep", p, "--out", tmp_path / "out", check=False)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"ecnlab: error: {p}: "), r.stderr
    assert says in lines[0], r.stderr
    assert not (tmp_path / "out").exists(), "a refused sweep writes nothing"


@pytest.mark.parametrize("text, says", [
    # Two kinds of axis on one key: the later override ran, the row said the earlier value.
    ('scenario = "tcn-static"\n[grid]\n"marking.scheme" = ["tcn", "per_queue"]\n'
     '[cases.v]\na = {"marking.scheme" = "codel"}\nb = {"duration" = "1ms"}\n',
     'cases.v.a."marking.scheme": sets marking.scheme, and grid."marking.scheme"[0] also sets it'),
    ('scenario = "tcn-static"\n[zip]\n"marking.scheme" = ["tcn", "per_queue"]\n'
     '[cases.v]\na = {"marking.scheme" = "codel"}\n',
     'cases.v.a."marking.scheme": sets marking.scheme, and zip."marking.scheme"[0] also sets it'),
    ('scenario = "tcn-static"\n[cases.a]\nx = {"duration" = "1ms"}\n[cases.b]\ny = {"duration" = "2ms"}\n',
     "cases.b.y.duration: sets duration, and cases.a.x.duration also sets it"),
    ('scenario = "tcn-static"\n[grid]\n"flows" = [[]]\n"flows.0.count" = [1, 2]\n',
     'grid."flows.0.count"[0]: sets flows.0.count, and grid.flows[0] also sets flows'),
    # Given twice: ran once, counted twice (summary.csv: seeds=2, an interval of 0).
    ('scenario = "tcn-static"\nseeds = [1, 2, 1]\n', "seeds[2]: 1 is listed twice (also seeds[0])"),
    ('scenario = "tcn-static"\n[grid]\n"marking.scheme" = ["tcn", "codel", "tcn"]\n',
     'grid."marking.scheme"[2]: the same as grid."marking.scheme"[0]'),
    ('scenario = "tcn-static"\n[zip]\n"marking.scheme" = ["tcn", "tcn"]\n"duration" = ["1ms", "1ms"]\n',
     "the same as zip (point 0"),
    ('scenario = "tcn-static"\n[cases.v]\na = {"duration" = "1ms"}\nb = {"duration" = "1ms"}\n',
     "cases.v.b: the same as cases.v.a"),
    # Different labels, one run: the case sets what the scenario already has.
    ('scenario = "tcn-static"\n[cases.v]\nbase = {}\nsame = {"duration" = "1s"}\n',
     'point {"v": "same"}: runs the very scenario of point {"v": "base"}'),
])
def test_a_sweep_file_that_would_mislabel_or_double_count_is_refused(tmp_path, text, says):
    _refused(tmp_path, text, says)


def test_a_user_scenario_without_a_seed_key_is_swept(tmp_path):
    """The worst bug of issue 35: every built-in has a seed, a user's file need not."""
    scen = tmp_path / "mine.toml"
    scen.write_text("".join(line for line in (ROOT / "python/ecnlab/scenarios/tcn-static.toml").read_text()
                            .splitlines(keepends=True) if not line.startswith("seed")))
    assert "\nseed" not in scen.read_text()
    spec = _spec(tmp_path, f'scenario = "mine.toml"\n{FAST}[grid]\n"marking.scheme" = ["tcn", "per_queue"]\n')
    r = run_cli("sweep", spec, "--out", tmp_path / "out", "-q", check=False)
    assert r.returncode == 0, r.stderr
    with open(tmp_path / "out" / "results.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["status"] for r in rows] == ["ok", "ok"]
    default = run_cli("run", scen, "--set", "duration=2ms", "--set", "metrics.warmup=0s", "-q", "--out",
                      tmp_path / "one")
    assert default.returncode == 0
    import json

    ran = json.loads((tmp_path / "one" / "summary.json").read_text())["seed"]
    assert {r["seed"] for r in rows} == {str(ran)}  # the core's default seed, as `ecnlab run` takes it


def test_a_run_listed_twice_counts_once_in_the_summary(tmp_path):
    """Points given as a list (the Python API) may repeat one: summary.csv counts the run
    once, not as two seeds with an interval of 0."""
    import ecnlab

    pts = [ecnlab.Point("tcn-static", ["duration=2ms", "metrics.warmup=0s"], seed=1, params={"x": 1})] * 2
    ecnlab.sweep(pts, out=tmp_path / "o", progress=False)
    with open(tmp_path / "o" / "summary.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["seeds"] for r in rows] == ["1"]
