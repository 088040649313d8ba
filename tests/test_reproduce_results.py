"""Subsets of an entry's grid (``--where``) and the committed results (``--save``,
``--from``): REPRODUCTION.md and the reports rebuilt from committed files without running
anything.

The regeneration tests read the small committed fixture ``tests/data/reproduce-results``
(two quick-scale entries, as ``results.save`` wrote them: results.csv, claims.json,
experiment.json, no figures); a paper-scale subset is made from it in a temporary copy."""

import json
import shutil
from pathlib import Path

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
    assert p.returncode == 2 and "--from rebuilds the reports" in p.stderr


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
    assert p.returncode == 2 and "tcn-bufer: not a catalog id" in p.stderr, p.stderr


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
    per-run files, with the build, the grid and the runs' summed time, and only the
    figures this entry drew (a store shared with another entry holds its figures too)."""
    from ecnlab.api import engine_id

    store, results = tmp_path / "store", tmp_path / "results"
    (store / "figures").mkdir(parents=True)
    (store / "figures" / "fig1-other-entry.svg").write_text("<svg/>")
    run_cli("reproduce", "ecnsharp-incast", "--scale", "quick", "--seeds", "1", "--where", "n=16", "--jobs", "1",
            "--out", store, "--save", results, "-q")
    claims = json.loads((store / "claims.json").read_text())
    judged = [c for c in claims if c["status"] in ("shown", "not shown")]
    left = [c for c in claims if c["status"] == "not run"]
    assert judged and left and len(judged) + len(left) == len(claims)
    for c in judged:
        assert c["note"].startswith("Judged on the quick-scale subset n=16 (3 of 18 points). "), c
    for c in left:
        assert c["note"].startswith("not run at quick scale: the runs so far are the subset n=16 (3 of 18 points); "
                                    "left: 15 of 18 points: n in 25, 50, 100, 150, 200"), c
    saved = results / "quick" / "ecnsharp-incast"
    assert sorted(p.name for p in saved.iterdir()) == ["claims.json", "experiment.json", "figures", "results.csv"]
    assert json.loads((saved / "claims.json").read_text()) == claims
    m = json.loads((saved / "experiment.json").read_text())
    drawn = sorted(f"{f['name']}.svg" for f in m["figures_drawn"])
    assert drawn and sorted(f.name for f in (saved / "figures").iterdir()) == drawn
    assert m["engine"] == [engine_id()]
    assert m["grid"] == {"points": 18, "run": 3, "where": {"n": ["16"]},
                         "left": "15 of 18 points: n in 25, 50, 100, 150, 200"}
    assert m["command"].startswith(".venv/bin/ecnlab reproduce ecnsharp-incast --scale quick --out <store> ")
    assert m["command"].endswith(" --where n=16")
    rows = (saved / "results.csv").read_text().splitlines()
    assert len(rows) == 4
    wall = sum(float(r.split(",")[rows[0].split(",").index("wall_time_s")]) for r in rows[1:])
    assert m["runs"]["run_time_s"] == pytest.approx(wall) and wall > 0
    assert str(tmp_path) not in "".join(p.read_text() for p in saved.rglob("*") if p.is_file())


def _paper_subset(root: Path) -> None:
    """A paper-scale tcn-buffer next to the quick one: seed 1 of the entry's 3, TCN only (1
    of the 3 points of a one-seed grid), its last claim not run."""
    src, dst = root / "quick" / "tcn-buffer", root / "paper" / "tcn-buffer"
    shutil.copytree(src, dst)
    m = json.loads((dst / "experiment.json").read_text())
    m |= {"scale": "paper", "seeds": [1], "grid": {"points": 3, "run": 1, "where": {"scheme": ["tcn"]},
                                                     "left": "2 of 3 points: scheme in per_queue, dequeue_red"},
          "engine": ["0123456789abcdef"]}
    m["runs"]["run_time_s"] = 7200.0
    (dst / "experiment.json").write_text(json.dumps(m))
    claims = json.loads((dst / "claims.json").read_text())
    claims[-1] |= {"status": "not run", "shown": False, "ecnlab": None, "note": "not run at paper scale: left"}
    for c in claims:
        c.pop("per_seed", None), c.pop("seeds_judged", None), c.pop("seeds_shown", None)
    (dst / "claims.json").write_text(json.dumps(claims))


def test_regenerate_from_committed_results(tmp_path):
    root = tmp_path / "results"
    shutil.copytree(FIXTURE, root)
    ids = ["tcn-buffer", "ecnsharp-sched"]
    quick = {i: json.loads((root / "quick" / i / "claims.json").read_text()) for i in ids}
    md = tmp_path / "R.md"
    manifests, claims = regenerate(root, md, ids=ids)
    assert [m["scale"] for m in manifests] == ["quick", "quick"]
    assert [c["id"] for c in claims] == [c["id"] for i in ids for c in quick[i]]
    text = md.read_text()
    assert ".venv/bin/ecnlab reproduce --from results --markdown REPRODUCTION.md" in text
    assert "| tcn-buffer | TCN (Bai et al., CoNEXT 2016), Fig. 3 (§4.3) | quick | 3 (1-3) | 9 / 9 | 9/9 |" in text
    assert text.count("| tcn-buffer | quick |") == len(quick["tcn-buffer"])
    assert "| ecnsharp-sched | ECN# (Zhang et al., IEEE TCC 2022), Figs. 19-20 (§5.4.3) | quick | 3 (1-3) | 6 / 6 | " \
           "6/6 | 0.8 s | f2d4e9bddf8886ec | paper scale: all 6 points (3 seeds) |" in text
    assert (root / "index.html").is_file()
    assert "href=\"quick/tcn-buffer/report.html\"" in (root / "index.html").read_text()
    assert "figures/fig3-buffer.svg" in (root / "quick" / "tcn-buffer" / "report.html").read_text()

    # a paper-scale result wins over the quick one; a claim it has not run keeps the quick verdict
    _paper_subset(root)
    manifests, claims = regenerate(root, md, ids=ids)
    assert [m["scale"] for m in manifests] == ["paper", "quick"]
    text = md.read_text()
    # the grid and what is left count the entry's own 3 seeds
    assert "| tcn-buffer | TCN (Bai et al., CoNEXT 2016), Fig. 3 (§4.3) | paper | 1 | 1 / 9 | 9/9 | 2.0 h | " \
           "0123456789abcdef | 8 of 9 points: scheme in per_queue, dequeue_red; seeds 2-3 of every point |" in text
    last = quick["tcn-buffer"][-1]
    row = next(line for line in text.splitlines() if line.startswith(f"| tcn-buffer | paper | {last['claim']} |"))
    assert "| not run |" in row and "At quick scale: " in row and f", {last['status']}, " in row
    assert "Scale **paper** (1 entries)" in text and "Scale **quick** (1 entries)" in text

    with pytest.raises(ScenarioError, match=r"has no results for 1 of the 2 entries \(ecnsharp-dcqcn\)"):
        regenerate(root, None, ids=["tcn-buffer", "ecnsharp-dcqcn"])


def test_quoted_paper_numbers_are_the_claims_and_drawn_on_the_figures(tmp_path):
    """One constant per quoted number: the claim's paper value is the Quote's, and the
    figure draws it (a star at its load, or the dotted best point when no load is quoted)."""
    import pandas as pd

    from ecnlab.reproduce.base import Context
    from ecnlab.reproduce.ecnsharp import DCQCN_SHORT, STAR_QUOTES

    star = {c.id: c.paper for c in CATALOG["ecnsharp-star"].claims}
    assert all(star[cid] is q for cid, q in STAR_QUOTES.items())
    assert {c.id: c.paper for c in CATALOG["ecnsharp-dcqcn"].claims}["short"] is DCQCN_SHORT

    rows = [{"study": "fig9_10", "variation": "3x", "workload": "websearch", "scheme": s, "load": load, "seed": 1,
             "fct_all_avg_us": 1e3, "fct_small_avg_us": 100.0 if s != "ecn_sharp" else 80.0,
             "fct_small_p99_us": 500.0, "fct_large_avg_us": 1e5, "timeouts": 0, "drops": 0, "flows_unfinished": 0,
             "status": "ok", "key": "k"} for s in ("tail", "avg", "codel", "ecn_sharp") for load in (0.5, 0.9)]
    ctx = Context(CATALOG["ecnsharp-star"], tmp_path, pd.DataFrame(rows), "quick", [1])
    CATALOG["ecnsharp-star"].analyze(ctx)
    svg = (tmp_path / "figures" / "fig9-websearch.svg").read_text()
    assert "paper (text)" in svg and "stars: ECN#'s values" in ctx.figures[0].caption
    assert ctx.claims["ws_small_avg"].paper == 23.4 and ctx.claims["ws_small_avg"].ecnlab == pytest.approx(20.0)

    rows = [{"scheme": s, "load": load, "seed": 1, "fct_all_avg_us": 1e3, "fct_small_avg_us": 90.0 if "sharp" in s
             else 100.0, "fct_small_p99_us": 500.0, "fct_large_avg_us": 1e5, "timeouts": 0, "drops": 0,
             "flows_unfinished": 0, "status": "ok", "key": "k"} for s in ("dcqcn", "dcqcn_ecn_sharp") for load in (0.9,)]
    ctx = Context(CATALOG["ecnsharp-dcqcn"], tmp_path / "dcqcn", pd.DataFrame(rows), "quick", [1])
    CATALOG["ecnsharp-dcqcn"].analyze(ctx)
    assert "paper: best point (load not quoted)" in (tmp_path / "dcqcn" / "figures" / "fig21-dcqcn.svg").read_text()


def test_a_claim_not_shown_leads_its_note_with_why_and_stale_reasons_are_found(tmp_path):
    """results/reasons.toml: each claim not shown carries its reason (issue 17), shown in
    REPRODUCTION.md and the report; a missing one, one whose claim is now shown, and a
    category outside the five are all found."""
    from ecnlab.reproduce.reasons import REASONS, load_reasons, reasons_problems

    root = tmp_path / "results"
    shutil.copytree(FIXTURE, root)
    f = root / "quick" / "ecnsharp-sched" / "claims.json"
    cl = json.loads(f.read_text())
    cl[0]["status"], cl[0]["shown"] = "not shown", False
    f.write_text(json.dumps(cl))
    ids = ["tcn-buffer", "ecnsharp-sched"]
    manifests, claims = regenerate(root, None, ids=ids)
    scales = {m["id"]: m["scale"] for m in manifests}
    assert reasons_problems(load_reasons(root), claims, scales) == [
        f"ecnsharp-sched/{cl[0]['id']}/quick: not shown, no reason in {REASONS}"]

    (root / REASONS).write_text(
        f'[[reason]]\nentry = "ecnsharp-sched"\nclaim = "{cl[0]["id"]}"\nscale = "quick"\ncategory = "unexplained"\n'
        'text = "ECN# 9.6 Gbps, paper 9.9: cause not found."\n'
        '[[reason]]\nentry = "tcn-buffer"\nclaim = "enq_peak"\nscale = "quick"\ncategory = "scale"\ntext = "x"\n')
    md = tmp_path / "R.md"
    manifests, claims = regenerate(root, md, ids=ids)
    row = next(line for line in md.read_text().splitlines() if line.startswith("| ecnsharp-sched | quick | "))
    assert "**Why not shown (unexplained: a difference ecnlab cannot explain): ECN# 9.6 Gbps, paper 9.9: " \
           "cause not found.**" in row
    assert "Why not shown (unexplained" in (root / "quick" / "ecnsharp-sched" / "report.html").read_text()
    assert reasons_problems(load_reasons(root), claims, scales) == [
        "tcn-buffer/enq_peak/quick: a reason, but the claim is shown or absent"]

    (root / REASONS).write_text('[[reason]]\nentry = "a"\nclaim = "b"\nscale = "quick"\ncategory = "noise"\ntext = "x"\n')
    with pytest.raises(ScenarioError, match=r"reasons.toml: reason\[0\].category: 'noise' is not one of cannot-hold"):
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
    import re

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
