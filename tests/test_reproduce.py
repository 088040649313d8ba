"""The experiment catalog: one entry end to end (results.csv, claims.json, figures,
report.html rendered by headless Chromium with its images loaded), a "not run" entry, and
the catalog's completeness.

How the browser check works: report.html carries a small inline script that, on the
window's load event (which fires only after every <img> has finished loading or failed),
writes ``data-images-total`` and ``data-images-loaded`` (images complete with a natural
width > 0) on <body>. Chromium's ``--dump-dom`` prints the DOM after the load event, so the
test reads both attributes from it; a separate ``--screenshot`` must be a real, non-blank
PNG."""

import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import markupsafe
import pytest

from ecnlab.reproduce import CATALOG

from conftest import run_cli

SPEC_IDS = ["tcn-perport", "tcn-capacity", "tcn-buffer", "tcn-static", "tcn-isolation", "tcn-priority",
            "tcn-leafspine", "ecnsharp-dilemma", "ecnsharp-star", "ecnsharp-leafspine", "ecnsharp-incast",
            "ecnsharp-sensitivity", "ecnsharp-sched", "ecnsharp-dcqcn", "ecnsharp-pias", "dualq-step",
            "dualq-nflows", "dualq-slope", "dualq-equal"]
# Beyond SPEC §6: ECN#'s Figs. 1 and 6, measurements of the authors' hardware (not run, with why).
EXTRA_IDS = ["ecnsharp-testbed"]
CLAIM_KEYS = {"claim", "paper", "unit", "section", "quote", "ecnlab", "shown", "status", "direction", "magnitude",
              "note"}


def test_catalog_has_every_spec_id_and_valid_points():
    from ecnlab.api import validate

    assert sorted(CATALOG) == sorted(SPEC_IDS + EXTRA_IDS)
    for e in CATALOG.values():
        assert e.claims and len({c.id for c in e.claims}) == len(e.claims), e.id
        if e.requires is not None and e.requires():
            continue
        n = {}
        for scale in ("quick", "paper"):
            pts = e.points(scale, [1, 2])
            assert pts, (e.id, scale)
            n[scale] = len(pts)
            for p in pts:  # every override names a real key with a valid value
                validate(p.scenario, p.overrides)
            # every scheme/setting gets the same seeds
            assert {p.seed for p in pts} == {1, 2}
        assert n["paper"] >= n["quick"], e.id


@pytest.fixture(scope="module")
def buffer_report(tmp_path_factory):
    out = tmp_path_factory.mktemp("repro") / "tcn-buffer"
    p = run_cli("reproduce", "tcn-buffer", "--out", out, "--scale", "quick", "--jobs", "2")
    assert "claims shown" in p.stdout
    return out


