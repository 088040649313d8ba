"""Declared claims: a claim's words, paper number, what it reads and its rule are written
once (``ClaimDef``), judged by one evaluator (``base.judge_claims``) on the data an entry's
analysis returns, and the figures draw the same paper constants."""

import pandas as pd
import pytest

from ecnlab.reproduce import CATALOG
from ecnlab.reproduce.base import (At, ClaimDef, Context, Experiment, Near, Over, Quote, Unavailable, UpTo, Verdict,
                                   Within, quotes_of)
from ecnlab.reproduce.tables import fct_table

PAPER_Q = Quote(40.0)  # "up to 40 % lower", no load quoted


def _rows():
    """Two loads, a baseline and a scheme: at 0.5 the scheme's small flows are 10 % faster,
    at 0.9 30 % faster; its overall FCT is 3 % slower at 0.9; large flows equal."""
    rows = []
    for load, small, overall in ((0.5, 0.9, 1.0), (0.9, 0.7, 1.03)):
        for s, f in (("base", 1.0), ("new", None)):
            rows.append({"scheme": s, "load": load, "seed": 1, "key": f"{s}{load}", "status": "ok",
                         "fct_small_avg_us": 100.0 * (f or small), "fct_small_p99_us": 500.0,
                         "fct_all_avg_us": 1000.0 * (f or overall), "fct_large_avg_us": 1e5,
                         "timeouts": 2, "drops": 7, "flows_unfinished": 0})
    return pd.DataFrame(rows)


def _experiment(claims, extra=None):
    def tables(ctx):
        data = {"fct": fct_table(ctx.df, "base", "the baseline", "web search", quotes_of(ctx.exp, "fct"),
                                 diagnose=True),
                "peak": {"new": 380.0}, "missing": Unavailable("no such runs at this scale")}
        return data | (extra or {})

    drawn = []
    exp = Experiment(id="test-declared", paper="p", figures="-", title="t", claims=claims,
                     points=lambda scale, seeds: [], tables=tables, draw=lambda ctx, data: drawn.append(data))
    return exp, drawn


def _judge(exp, tmp_path, record=False):
    ctx = Context(exp, tmp_path, _rows(), "quick", [1], record=record)
    exp.analyze(ctx)
    return ctx.claims


def test_up_to_within_and_near_are_judged_from_the_declarations(tmp_path):
    exp, drawn = _experiment([
        ClaimDef("small", "small flows up to X % faster", PAPER_Q, UpTo(Over("fct", "fct_small_avg_us", "new"))),
        ClaimDef("overall", "overall within X %", 1.0, Within(Over("fct", "fct_all_avg_us", "new"))),
        ClaimDef("similar", "overall similar", "similar", Within(Over("fct", "fct_all_avg_us", "new"))),
        ClaimDef("peak", "peak ~375 KB", 375, Near(At(("peak", "new"), "peak of {fct.tag} (KB)", {"scheme": ["new"]}))),
        ClaimDef("custom", "its own logic", "> 1", lambda data, paper: Verdict(2.0, True, f"custom vs {paper}")),
    ])
    c = _judge(exp, tmp_path)
    assert c["small"].paper == 40.0 and c["small"].ecnlab == pytest.approx(30.0) and c["small"].status == "shown"
    assert c["small"].note == ("web search: largest reduction (%) of new vs the baseline over loads (at load 90%); "
                               "rule: shown if ecnlab's value has the paper's sign and at least half its size")
    # 3 % off against a 1 % paper number: band max(2 x 1, 5) = 5 %, shown; the note names the band.
    assert c["overall"].ecnlab == pytest.approx(3.0) and c["overall"].status == "shown"
    assert c["overall"].note == ("web search: largest deviation (%) of new from the baseline over loads (at load 90%); "
                                 "rule: shown if |deviation| <= 5 %")
    assert c["similar"].status == "shown" and c["similar"].note.endswith("rule: shown if |deviation| <= 5 %")
    assert c["peak"].ecnlab == 380.0 and c["peak"].status == "shown" and c["peak"].rests_on == {"scheme": ["new"]}
    assert c["peak"].note == "peak of web search (KB); rule: shown if within ±25 % of the paper"
    assert (c["custom"].ecnlab, c["custom"].status, c["custom"].note) == (2.0, "shown", "custom vs > 1")
    assert drawn == []  # the per-seed pass (record=False) judges without drawing


