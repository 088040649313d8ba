"""Subsets of an entry's grid (``--where``) and the committed results (``--save``,
``--from``): REPRODUCTION.md and the reports rebuilt from committed files without running
anything.

The regeneration tests read the small committed fixture ``tests/data/reproduce-results``
(two quick-scale entries, as ``results.save`` wrote them: results.csv, runs.json.gz,
claims.json, experiment.json, no figures): every claim is judged again from it, nothing
runs."""

import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from ecnlab.reproduce import CATALOG
from ecnlab.reproduce.results import regenerate
from ecnlab.reproduce.runner import grid_left, parse_where, select
from ecnlab.scenario import ScenarioError

from conftest import run_cli

FIXTURE = Path(__file__).parent / "data" / "reproduce-results"


def test_where_parses_and_selects_the_headline_points():
    assert parse_where(["load=0.9", "variant=dctcp_sp_dwrr, dctcp_sp_wfq", "load=0.9,0.8"]) == {
        "load": ["0.9", "0.8"], "variant": ["dctcp_sp_dwrr", "dctcp_sp_wfq"]}
    exp = CATALOG["tcn-leafspine"]
    grid = exp.points("paper", [1, 2])
    chosen = select(exp, grid, {"load": ["0.90"]}, "paper")  # numbers compare as numbers
    variants = ("dctcp_sp_dwrr", "dctcp_sp_wfq", "ecn_star_sp_dwrr", "ecn_star_sp_dwrr_32q")
    assert len(grid) == 4 * 2 * 9 * 2 and len(chosen) == 4 * 2 * 2
    assert {p.params["load"] for p in chosen} == {0.9}
    assert {(p.params["variant"], p.params["scheme"]) for p in chosen} == {
        (v, s) for v in variants for s in ("per_queue", "tcn")}
    assert grid_left(grid, chosen, {"load": ["0.9"]}) == \
        "128 of 144 points: load in 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8"
    assert grid_left(grid, grid, {}) == ""
    # values that exist, but never together (Fig. 2 is the 3x study)
    dilemma = CATALOG["ecnsharp-dilemma"]
    with pytest.raises(ScenarioError, match="no point of ecnsharp-dilemma's quick grid has study in fig2 and "
                                            "variation in 5x"):
        select(dilemma, dilemma.points("quick", [1]), {"study": ["fig2"], "variation": ["5x"]}, "quick")


@pytest.mark.parametrize("specs, text", [
    (["load"], "is not KEY=VALUE"),
    (["=0.9"], "is not KEY=VALUE"),
    (["load="], "is not KEY=VALUE"),
])
def test_where_refuses_malformed_specs(specs, text):
    with pytest.raises(ScenarioError, match=text):
        parse_where(specs)


def test_where_errors_are_one_line_and_run_nothing(tmp_path):
    for where, text in (("lod=0.9", "has no parameter 'lod' (did you mean 'load'?)"),
                        ("load=0.95", "load=0.95 is not in tcn-leafspine's paper grid"),
                        ("load", "is not KEY=VALUE")):
        p = run_cli("reproduce", "tcn-leafspine", "--scale", "paper", "--where", where, "--out", tmp_path / "x",
                    check=False)
        assert p.returncode == 2, p
        assert p.stderr.startswith("ecnlab: error: ") and text in p.stderr and p.stderr.count("\n") == 1
        assert not (tmp_path / "x").exists()
    # an entry later in the list is checked before the first one runs
    p = run_cli("reproduce", "tcn-leafspine", "tcn-buffer", "--where", "variant=dctcp_sp_dwrr", "--out",
                tmp_path / "y", check=False)
    assert p.returncode == 2 and "tcn-buffer has no parameter 'variant'" in p.stderr
    assert not (tmp_path / "y" / "tcn-leafspine" / "runs").exists()
    p = run_cli("reproduce", "--from", FIXTURE, "--all", check=False)
    assert p.returncode == 2 and "--from judges the saved results again" in p.stderr


