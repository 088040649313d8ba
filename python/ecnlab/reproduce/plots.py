"""Figure and table helpers shared by the catalog entries (matplotlib, Agg backend)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

FCT_PANELS = [
    ("fct_all_avg_us", "(a) overall: avg"),
    ("fct_small_avg_us", "(b) (0, 100KB]: avg"),
    ("fct_small_p99_us", "(c) (0, 100KB]: 99th pct"),
    ("fct_large_avg_us", "(d) (10MB, inf): avg"),
]

STYLE = {
    "per_queue": dict(color="#1f77b4", marker="s", label="per-queue ECN (std K)"),
    "per_port": dict(color="#9467bd", marker="v", label="per-port ECN"),
    "tcn": dict(color="#d62728", marker="o", label="TCN"),
    "codel": dict(color="#2ca02c", marker="^", label="CoDel"),
    "mq_ecn": dict(color="#ff7f0e", marker="D", label="MQ-ECN"),
    "ideal": dict(color="#8c564b", marker="x", label="ideal ECN/RED"),
    "dequeue_red": dict(color="#17becf", marker="P", label="dequeue ECN/RED"),
    "ecn_sharp": dict(color="#d62728", marker="o", label="ECN#"),
    "tail": dict(color="#1f77b4", marker="s", label="DCTCP-RED-Tail"),
    "avg": dict(color="#ff7f0e", marker="D", label="DCTCP-RED-AVG"),
    "dcqcn": dict(color="#1f77b4", marker="s", label="DCQCN"),
    "dcqcn_ecn_sharp": dict(color="#d62728", marker="o", label="DCQCN + ECN#"),
    "pias": dict(color="#1f77b4", marker="s", label="PIAS"),
    "pias_ecn_sharp": dict(color="#d62728", marker="o", label="PIAS + ECN#"),
}


@dataclass(frozen=True)
class Quote:
    """A number the paper's text quotes for an FCT-vs-load figure: ``pct`` percent lower than
    the figure's baseline at ``load`` (a star), or, where the text gives no load ("up to X %
    lower"), the best point of the paper's curve (a dotted line its curve touches). The
    claim's paper number and the figure both read it, so the two cannot disagree."""

    pct: float
    load: float | None = None

    @property
    def normalized(self) -> float:
        return 1 - self.pct / 100


PAPER_STAR = dict(color="k", marker="*", ms=11, ls="none", label="paper (text)")


def style(name: str) -> dict[str, Any]:
    return dict(STYLE.get(name, dict(label=name, marker="o")))


def mean_table(df, index: str, column: str, metric: str):
    """Mean of ``metric`` over seeds, as a table index x column."""
    d = df[[index, column, metric]].copy()
    d[metric] = d[metric].astype(float)
    return d.groupby([index, column])[metric].mean().unstack(column).sort_index()


def normalized(df, index: str, column: str, metric: str, baseline: str):
    """``mean_table`` divided by the baseline column (the paper's way of drawing FCT)."""
    t = mean_table(df, index, column, metric)
    if baseline not in t.columns:
        return t * float("nan")
    return t.div(t[baseline], axis=0)


def fct_vs_load(ctx, name: str, caption: str, df, scheme_col: str, baseline: str, schemes: Sequence[str],
                load_col: str = "load", panels=FCT_PANELS, labels: dict[str, str] | None = None,
                quotes: dict[str, Quote] | None = None) -> dict[str, Any]:
    """Four panels of FCT normalized to ``baseline`` against load (the papers' Figs. 6-14
    style); ``quotes``: the paper's numbers for some panels' metrics, drawn as stars.
    Returns {metric: normalized table}."""
    tables = {}
    with ctx.figure(name, caption, ncols=len(panels), size=(3.3 * len(panels) + 0.5, 3.1)) as (fig, axes):
        for ax, (metric, title) in zip(axes[0], panels):
            t = normalized(df, load_col, scheme_col, metric, baseline)
            tables[metric] = t
            for s in schemes:
                if s in t.columns:
                    st = style(s)
                    if labels and s in labels:
                        st["label"] = labels[s]
                    ax.plot([100 * x for x in t.index], t[s].values, **st)
            q = (quotes or {}).get(metric)
            if q is not None and q.load is not None:
                ax.plot([100 * q.load], [q.normalized], **PAPER_STAR)
            elif q is not None:
                ax.axhline(q.normalized, color="k", ls=":", lw=1.2, label="paper: best point (load not quoted)")
            ax.set_title(title, fontsize=10)
            ax.set_xlabel("load (%)")
            ax.grid(alpha=0.3)
        axes[0][0].set_ylabel(f"FCT normalized to {style(baseline)['label'] if not labels or baseline not in labels else labels[baseline]}",
                              fontsize=9)
        handles = {}
        for ax in axes[0]:  # one legend for every panel's lines, the paper's star included
            for h, lab in zip(*ax.get_legend_handles_labels()):
                handles.setdefault(lab, h)
        axes[0][-1].legend(handles.values(), handles.keys(), fontsize=8)
    return tables


def max_reduction(tables, metric: str, scheme: str, baseline_is_one: bool = True):
    """Largest reduction (percent) of ``scheme`` vs the baseline over loads, and the load."""
    t = tables[metric]
    if scheme not in t.columns:
        return None, None
    red = (1 - t[scheme]) * 100
    red = red.dropna()
    if red.empty:
        return None, None
    i = red.idxmax()
    return float(red.loc[i]), float(i)


def max_deviation(tables, metric: str, scheme: str):
    t = tables[metric]
    if scheme not in t.columns:
        return None, None
    dev = ((t[scheme] - 1) * 100).dropna()
    if dev.empty:
        return None, None
    i = dev.abs().idxmax()
    return float(dev.loc[i]), float(i)


def cdf_xy(values):
    import numpy as np

    v = np.sort(np.asarray(values, dtype=float))
    if v.size == 0:
        return v, v
    return v, np.arange(1, v.size + 1) / v.size
