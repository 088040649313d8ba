"""Figure helpers shared by the catalog entries (matplotlib, Agg backend). They draw the
analysis data (``tables``) and compute nothing a claim reads."""

from __future__ import annotations

from typing import Any, Sequence

from .tables import FctTable

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


PAPER_STAR = dict(color="k", marker="*", ms=11, ls="none", label="paper (text)")


def style(name: str) -> dict[str, Any]:
    return dict(STYLE.get(name, dict(label=name, marker="o")))


def fct_vs_load(ctx, name: str, caption: str, table: FctTable, schemes: Sequence[str], panels=FCT_PANELS,
                labels: dict[str, str] | None = None) -> None:
    """Four panels of FCT normalized to the table's baseline against load (the papers' Figs.
    6-14 style); the table's ``quotes`` (the paper's ``Number``s its claims read) drawn as
    stars, or dotted where the paper gives no load."""
    with ctx.figure(name, caption, ncols=len(panels), size=(3.3 * len(panels) + 0.5, 3.1)) as (fig, axes):
        for ax, (metric, title) in zip(axes[0], panels):
            t = table.norm[metric]
            for s in schemes:
                if s in t.columns:
                    st = style(s)
                    if labels and s in labels:
                        st["label"] = labels[s]
                    ax.plot([100 * x for x in t.index], t[s].values, **st)
            q = table.quotes.get(metric)  # a Number: "X % lower" than the baseline, at a load or "up to"
            if q is not None and (q.at or {}).get("load") is not None:
                ax.plot([100 * q.at["load"]], [1 - q.value / 100], **PAPER_STAR)
            elif q is not None:
                ax.axhline(1 - q.value / 100, color="k", ls=":", lw=1.2, label="paper: best point (load not quoted)")
            ax.set_title(title, fontsize=10)
            ax.set_xlabel("load (%)")
            ax.grid(alpha=0.3)
        baseline = table.baseline
        axes[0][0].set_ylabel(f"FCT normalized to {style(baseline)['label'] if not labels or baseline not in labels else labels[baseline]}",
                              fontsize=9)
        handles = {}
        for ax in axes[0]:  # one legend for every panel's lines, the paper's star included
            for h, lab in zip(*ax.get_legend_handles_labels()):
                handles.setdefault(lab, h)
        axes[0][-1].legend(handles.values(), handles.keys(), fontsize=8)


def cdf_xy(values):
    import numpy as np

    v = np.sort(np.asarray(values, dtype=float))
    if v.size == 0:
        return v, v
    return v, np.arange(1, v.size + 1) / v.size
