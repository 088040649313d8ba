"""Claims as rows (a paper's Number, a rule over a reader) and their two verdicts, direction
and magnitude, from one stated rule (ecnlab/reproduce/rules.py): judged on the seeds' 95 %
interval at the paper's point, or where the rule picks; undecided where the interval
straddles; the note written from the same numbers."""

import pandas as pd
import pytest

from ecnlab.reproduce import CATALOG
from ecnlab.reproduce.base import ClaimDef, Context, Experiment, SavedRuns
from ecnlab.reproduce.judge import judge
from ecnlab.reproduce.numbers import Number
from ecnlab.reproduce.rules import (BAND, At, AtLeast, Direction, Fct, Grows, Near, Reduction, Within, Zero)
from ecnlab.reproduce.evaluate import evaluate
from ecnlab.reproduce.tables import fct_table


def _n(value, unit="% lower", at=None, quote="up to X % lower", precision=0.0):
    return Number(id="x", paper="p", value=value, unit=unit, section="§1", quote=quote, at=at, precision=precision)


def _rows(gains: dict[int, dict[float, float]]):
    """Per seed and load, a scheme whose small flows are ``gain`` % faster than the base's."""
    rows = []
    for seed, by_load in gains.items():
        for load, gain in by_load.items():
            for s, f in (("base", 100.0), ("new", 100.0 * (1 - gain / 100))):
                rows.append({"scheme": s, "load": load, "seed": seed, "key": f"{s}-{load}-{seed}", "status": "ok",
                             "fct_small_avg_us": f, "fct_small_p99_us": 500.0, "fct_all_avg_us": 1000.0,
                             "fct_large_avg_us": 1e5 * (1.02 if s == "new" else 1.0)})
    return pd.DataFrame(rows)


def _exp(claims):
    def tables(ctx):
        return {"fct": fct_table(ctx.df, "base", "the baseline", "web search"),
                "value": float(ctx.df["fct_small_avg_us"].mean())}

    return Experiment(id="test-claims", paper="p", figures="-", title="t", claims=claims,
                      points=lambda scale, seeds: [], tables=tables)


def _judge(claims, gains):
    exp = _exp(claims)
    ctx = Context(exp, None, _rows(gains), "quick", sorted(gains), SavedRuns(exp, {}), record=False)
    return {k: c.as_dict() for k, c in evaluate(exp, ctx, {}).items()}


RED = Reduction(Fct("fct", "fct_small_avg_us", "new"))


def test_magnitude_is_the_papers_value_plus_minus_the_band_on_the_seeds_interval():
    # 40 % at 0.9 on three seeds: inside 30-50 % (40 ± 25 %): shown; 20 %: outside: not shown.
    c = _judge([ClaimDef("a", "up to", _n(40.0, at={"load": 0.9}), RED)],
               {s: {0.5: 10.0, 0.9: 40.0 + s / 10} for s in (1, 2, 3)})["a"]
    assert (c["direction"], c["magnitude"], c["status"]) == ("shown", "shown", "shown")
    assert c["band"] == [30.0, 50.0] and c["at"] == "at load 90% (the paper's point)"
    assert c["ecnlab"] == pytest.approx(40.2) and len(c["ci95"]) == 2 and [p["seed"] for p in c["per_seed"]] == [1, 2, 3]
    c = _judge([ClaimDef("a", "up to", _n(40.0, at={"load": 0.9}), RED)], {s: {0.9: 20.0 + s} for s in (1, 2, 3)})["a"]
    assert (c["direction"], c["magnitude"], c["status"]) == ("shown", "not shown", "not shown")
    # Seeds whose interval straddles the band's edge (29 % +- 4): undecided, more seeds decide.
    c = _judge([ClaimDef("a", "up to", _n(40.0, at={"load": 0.9}), RED)],
               {1: {0.9: 26.0}, 2: {0.9: 29.0}, 3: {0.9: 32.0}})["a"]
    assert (c["magnitude"], c["status"]) == ("undecided", "undecided")
    # The direction straddles 0: undecided too.
    c = _judge([ClaimDef("a", "up to", _n(40.0, at={"load": 0.9}), RED)],
               {1: {0.9: -5.0}, 2: {0.9: 1.0}, 3: {0.9: 6.0}})["a"]
    assert c["direction"] == "undecided" and c["status"] in ("undecided", "not shown")
    assert BAND == 0.25


def test_up_to_is_judged_at_the_papers_point_and_at_ecnlabs_largest():
    gains = {s: {0.5: 41.0, 0.9: 10.0} for s in (1, 2)}
    c = _judge([ClaimDef("a", "up to", _n(40.0, at={"load": 0.9}), RED)], gains)["a"]
    assert c["status"] == "not shown" and c["at"] == "at load 90% (the paper's point)"
    assert c["best"]["at"] == 0.5 and c["best"]["magnitude"] == "shown" and "at load 50% (ecnlab's largest)" in c["note"]
    # Without the paper's point: ecnlab's largest.
    c = _judge([ClaimDef("a", "up to", _n(40.0), RED)], gains)["a"]
    assert c["status"] == "shown" and c["at"] == "at load 50% (ecnlab's largest)" and "best" not in c
    # The paper's point absent from this scale's grid: not evaluated, saying so.
    c = _judge([ClaimDef("a", "up to", _n(40.0, at={"load": 0.8}), RED)], gains)["a"]
    assert c["status"] == "not evaluated" and "the paper's point (load 0.8) is not in this scale's grid" in c["note"]