def test_from_refuses_before_writing_and_takes_the_entries_it_has(tmp_path):
    """A store with two entries: --from over the whole catalog is refused before any report
    is written (it wrote the first entries' pages, then refused); naming the entries it has
    rebuilds those and an index of them."""
    root = tmp_path / "results"
    shutil.copytree(FIXTURE, root)
    for page in [*root.rglob("report.html"), *root.glob("index.html")]:
        page.unlink()
    before = sorted(x.relative_to(root) for x in root.rglob("*"))
    p = run_cli("reproduce", "--from", root, check=False)
    assert p.returncode == 2 and "has no results for" in p.stderr and "ecnlab reproduce ID ... --from" in p.stderr
    assert sorted(x.relative_to(root) for x in root.rglob("*")) == before, "a refusal writes nothing"
    run_cli("reproduce", "tcn-buffer", "ecnsharp-sched", "--from", root, "--markdown", tmp_path / "R.md", "-q")
    assert (root / "quick" / "tcn-buffer" / "report.html").is_file() and (root / "index.html").is_file()
    text = (tmp_path / "R.md").read_text()
    assert "| tcn-buffer |" in text and "| ecnsharp-sched |" in text
    p = run_cli("reproduce", "tcn-bufer", "--from", root, check=False)
    assert p.returncode == 2 and "no catalog entry 'tcn-bufer' (did you mean 'tcn-buffer'?)" in p.stderr, p.stderr


def test_a_damaged_committed_file_is_one_line_naming_it(tmp_path):
    root = tmp_path / "results"
    shutil.copytree(FIXTURE, root)
    claims = next(root.glob("*/*/claims.json"))
    claims.write_text('{"bad":')
    p = run_cli("reproduce", "--from", root, check=False)
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
    assert p.stderr.startswith(f"ecnlab: error: {claims}: not valid JSON"), p.stderr


def test_subset_run_judges_what_ran_and_saves_lean_results(tmp_path):
    """ecnsharp-incast at quick scale with only N = 16: the claims on N = 16 are judged and
    say so; the others are "not run" with what is left; --save copies the entry without
    per-run files but with each run's compact data, the build, the grid and the runs' summed
    time, and only the figures this entry drew (a store shared with another entry holds its
    figures too)."""
    from ecnlab.api import engine_id
    from ecnlab.reproduce.results import read_runs

    store, results = tmp_path / "store", tmp_path / "results"
    (store / "figures").mkdir(parents=True)
    (store / "figures" / "fig1-other-entry.svg").write_text("<svg/>")
    run_cli("reproduce", "ecnsharp-incast", "--scale", "quick", "--seeds", "1", "--where", "n=16", "--jobs", "1",
            "--out", store, "--save", results, "-q")
    claims = json.loads((store / "claims.json").read_text())
    judged = [c for c in claims if c["status"] in ("shown", "not shown", "undecided")]
    left = [c for c in claims if c["status"] == "not run"]
    assert judged and left and len(judged) + len(left) == len(claims)
    for c in judged:
        assert c["note"].startswith("Judged on the quick-scale subset n=16 (3 of 21 points). "), c
    for c in left:
        assert c["note"].startswith("not run at quick scale: the runs so far are the subset n=16 (3 of 21 points); "
                                    "left: 18 of 21 points: n in 25, 50, 100, 150, 175, 200"), c
    saved = results / "quick" / "ecnsharp-incast"
    assert sorted(p.name for p in saved.iterdir()) == ["claims.json", "experiment.json", "figures", "results.csv",
                                                       "runs.json.gz"]
    assert json.loads((saved / "claims.json").read_text()) == claims
    runs = read_runs(saved / "runs.json.gz")
    assert len(runs) == 3 and all(set(r) == {"params", "seed", "summary", "series"} for r in runs.values())
    assert all("soundness" in r["summary"] and "qct_us" in r["series"] for r in runs.values())
    m = json.loads((saved / "experiment.json").read_text())
    drawn = sorted(f"{f['name']}.svg" for f in m["figures_drawn"])
    assert drawn and sorted(f.name for f in (saved / "figures").iterdir()) == drawn
    assert m["engine"] == [engine_id()]
    assert m["grid"] == {"points": 21, "run": 3, "where": {"n": ["16"]},
                         "left": "18 of 21 points: n in 25, 50, 100, 150, 175, 200"}
    assert m["command"].startswith(".venv/bin/ecnlab reproduce ecnsharp-incast --scale quick --out <store> ")
    assert m["command"].endswith(" --where n=16")
    rows = (saved / "results.csv").read_text().splitlines()
    assert len(rows) == 4
    wall = sum(float(r.split(",")[rows[0].split(",").index("wall_time_s")]) for r in rows[1:])
    assert m["runs"]["run_time_s"] == pytest.approx(wall) and wall > 0
    assert str(tmp_path) not in "".join(p.read_text() for p in saved.rglob("*") if p.is_file() and p.suffix != ".gz")


