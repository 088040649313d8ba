"""The catalog's analysis tables: what the claims are judged on and the figures draw.

An entry's ``tables(ctx)`` reads its runs into these; nothing here draws (``plots``) or
judges (``base.judge_claims``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


def mean_table(df, index: str, column: str, metric: str):
    """Mean of ``metric`` over seeds, as a table index x column."""
    d = df[[index, column, metric]].copy()
    d[metric] = d[metric].astype(float)
    return d.groupby([index, column])[metric].mean().unstack(column).sort_index()


def normalized(df, index: str, column: str, metric: str, baseline: str):
    """``mean_table`` divided by the baseline column (the papers' way of drawing FCT)."""
    t = mean_table(df, index, column, metric)
    if baseline not in t.columns:
        return t * float("nan")
    return t.div(t[baseline], axis=0)


FCT_METRICS = ("fct_all_avg_us", "fct_small_avg_us", "fct_small_p99_us", "fct_large_avg_us")


@dataclass
class FctTable:
    """FCT against load, each metric's mean over seeds normalized to ``baseline`` (the
    papers' Figs. 6-14 and 21-22): ``norm[metric]`` is a load x scheme table.

    ``tag`` and ``base_label`` name the table and its baseline in the claims' notes;
    ``quotes`` are the paper's numbers for some metrics ("X % lower" than the baseline), the
    very ``Number`` objects its claims read (``quotes_of``), drawn on the figure;
    ``runs``: the rows the table was built from; ``keys``: per scheme, the run keys of those rows (what a claim on the table rests on:
    the guard flags it for its own runs only)."""

    norm: dict[str, Any]
    baseline: str
    base_label: str
    tag: str
    quotes: dict[str, Any] = field(default_factory=dict)
    runs: Any = None
    keys: dict[str, list[str]] = field(default_factory=dict)

    def rests_on(self, *schemes: str) -> dict[str, list[str]] | None:
        """The runs of ``schemes`` as ``Context.claim``'s ``rests_on`` (None: unknown, every run)."""
        if not self.keys:
            return None
        return {"key": sorted(k for s in schemes for k in self.keys.get(s, []))}

    def renormalized(self, baseline: str, base_label: str, metrics=None) -> "FctTable":
        """The same table against another of its schemes (the paper's "vs DCTCP-RED-AVG")."""
        metrics = metrics or list(self.norm)
        return FctTable({m: self.norm[m].div(self.norm[m][baseline], axis=0) for m in metrics}, baseline,
                        base_label, self.tag, runs=self.runs, keys=self.keys)


def fct_table(df, baseline: str, base_label: str, tag: str, quotes=None, scheme_col: str = "scheme",
              load_col: str = "load", metrics=FCT_METRICS) -> FctTable:
    """The ``FctTable`` of the rows ``df``."""
    keys = {str(s): [str(k) for k in g["key"]] for s, g in df.groupby(scheme_col)} if "key" in df else {}
    return FctTable({m: normalized(df, load_col, scheme_col, m, baseline) for m in metrics}, baseline, base_label,
                    tag, dict(quotes or {}), df, keys)


def quotes_of(exp, table: str) -> dict[str, Any]:
    """The paper's numbers that ``exp``'s claims read as reductions on the FctTable named
    ``table``, by metric: what its figure draws (the very Numbers the claims are judged on)."""
    from .rules import Fct, Reduction

    return {c.rule.of.metric: c.number for c in exp.claims
            if isinstance(c.rule, Reduction) and isinstance(c.rule.of, Fct) and c.rule.of.table == table
            and c.rule.of.kind == "reduction" and c.number.unit == "% lower"}


def diagnosis(df, load, schemes) -> str:
    """Timeouts, drops and unfinished flows per scheme at one load (mean over seeds): the
    first things to look at when FCTs differ a lot."""
    if df is None or load is None or "load" not in df:
        return ""
    d = df[df["load"] == load]
    parts = []
    for s in schemes:
        x = d[d["scheme"] == s]
        if len(x):
            parts.append(f"{s}: {x['timeouts'].astype(float).mean():.0f} timeouts, {x['drops'].astype(float).mean():.0f} "
                         f"drops, {x['flows_unfinished'].astype(float).mean():.0f} unfinished")
    return f"at load {load:.0%}: " + "; ".join(parts) if parts else ""