def test_a_missed_within_says_what_the_runs_went_through_and_absent_data_is_not_judged(tmp_path):
    exp, drawn = _experiment([
        ClaimDef("tight", "overall within X %", 0.5, Within(Over("fct", "fct_all_avg_us", "new"), floor=2.0)),
        ClaimDef("gone", "a table this run has not", 10.0, UpTo(Over("nope", "fct_small_avg_us", "new"))),
        ClaimDef("why", "a scale without the runs", 10.0, UpTo(At(("missing", "x"), "x"))),
        ClaimDef("none", "a value that is None", 10.0, UpTo(At(("none",), "the value")), ),
    ], extra={"none": None})
    c = _judge(exp, tmp_path, record=True)
    assert c["tight"].status == "not shown"
    assert c["tight"].note.endswith("rule: shown if |deviation| <= 2 %; at load 90%: base: 2 timeouts, 7 drops, "
                                    "0 unfinished; new: 2 timeouts, 7 drops, 0 unfinished")
    assert (c["gone"].status, c["gone"].note) == ("not evaluated", "")
    assert (c["why"].status, c["why"].note) == ("not evaluated", "no such runs at this scale")
    assert (c["none"].status, c["none"].note) == ("not shown", "the value; no value")
    assert len(drawn) == 1 and set(drawn[0]) >= {"fct", "peak"}  # the figures draw the data the claims read


def test_a_claims_quote_is_the_one_its_figure_draws(tmp_path):
    """One constant per quoted number: the claim declares it, the table (and so the figure's
    star or dotted line) carries the same object; a different Quote of equal value is refused."""
    exp, drawn = _experiment([ClaimDef("small", "up to X %", PAPER_Q, UpTo(Over("fct", "fct_small_avg_us", "new")))])
    _judge(exp, tmp_path, record=True)
    assert drawn[0]["fct"].quotes["fct_small_avg_us"] is PAPER_Q

    def other_quote(ctx):
        return {"fct": fct_table(ctx.df, "base", "b", "t", {"fct_small_avg_us": Quote(40.0)})}

    exp.tables = other_quote
    with pytest.raises(ValueError, match="not the Quote its figure draws"):
        _judge(exp, tmp_path)


def test_catalog_claims_are_all_declared_and_their_quotes_are_drawn(tmp_path):
    from ecnlab.reproduce.tcn import ISO_PAPER, LS_QUOTES

    for exp in CATALOG.values():
        assert exp.tables is not None, exp.id  # analysis (data), then claims, then figures
        for c in exp.claims:
            assert c.rule is not None, (exp.id, c.id)
            if isinstance(c.paper, Quote) and isinstance(c.rule, (UpTo, Within)) and isinstance(c.rule.of, Over):
                assert quotes_of(exp, c.rule.of.table)[c.rule.of.metric] is c.paper, (exp.id, c.id)
    iso = {c.id: c.paper for c in CATALOG["tcn-isolation"].claims}
    assert iso["small_p99_wfq"] is ISO_PAPER["wfq"]["small_p99"] and iso["codel_p99_dwrr"] is ISO_PAPER["dwrr"]["codel_p99"]
    ls = {c.id: c.paper for c in CATALOG["tcn-leafspine"].claims}
    assert ls["small_avg"] is LS_QUOTES["dctcp_sp_dwrr"]["fct_small_avg_us"]

    # The figure of tcn-isolation draws, for each metric, the Quote its claim declares.
    rows = [{"scheduler": "dwrr", "scheme": s, "load": load, "seed": 1, "fct_all_avg_us": 1e3,
             "fct_small_avg_us": 50.0 if s == "tcn" else 100.0, "fct_small_p99_us": 500.0, "fct_large_avg_us": 1e5,
             "status": "ok", "key": "k"} for s in ("per_queue", "mq_ecn", "codel", "tcn") for load in (0.3, 0.9)]
    exp = CATALOG["tcn-isolation"]
    ctx = Context(exp, tmp_path, pd.DataFrame(rows), "quick", [1])
    data = exp.tables(ctx)
    assert data["dwrr"].quotes == {"fct_small_avg_us": ISO_PAPER["dwrr"]["small_avg"],
                                   "fct_small_p99_us": ISO_PAPER["dwrr"]["small_p99"]}
    assert data["dwrr"].quotes["fct_small_avg_us"] is iso["small_avg_dwrr"]
    assert isinstance(data["wfq"], Unavailable)
    exp.analyze(ctx)
    assert ctx.claims["small_avg_dwrr"].ecnlab == pytest.approx(50.0) and ctx.claims["small_avg_dwrr"].paper == 61.4
    assert ctx.claims["small_avg_wfq"].note == "no WFQ runs at this scale"
    assert [f.name for f in ctx.figures] == ["fig6-dwrr", "fig6-dwrr-vs-codel"]
    assert "paper: best point (load not quoted)" in (tmp_path / "figures" / "fig6-dwrr.svg").read_text()


def test_an_entry_gives_tables_or_its_own_analyze():
    with pytest.raises(ValueError, match="either tables"):
        Experiment(id="x", paper="p", figures="-", title="t", claims=[], points=lambda s, n: [])