def test_regenerate_judges_every_claim_again_from_the_saved_runs(tmp_path, monkeypatch):
    """--from runs nothing: the claims are judged again from results.csv and runs.json.gz (a
    changed rule is a new verdict in seconds); a saved run whose set-up is no longer a point
    of the grid is left out, and its point is "left to run"."""
    import ecnlab.reproduce.rules as rules
    import ecnlab.sweep as sweep

    monkeypatch.setattr(sweep, "run_points", lambda *a, **k: pytest.fail("--from ran something"))
    root = tmp_path / "results"
    shutil.copytree(FIXTURE, root)
    ids = ["tcn-buffer", "ecnsharp-sched"]
    saved = {i: json.loads((root / "quick" / i / "claims.json").read_text()) for i in ids}
    md = tmp_path / "R.md"
    manifests, claims = regenerate(root, md, ids=ids)
    assert [m["scale"] for m in manifests] == ["quick", "quick"]
    assert [(c["id"], c["status"], c["ecnlab"]) for c in claims] == [(c["id"], c["status"], c["ecnlab"])
                                                                     for i in ids for c in saved[i]]
    text = md.read_text()
    assert ".venv/bin/ecnlab reproduce --from results --markdown REPRODUCTION.md" in text
    assert "| tcn-buffer | TCN (Bai et al., CoNEXT 2016), Fig. 3 (§4.3) | quick | 1 | 3 / 3 | 3/3 |" in text
    assert text.count("| tcn-buffer | quick |") == len(saved["tcn-buffer"])
    assert "paper scale: all 6 points (3 seeds) |" in text and "## Rerunning the whole catalog on one build" in text
    assert (root / "index.html").is_file() and "figures/fig3-buffer.svg" in (root / "quick" / "tcn-buffer" /
                                                                              "report.html").read_text()
    # A wider band: the same saved runs, other verdicts (ECN#'s short flows, 60 % against 19.6 %).
    short = next(c for c in claims if c["experiment"] == "ecnsharp-sched" and c["id"] == "short")
    assert short["magnitude"] == "not shown"
    monkeypatch.setattr(rules, "BAND", 3.0)
    _, claims = regenerate(root, None, ids=ids)
    assert next(c for c in claims if c["experiment"] == "ecnsharp-sched" and c["id"] == "short")["magnitude"] == "shown"
    monkeypatch.undo()
    monkeypatch.setattr(sweep, "run_points", lambda *a, **k: pytest.fail("--from ran something"))
    # A saved run that is not today's point (its key: another set-up) is left out.
    csv = root / "quick" / "tcn-buffer" / "results.csv"
    lines = csv.read_text().splitlines()
    key = lines[1].split(",")[lines[0].split(",").index("key")]
    csv.write_text("\n".join([lines[0], lines[1].replace(key, "0" * 16)] + lines[2:]) + "\n")
    manifests, claims = regenerate(root, None, ids=["tcn-buffer"])
    assert manifests[0]["grid"]["run"] == 2 and "1 saved runs left out" in (root / "quick" / "tcn-buffer" /
                                                                            "experiment.json").read_text()
    with pytest.raises(ScenarioError, match=r"has no results for 1 of the 2 entries \(ecnsharp-dcqcn\)"):
        regenerate(root, None, ids=["tcn-buffer", "ecnsharp-dcqcn"])