def test_within_near_bounds_zero_direction_and_grows():
    gains = {s: {0.5: 10.0, 0.9: 40.0} for s in (1, 2)}
    within = Within(Fct("fct", "fct_large_avg_us", "new", "deviation"))
    c = _judge([ClaimDef("w", "within", _n(2.8, "%"), within), ClaimDef("t", "within", _n(1.0, "%"), within)],
               gains)
    assert (c["w"]["magnitude"], c["w"]["direction"], c["w"]["band"]) == ("shown", "n/a", [0.0, 3.5])
    assert c["t"]["magnitude"] == "not shown"  # 2 % off, the paper's 1 % x 1.25
    value = At(("value",), "mean small FCT")
    c = _judge([ClaimDef("near", "about", _n(75.0, "us"), Near(value)),
                ClaimDef("least", "more than", _n(60.0, "us"), AtLeast(value)),
                ClaimDef("zero", "none", _n(0.0, "packets"), Zero(value)),
                ClaimDef("dir", "above", _n(0.0, "direction"), Direction(value, reference_value=50.0))], gains)
    assert c["near"]["status"] == "shown" and c["least"]["status"] == "shown" and c["least"]["band"][0] == 45.0
    assert c["zero"]["status"] == "not shown" and (c["dir"]["direction"], c["dir"]["magnitude"]) == ("shown", "n/a")
    # A quantity bounded by 1 is judged by its shortfall from 1: 0.74 is not "about 0.98".
    grows = Grows(At(("hi",), "hi"), low=At(("lo",), "lo"), low_number=_n(10.0))
    exp = _exp([ClaimDef("u", "about", _n(0.98, "utilization"), Near(At(("u",), "u"))),
                ClaimDef("g", "from 10 to 30", _n(30.0), grows)])
    data = {1: {"u": 0.74, "hi": 30.1, "lo": 10.1}, 2: {"u": 0.97, "hi": 29.9, "lo": 9.9},
            3: {"u": 0.9, "hi": 30.0, "lo": 10.0}}
    u = judge(exp.claims[0], {"u": 0.74}, {1: data[1]})
    assert u.magnitude == "not shown" and u.band[0] == pytest.approx(0.975)
    g = judge(exp.claims[1], data[1], data)
    assert (g.direction, g.magnitude, g.status) == ("shown", "shown", "shown")


def test_the_note_is_written_from_the_same_numbers():
    c = _judge([ClaimDef("a", "up to", _n(40.0, at={"load": 0.9}), RED)], {s: {0.9: 40.0} for s in (1, 2)})["a"]
    assert c["note"].startswith("web search: new's small-flow avg FCT, % lower than the baseline at load 90% "
                                "(the paper's point): 40")
    assert "magnitude shown (band 30 to 50: the paper's up to 40 % lower ±25 %)" in c["note"]
    assert c["paper"] == 40.0 and c["quote"] == "up to X % lower" and c["section"] == "§1"


def test_changing_the_rule_judges_again_without_a_run(monkeypatch):
    """A rule is data: the band changed, the same saved rows give another verdict, nothing runs."""
    import ecnlab.reproduce.rules as rules

    claims = [ClaimDef("a", "up to", _n(40.0, at={"load": 0.9}), RED)]
    gains = {s: {0.9: 25.0 + s / 10} for s in (1, 2, 3)}
    assert _judge(claims, gains)["a"]["magnitude"] == "not shown"
    monkeypatch.setattr(rules, "BAND", 0.5)
    c = _judge(claims, gains)["a"]
    assert c["magnitude"] == "shown" and c["band"] == [20.0, 60.0]


def test_catalog_claims_are_rows_with_numbers_and_the_figures_draw_them():
    from ecnlab.reproduce.tables import quotes_of

    for exp in CATALOG.values():
        for c in exp.claims:
            assert hasattr(c.rule, "of") and c.number is not None, (exp.id, c.id)
    iso = CATALOG["tcn-isolation"]
    q = quotes_of(iso, "dwrr")
    assert q["fct_small_avg_us"] is next(c.number for c in iso.claims if c.id == "small_avg_dwrr")
    assert q["fct_small_avg_us"].at == {"load": 0.9} and q["fct_small_avg_us"].point_from
    # tcn-priority's "up to 84 %" is TCN against CoDel under SP/WFQ (§6.1.3), not per-queue ECN.
    prio = {c.id: c for c in CATALOG["tcn-priority"].claims}
    assert prio["codel_p99_sp_wfq"].rule.of.table == "sp_wfq-vs-codel" and prio["codel_p99_sp_wfq"].number.value == 84
    assert "small_p99_sp_wfq" not in prio