def test_entry_writes_results_claims_figures_report(buffer_report):
    out = buffer_report
    rows = (out / "results.csv").read_text().splitlines()
    assert rows[0].startswith("scheme,seed,key,status,error,")
    assert len(rows) == 1 + 3 * 1  # enqueue ECN/RED, dequeue ECN/RED, TCN x one draw (no random input)
    claims = json.loads((out / "claims.json").read_text())
    assert len(claims) >= 4
    for c in claims:
        assert CLAIM_KEYS <= set(c), c
        assert isinstance(c["shown"], bool) and c["shown"] == (c["status"] == "shown")
        assert c["status"] in ("shown", "not shown", "undecided"), c
        assert isinstance(c["ecnlab"], (int, float)), c
    exp = json.loads((out / "experiment.json").read_text())
    figs = [f["name"] for f in exp["figures_drawn"]]
    assert figs == ["fig3-buffer"]
    for f in figs:
        for ext in ("png", "svg"):
            assert (out / "figures" / f"{f}.{ext}").stat().st_size > 5000
    assert (out / "figures" / "fig3-buffer.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    html = (out / "report.html").read_text()
    assert 'src="figures/fig3-buffer.png"' in html
    for c in claims:
        assert str(markupsafe.escape(c["claim"])) in html
    # The paper's direction: dequeue marking peaks lower than enqueue marking.
    deq = next(c for c in claims if c["id"] == "deq_lower")
    assert deq["ecnlab"] < 0.9


def _chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    if hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("apt-get"):
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        r = subprocess.run(["apt-get", "install", "-y", "-q", "chromium"], capture_output=True, text=True, env=env)
        if r.returncode != 0:
            subprocess.run(["apt-get", "update", "-q"], capture_output=True, env=env)
            r = subprocess.run(["apt-get", "install", "-y", "-q", "chromium"], capture_output=True, text=True, env=env)
        if r.returncode == 0:
            return shutil.which("chromium")
        pytest.skip(f"chromium is not installed and apt-get install failed: {r.stderr.strip().splitlines()[-1:]}")
    pytest.skip("chromium is not installed and cannot be installed here (not root or no apt-get)")


def _browser(chromium, *args):
    with tempfile.TemporaryDirectory() as ud:
        return subprocess.run(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={ud}", *args],
            capture_output=True, text=True, timeout=120)


def test_report_renders_in_headless_chromium_with_images(buffer_report, tmp_path):
    chromium = _chromium()
    url = (buffer_report / "report.html").resolve().as_uri()
    dom = _browser(chromium, "--virtual-time-budget=10000", "--dump-dom", url)
    body = re.search(r"<body[^>]*>", dom.stdout)
    assert body, dom.stderr[-2000:]
    total = re.search(r'data-images-total="(\d+)"', body.group(0))
    loaded = re.search(r'data-images-loaded="(\d+)"', body.group(0))
    assert total and loaded, body.group(0)
    assert int(total.group(1)) >= 1 and loaded.group(1) == total.group(1), body.group(0)

    shot = tmp_path / "shot.png"
    r = _browser(chromium, "--window-size=1280,1800", "--hide-scrollbars", f"--screenshot={shot}", url)
    assert shot.exists(), r.stderr[-2000:]
    import matplotlib.image as mpimg
    import numpy as np

    img = mpimg.imread(shot)
    assert img.shape[0] >= 1000 and img.shape[1] >= 1200
    rgb = img[..., :3].reshape(-1, 3)
    colors = np.unique((rgb * 255).astype(np.uint8), axis=0)
    assert len(colors) > 200, len(colors)  # text, table colours and the plotted figure, not a blank page
    assert rgb.std() > 0.05


def test_entry_without_simulator_support_is_reported_not_run(tmp_path):
    """An entry whose `requires()` names what the simulator cannot do is not run: each claim
    says "not run: <reason>" with the paper's number and sentence, and the report says so
    (tcn-capacity and ecnsharp-dcqcn took this path until the estimator trace and DCQCN
    existed; ecnsharp-testbed, the authors' hardware, takes it)."""
    from ecnlab.reproduce import ClaimDef, Experiment, run_experiment
    from ecnlab.reproduce.numbers import ECNSHARP
    from ecnlab.reproduce.rules import At, Near

    def points(scale, seeds):
        raise AssertionError("a not-run entry must not build its runs")

    n = ECNSHARP["rtt_variation_testbed"]
    exp = Experiment(id="needs-feature", paper="Paper", figures="Fig. 0", title="needs a feature",
                     claims=[ClaimDef("a", "something holds", n, Near(At(("x",), "x")))],
                     points=points, tables=lambda ctx: {}, requires=lambda: "the simulator has no X yet")
    out = tmp_path / "nr"
    m, claims, df = run_experiment(exp, out, "quick", None, 1, None, False, "ecnlab reproduce needs-feature")
    assert m["status"] == "not run" and df.empty
    on_disk = json.loads((out / "claims.json").read_text())
    assert on_disk == claims and claims[0]["paper"] == 2.68 and claims[0]["quote"] == n.quote
    assert all(c["status"] == "not run" and c["note"] == "not run: the simulator has no X yet" and c["ecnlab"] is None
               and c["shown"] is False for c in claims)
    assert "Not run: the simulator has no X yet" in (out / "report.html").read_text()


def test_reproduce_errors_are_one_line(tmp_path):
    for args, text in ((["nope"], "no catalog entry 'nope'"), ([], "give a catalog id"),
                       (["tcn-buffer", "--scale", "huge"], "--scale")):
        p = run_cli("reproduce", *args, "--out", tmp_path / "x", check=False)
        assert p.returncode == 2, p
        assert p.stderr.startswith("ecnlab: error: ") and text in p.stderr and p.stderr.count("\n") == 1


def test_one_entry_and_several_do_not_mix_in_one_folder(tmp_path):
    """One entry writes into --out itself, several write a folder each: a folder holding one
    layout refuses the other, before anything runs or is written."""
    several = tmp_path / "several"
    (several / "tcn-static").mkdir(parents=True)
    (several / "tcn-static" / "experiment.json").write_text('{"id": "tcn-static"}')
    p = run_cli("reproduce", "tcn-buffer", "--out", several, check=False)
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p
    assert "holds a reproduction of several entries (tcn-static)" in p.stderr
    assert str(several / "tcn-buffer") in p.stderr
    assert sorted(x.name for x in several.iterdir()) == ["tcn-static"]

    one = tmp_path / "one"
    one.mkdir()
    (one / "experiment.json").write_text('{"id": "tcn-buffer"}')
    p = run_cli("reproduce", "tcn-buffer", "tcn-static", "--out", one, check=False)
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p
    assert "holds the reproduction of tcn-buffer alone" in p.stderr
    assert sorted(x.name for x in one.iterdir()) == ["experiment.json"]


def test_several_seeds_give_each_claim_its_interval(buffer_report, tmp_path):
    """With --seeds N every claim reads one value per seed: seed 1's is exactly the value of a
    one-seed run, the interval is the seeds', and REPRODUCTION.md counts direction and
    magnitude apart and names the build that ran the entries."""
    out, md = tmp_path / "all", tmp_path / "REPRO.md"
    run_cli("reproduce", "tcn-buffer", "tcn-static", "--out", out, "--scale", "quick", "--seeds", "2",
            "--jobs", "2", "--markdown", md)
    one = {c["id"]: c for c in json.loads((buffer_report / "claims.json").read_text())}
    claims = json.loads((out / "tcn-buffer" / "claims.json").read_text())
    for c in claims:
        assert [p["seed"] for p in c["per_seed"]] == [1, 2], c
        assert c["per_seed"][0]["ecnlab"] == one[c["id"]]["ecnlab"], (c, one[c["id"]])
        assert c["ci95"] == [c["ecnlab"], c["ecnlab"]]  # tcn-buffer has no random input: the seeds agree
    exp = json.loads((out / "tcn-buffer" / "experiment.json").read_text())
    assert [f["name"] for f in exp["figures_drawn"]] == ["fig3-buffer"]
    text = md.read_text()
    assert "| experiment | scale | claim | paper | ecnlab (95 % interval) | direction / magnitude | status | note |" in text
    assert re.search(r"Direction: \d+ shown, \d+ not shown, \d+ undecided, \d+ without a direction\. Magnitude: \d+ "
                     r"shown", text)
    assert re.search(r"\| tcn-static \| quick \| .* \| (shown|not shown|undecided|n/a) / (shown|not shown|undecided|n/a) "
                     r"\| (yes|\*\*no\*\*|undecided)", text)
    from ecnlab.api import engine_id

    assert "from an actual run of 2 of the catalog's" in text
    row = next(line for line in text.splitlines() if line.startswith("| tcn-buffer | TCN"))
    assert f"| {engine_id()} |" in row and re.search(r"\| \d+(\.\d)? s \|", row), row


def test_leafspine_32_queues_spread_31_services_over_the_workloads_as_tcn_ns2():
    """Fig. 13: 1 strict + 31 DWRR queues; service s runs workload s mod 4 (TCN-NS2's
    scripts), so every service queue carries one workload and the load follows the number
    of services per workload (8/31, 8/31, 8/31, 7/31). The 8-queue points keep the
    scenario's own classes (their store keys do not change)."""
    from ecnlab.api import validate
    from ecnlab.reproduce.tcn_leafspine import _ls_load, _ls_services

    assert _ls_services(8) == [[1, 5], [2, 6], [3, 7], [4]]
    s32 = _ls_services(32)
    assert sorted(c for w in s32 for c in w) == list(range(1, 32))
    assert [len(w) for w in s32] == [8, 8, 8, 7]
    ovs = dict(o.split("=", 1) for o in _ls_load(0.9, 50000, 32))
    assert abs(sum(float(ovs[f"traffic.{i}.load"]) for i in range(4)) - 0.9) < 1e-8
    assert ovs["traffic.3.classes"] == "[4, 8, 12, 16, 20, 24, 28]"
    assert not any("classes" in o for o in _ls_load(0.9, 50000, 8))
    exp = CATALOG["tcn-leafspine"]
    (p,) = [p for p in exp.points("paper", [1]) if p.params == {
        "variant": "ecn_star_sp_dwrr_32q", "scheme": "tcn", "load": 0.9}]
    assert "switch.queues=32" in p.overrides
    doc = validate(p.scenario, p.overrides)
    assert doc["switch"]["queues"] == 32 and doc["traffic"][0]["classes"][-1] == 29