def test_the_papers_numbers_are_the_claims_and_drawn_on_the_figures(tmp_path):
    """One table of numbers: a claim's paper value is its Number's, and the figure draws it
    (a star at its load, or the dotted best point when no load is quoted)."""
    from ecnlab.reproduce.base import Context, SavedRuns
    from ecnlab.reproduce.numbers import ECNSHARP
    from ecnlab.reproduce.evaluate import evaluate

    star = {c.id: c.number for c in CATALOG["ecnsharp-star"].claims}
    assert star["ws_small_avg"] is ECNSHARP["star_ws_small_avg"] and star["ws_small_avg"].at == {"load": 0.9}
    rows = [{"study": "fig9_10", "variation": "3x", "workload": "websearch", "scheme": s, "load": load, "seed": 1,
             "fct_all_avg_us": 1e3, "fct_small_avg_us": 100.0 if s != "ecn_sharp" else 80.0,
             "fct_small_p99_us": 500.0, "fct_large_avg_us": 1e5, "timeouts": 0, "drops": 0, "flows_unfinished": 0,
             "status": "ok", "key": "k", "max_qlen_bytes": 0} for s in ("tail", "avg", "codel", "ecn_sharp")
            for load in (0.5, 0.9)]
    exp = CATALOG["ecnsharp-star"]
    ctx = Context(exp, tmp_path, pd.DataFrame(rows), "quick", [1], SavedRuns(exp, {}))
    claims = evaluate(exp, ctx, {})
    svg = (tmp_path / "figures" / "fig9-websearch.svg").read_text()
    assert "paper (text)" in svg and "star: the paper's number at its load" in ctx.figures[0].caption
    c = claims["ws_small_avg"].as_dict()
    assert c["paper"] == 23.4 and c["ecnlab"] == pytest.approx(20.0) and c["magnitude"] == "shown"


def test_a_claim_not_shown_leads_its_note_with_why_and_stale_reasons_are_found(tmp_path):
    """results/reasons.toml: each claim not shown carries its reason, shown in REPRODUCTION.md
    and the report with the paper's sentence it rests on; a missing one, one whose claim is
    now shown, a category outside the list and a blame without evidence are all found."""
    from ecnlab.reproduce.reasons import REASONS, load_reasons, reasons_problems

    root = tmp_path / "results"
    shutil.copytree(FIXTURE, root)
    ids = ["tcn-buffer", "ecnsharp-sched"]
    manifests, claims = regenerate(root, None, ids=ids)
    scales = {m["id"]: m["scale"] for m in manifests}
    assert reasons_problems(load_reasons(root), claims, scales) == [
        f"ecnsharp-sched/short/quick: not shown, no reason in {REASONS}"]
    quote = "ECN $^{\\sharp}$ achieves 19.6% better average FCT"
    (root / REASONS).write_text(
        '[[reason]]\nentry = "ecnsharp-sched"\nclaim = "short"\nscale = "quick"\ncategory = "cannot-hold"\n'
        f"text = \"60 % where the paper has 19.6 %.\"\nquote = '{quote}'\npaper = \"ecnsharp\"\n"
        '[[reason]]\nentry = "tcn-buffer"\nclaim = "peak_enq"\nscale = "quick"\ncategory = "scale"\ntext = "x"\n')
    md = tmp_path / "R.md"
    manifests, claims = regenerate(root, md, ids=ids)
    row = next(line for line in md.read_text().splitlines() if line.startswith("| ecnsharp-sched | quick | ECN#'s short"))
    assert "**Why not shown (cannot-hold: the paper's claim cannot hold as stated): 60 % where the paper has 19.6 %. " \
           "(the paper: \"ECN $^{\\sharp}$ achieves 19.6% better average FCT\")**" in row
    assert "Why not shown (cannot-hold" in (root / "quick" / "ecnsharp-sched" / "report.html").read_text()
    assert reasons_problems(load_reasons(root), claims, scales) == ["tcn-buffer/peak_enq/quick: a reason, but the claim is shown or absent"]
    (root / REASONS).write_text('[[reason]]\nentry = "a"\nclaim = "b"\nscale = "quick"\ncategory = "noise"\ntext = "x"\n')
    with pytest.raises(ScenarioError, match=r"reasons.toml: reason\[0\].category: 'noise' is not one of cannot-hold"):
        load_reasons(root)
    (root / REASONS).write_text('[[reason]]\nentry = "a"\nclaim = "b"\nscale = "quick"\ncategory = "cannot-hold"\n'
                                'text = "the paper is wrong"\n')
    with pytest.raises(ScenarioError, match=r"blames the paper: give the sentence it rests on"):
        load_reasons(root)


def test_the_committed_reasons_are_current(tmp_path):
    """Every claim REPRODUCTION.md does not show says why, and no reason outlives its claim:
    a rerun that changes a verdict must update results/reasons.toml with it."""
    from ecnlab.reproduce.reasons import load_reasons, reasons_problems

    root = tmp_path / "results"
    shutil.copytree(Path(__file__).parent.parent / "results", root)
    manifests, claims = regenerate(root, None)
    assert reasons_problems(load_reasons(root), claims, {m["id"]: m["scale"] for m in manifests}) == []


def test_committed_figures_are_each_entrys_own():
    """Each committed entry holds exactly the figures its run drew: no other entry's figure
    copied from a shared store, none missing from its report."""
    for m in sorted((Path(__file__).parent.parent / "results").glob("*/*/experiment.json")):
        drawn = sorted(f"{f['name']}.svg" for f in json.loads(m.read_text()).get("figures_drawn") or [])
        assert sorted(f.name for f in (m.parent / "figures").glob("*.svg")) == drawn, m.parent


def test_reproduction_md_bold_leads_close(tmp_path):
    """A note led by an unsound-baseline warning and a reason shows both in bold: each lead is
    its own **...** (a closing ** after a space does not close in CommonMark, and two leads
    run together as '****' did not render)."""

    from ecnlab.reproduce.results import regenerate

    root = tmp_path / "results"
    shutil.copytree(Path(__file__).parent.parent / "results", root)
    md = tmp_path / "R.md"
    regenerate(root, md)
    rows = [line for line in md.read_text().splitlines() if "Unsound baseline" in line]
    assert any("Why not shown" in r for r in rows)
    for r in rows:
        assert "****" not in r and not re.search(r"\s\*\*(\s|\|)", r), r
        assert "**Unsound baseline: " in r and re.search(r"\(claims\.json\)\.\*\*|\.\*\* ", r), r


def test_a_rerun_runs_only_what_is_missing_and_status_says_how_much_is_stored(tmp_path):
    """The background rerun's machinery: the store keeps every finished run (a killed run loses
    only its runs in progress: tests/test_sweep_faults.py), the same command again runs only
    what is missing, and --status counts what is stored of each entry's grid for this build
    while progress.json says which entry runs."""
    store = tmp_path / "store"
    run_cli("reproduce", "tcn-buffer", "--out", store, "-q")
    status = run_cli("reproduce", "tcn-buffer", "--out", store, "--status").stdout
    assert re.search(r"tcn-buffer\s+3 / 3\s+runs stored done", status), status
    assert json.loads((store / "progress.json").read_text()) | {"updated_at": 0} == {
        "scale": "quick", "entries": ["tcn-buffer"], "done": ["tcn-buffer"], "running": None, "updated_at": 0}
    shutil.rmtree(next(p for p in (store / "runs").iterdir() if p.is_dir()))  # as if killed before it finished
    assert re.search(r"tcn-buffer\s+2 / 3", run_cli("reproduce", "tcn-buffer", "--out", store, "--status").stdout)
    run_cli("reproduce", "tcn-buffer", "--out", store, "-q")
    m = json.loads((store / "experiment.json").read_text())
    assert m["runs"]["total"] == 3 and m["runs"]["reused"] == 2


def test_an_entry_run_in_parts_on_two_machines_is_saved_as_one(tmp_path):
    """A heavy entry's grid in parts, each on a machine whose store is lost with it: --save
    keeps the earlier save's runs of the same build, runs only the points not saved yet, and
    judges and draws the entry on all of them, as one run of the whole subset would; when
    every point is saved, nothing runs."""
    from ecnlab.api import engine_id
    from ecnlab.reproduce.results import read_runs

    results = tmp_path / "results"
    args = ("reproduce", "ecnsharp-incast", "--scale", "quick", "--seeds", "1", "--jobs", "1", "-q")
    run_cli(*args, "--where", "n=16", "--out", tmp_path / "a", "--save", results)
    run_cli(*args, "--where", "n=16,25", "--out", tmp_path / "b", "--save", results)
    assert len(list((tmp_path / "b" / "runs").iterdir())) == 3, "only n = 25 ran on the second machine"
    saved = results / "quick" / "ecnsharp-incast"
    m = json.loads((saved / "experiment.json").read_text())
    assert m["engine"] == [engine_id()] and m["runs"]["kept_from_earlier_save"] == 3
    assert m["runs"]["total"] == m["runs"]["ok"] == 6, m["runs"]
    assert m["grid"]["run"] == 6 and m["grid"]["left"] == "57 of 63 points"  # of the entry's 3 seeds
    runs = read_runs(saved / "runs.json.gz")
    rows = (saved / "results.csv").read_text().splitlines()
    assert len(runs) == 6 and len(rows) == 7 and {r["params"]["n"] for r in runs.values()} == {16, 25}
    drawn = sorted(f"{f['name']}.svg" for f in m["figures_drawn"])
    assert drawn and sorted(f.name for f in (saved / "figures").iterdir()) == drawn
    # The same verdicts as the two subsets judged at once (the runs are the same bits on any
    # machine, test_determinism: the two machines' run directories are reused, not rerun).
    for part in ("a", "b"):
        shutil.copytree(tmp_path / part / "runs", tmp_path / "c" / "runs", dirs_exist_ok=True)
    run_cli(*args, "--where", "n=16,25", "--out", tmp_path / "c")
    assert json.loads((tmp_path / "c" / "experiment.json").read_text())["runs"]["reused"] == 6
    once = json.loads((tmp_path / "c" / "claims.json").read_text())
    parts = json.loads((saved / "claims.json").read_text())
    assert [(c["id"], c["status"], c.get("ecnlab")) for c in parts] == [(c["id"], c["status"], c.get("ecnlab"))
                                                                        for c in once]
    assert any(c["status"] in ("shown", "not shown", "undecided") for c in parts)
    # --status counts what the committed results hold: the new store has nothing yet.
    status = run_cli(*args[:6], "--out", tmp_path / "e", "--save", results, "--status").stdout
    assert re.search(rf"ecnsharp-incast\s+6 / 21\s+runs stored \(6 of them saved in {re.escape(str(results))}\)",
                     status), status
    # Everything asked for is saved: judged from there, nothing runs.
    run_cli(*args, "--where", "n=25", "--out", tmp_path / "d", "--save", results)
    assert not any((tmp_path / "d" / "runs").iterdir())
    assert len(read_runs(saved / "runs.json.gz")) == 6
