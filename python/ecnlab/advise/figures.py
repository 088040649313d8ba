"""The advice's figures, each read at a glance: every axis with its unit; a scheme's
thresholds on an axis of their own unit (one panel per scheme, never a unitless factor
joining schemes); queues in order with the strict ones named; legends outside the data;
the 95 % intervals of positive quantities drawn on the log scale (``metrics.interval``), so
they never cross zero, and each caption says so."""

from __future__ import annotations

from typing import Any

from ..report.figures import Figures
from . import words

BARS = "Bars: 95 % interval of the mean over seeds, on the log scale (mean x e^(±t s / (mean √n))), so it stays positive."
COLORS = {"tcn": "#1f77b4", "ecn_sharp": "#d62728", "per_queue": "#2ca02c", "red": "#9467bd", "codel": "#8c564b",
          "mq_ecn": "#ff7f0e", "dctcp_red": "#17becf", "dualq": "#7f7f7f"}


def _err(m: dict[str, Any]) -> tuple[float, list[list[float]]] | None:
    if not m or m.get("mean") is None:
        return None
    lo = m["lo"] if m.get("lo") is not None else m["mean"]
    hi = m["hi"] if m.get("hi") is not None else m["mean"]
    return m["mean"], [[m["mean"] - lo], [hi - m["mean"]]]


def _us(text: str) -> str:
    return text.replace(" us", " µs")


def _legend_outside(ax, handles: dict | None = None) -> None:
    """The legend to the right of ``ax``, outside the data (the figure's tight layout makes
    room for it)."""
    if handles is None:
        handles = dict(zip(*reversed(ax.get_legend_handles_labels())))
    if handles:
        ax.legend(list(handles.values()), list(handles), loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False,
                  fontsize=8)


def thresholds(figs: Figures, adv: dict[str, Any]) -> None:
    """The ranking metric at each point of each scheme, on the scheme's own threshold axis."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    schemes = [e for e in adv["schemes"] if any(p.get("runs") for p in e.get("points", []))]
    if not schemes:
        return
    metric = adv["validation"]["metric"]["words"]
    seeds = ", ".join(map(str, adv["validation"]["screening_seeds"]))
    caption = (f"Each scheme's points at the screening seeds ({seeds}), on its own threshold axis; ★ its best sound "
               f"point; ✕ a point with an unsound run (never ranked); a dotted line: a point the switch cannot hold "
               f"(not run). " + BARS)
    with figs.figure("check_thresholds", f"{metric} at each threshold", caption, ncols=len(schemes),
                     size=(4.2 * len(schemes) + 0.6, 4.0)) as (fig, axes):
        for ax, e in zip(axes[0], schemes):
            col = COLORS.get(e["scheme"], "k")
            best = (e.get("candidate") or {}).get("label")
            for p in e["points"]:
                x = p["axis"]["value"]
                e_ = _err(p.get("metric"))
                if p.get("not_run"):
                    ax.axvline(x, color="0.75", ls=":", lw=1.2)
                elif p.get("sound") and e_:
                    star = p["label"] == best
                    ax.errorbar([x], [e_[0]], yerr=e_[1], fmt="*" if star else "o", ms=13 if star else 6, color=col,
                                capsize=3, label="best sound point" if star else "sound point")
                else:
                    ax.plot([x], [0.03], "x", color="0.35", ms=9, mew=2, transform=ax.get_xaxis_transform(),
                            label="unsound (not ranked)")
            ax.set_xscale("log", base=2)
            xs = [p["axis"]["value"] for p in e["points"]]
            ax.set_xticks(xs)
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: words.number(v)))
            ax.xaxis.set_minor_formatter(NullFormatter())
            ax.set_xlabel(f"{e['points'][0]['axis']['symbol']} ({e['points'][0]['axis']['unit']})")
            ax.set_ylabel(f"{metric} (µs)")
            ax.set_title(e["name"])
        lo = min(ax.get_ylim()[0] for ax in axes[0] if ax.has_data())
        hi = max(ax.get_ylim()[1] for ax in axes[0] if ax.has_data())
        for ax in axes[0]:
            ax.set_ylim(lo, hi)  # one scale for every scheme: compared at a glance
        handles = {}
        for ax in axes[0]:
            for h, lab in zip(*ax.get_legend_handles_labels()):
                handles.setdefault(lab, h)
        _legend_outside(axes[0][-1], handles)


def _oriented(hist: list[dict[str, Any]], final: str | None) -> dict[str, list[tuple[int, float, float, float]]]:
    """Each pair's log-ratio interval over the race, as (other vs the final leader): a step
    led by the other of the pair is turned round (the log ratio changes sign)."""
    series: dict[str, list[tuple[int, float, float, float]]] = {}
    for h in hist:
        for s, d in h["others"].items():
            lr, lead = d["log_ratio"], h["leader"]
            if lr["lo"] is None or lr["mean"] != lr["mean"]:
                continue
            if s == final:  # the final leader trailed at this step: turn the pair round
                s, lead, lr = lead, final, {"mean": -lr["mean"], "lo": -lr["hi"], "hi": -lr["lo"]}
            series.setdefault(f"{words.name(s)} vs {words.name(lead)}", []).append(
                (h["seeds"], lr["mean"], lr["lo"], lr["hi"]))
    return series


def race(figs: Figures, adv: dict[str, Any]) -> None:
    """The paired difference to the leader as seeds were added, with the ±2 % band."""
    import math

    hist = adv["validation"]["race"]
    if not hist or not any(h["others"] for h in hist):
        return
    metric = adv["validation"]["metric"]["words"]
    final = (adv.get("recommendation") or {}).get("scheme") or hist[-1]["leader"]
    caption = (f"After each batch of paired seeds: how much higher each other candidate's {metric} is than "
               f"{words.name(final)}'s, with its 95 % interval (Student's t on the per-seed log ratios). A candidate "
               "is out once its interval lies above zero; the race stops there, or when every one left lies within "
               "the shaded ±2 % (equivalent), or when the budget is spent.")
    with figs.figure("check_race", "The race: difference to the leader", caption, size=(7.2, 4.2)) as (fig, axes):
        ax = axes[0][0]
        pct = lambda x: 100 * math.expm1(x)  # noqa: E731
        for lab, pts in sorted(_oriented(hist, final).items()):
            n = [x[0] for x in pts]
            line = ax.plot(n, [pct(x[1]) for x in pts], "o-", label=lab, ms=3)[0]
            ax.fill_between(n, [pct(x[2]) for x in pts], [pct(x[3]) for x in pts], alpha=0.2, color=line.get_color())
        ax.axhspan(-2, 2, color="0.85", zorder=0, label="±2 % (equivalent)")
        ax.axhline(0, color="k", lw=0.8)
        from matplotlib.ticker import MaxNLocator

        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("paired seeds")
        ax.set_ylabel(f"above {words.name(final)}'s (%)")
        _legend_outside(ax)


def _queue_label(q: str, adv: dict[str, Any]) -> str:
    net = adv["network"]
    tag = " (strict)" if int(q) in net["strict_queues"] else "" if int(q) in net["ecn_queues"] else " (no ECN)"
    return f"q{q}{tag}"


def _compared(adv: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    rec = adv["recommendation"]
    out = [(rec["scheme"], rec["label"], rec["metrics"])]
    if rec.get("versus"):
        out.append((rec["versus"]["scheme"], rec["versus"]["label"], rec["versus"]["metrics"]))
    return out


def per_queue(figs: Figures, adv: dict[str, Any]) -> None:
    """Small flows' average and p99 FCT and p99 slowdown per queue, the recommendation against
    its closest rival."""
    if not adv.get("recommendation"):
        return
    comp = _compared(adv)
    if not any(m.get("by_queue") for _, _, m in comp):
        return
    queues = [str(q) for q in range(adv["network"]["queues"])]
    panels = [("avg_us", "small flows: average FCT (µs)"), ("p99_us", "small flows: p99 FCT (µs)"),
              ("slowdown_p99", "small flows: p99 slowdown (×)")]
    with figs.figure("queues", "Small flows per queue", "Every queue in order, the strict ones named; no bar: no "
                     "small flow in that queue. " + BARS, ncols=3, size=(14, 4.2)) as (fig, axes):
        width = 0.8 / len(comp)
        for ax, (key, ylab) in zip(axes[0], panels):
            for i, (scheme, label, m) in enumerate(comp):
                for j, q in enumerate(queues):
                    e = _err(m.get("by_queue", {}).get(q, {}).get("small", {}).get(key))
                    if e:
                        ax.bar(j + (i - (len(comp) - 1) / 2) * width, e[0], width, yerr=e[1], capsize=2,
                               color=COLORS.get(scheme, "k"), alpha=0.85 if i == 0 else 0.5, label=_us(label))
            for j, q in enumerate(queues):
                if not any(m.get("by_queue", {}).get(q, {}).get("small", {}).get(key) for _, _, m in comp):
                    ax.text(j, 0.02, "no small\nflows", ha="center", va="bottom", fontsize=7, color="0.4",
                            transform=ax.get_xaxis_transform())
            ax.set_xticks(range(len(queues)), [_queue_label(q, adv) for q in queues], rotation=30)
            ax.set_xlim(-0.6, len(queues) - 0.4)
            ax.set_ylabel(ylab)
            ax.set_xlabel("queue")
        _legend_outside(axes[0][-1], dict(zip(*reversed(axes[0][0].get_legend_handles_labels()))))


def isolation(figs: Figures, adv: dict[str, Any]) -> None:
    """Each weighted queue's goodput while backlogged over what its weight owes it."""
    if not adv.get("recommendation"):
        return
    comp = _compared(adv)
    places = sorted({k for _, _, m in comp for k in m.get("isolation", {})},
                    key=lambda k: (k.rsplit(" queue ", 1)[0], int(k.rsplit(" ", 1)[-1])))
    if not places:
        return
    caption = ("Goodput of each weighted queue while it was backlogged, over what its weight owes it then (the "
               "soundness guard's share rule: its share of what the strict queues leave); 1 is exactly its due, "
               "below 0.9 the guard calls the run unsound. " + BARS)
    with figs.figure("isolation", "Isolation: each weighted queue's service against its due", caption,
                     size=(max(6.0, 0.7 * len(places) + 2), 4.4)) as (fig, axes):
        ax = axes[0][0]
        width = 0.8 / len(comp)
        for i, (scheme, label, m) in enumerate(comp):
            for j, k in enumerate(places):
                e = _err(m.get("isolation", {}).get(k))
                if e:
                    ax.bar(j + (i - (len(comp) - 1) / 2) * width, e[0], width, yerr=e[1], capsize=2,
                           color=COLORS.get(scheme, "k"), alpha=0.85 if i == 0 else 0.5, label=_us(label))
        ax.axhline(1.0, color="k", lw=0.8)
        ax.axhline(0.9, color="0.5", ls="--", lw=0.8, label="guard's bound (0.9)")
        ax.set_xticks(range(len(places)), [p.replace(" queue ", "\nq") for p in places], fontsize=8)
        ax.set_ylabel("served / owed while backlogged (ratio)")
        ax.set_xlabel("port, queue")
        _legend_outside(ax)


def probes(figs: Figures, adv: dict[str, Any]) -> None:
    """The probes' RTT (what a ping sees) under each scheme's best point."""
    rows = [(e["scheme"], e["candidate"]["label"], e["candidate_metrics"].get("probe_rtt_us", {}))
            for e in adv["schemes"] if e.get("candidate") and e.get("candidate_metrics")]
    rows = [r for r in rows if r[2].get("avg")]
    if not rows:
        return
    with figs.figure("probe_rtt", "Probe RTT under each scheme's best point", f"Probes: {adv['network']['probes']}; "
                     "their RTT's average (solid) and 99th percentile (hatched). " + BARS,
                     size=(6.4, 4.2)) as (fig, axes):
        ax = axes[0][0]
        for i, (scheme, label, m) in enumerate(rows):
            for j, key in enumerate(("avg", "p99")):
                e = _err(m.get(key))
                if e:
                    ax.bar(i + (j - 0.5) * 0.4, e[0], 0.4, yerr=e[1], capsize=2, color=COLORS.get(scheme, "k"),
                           alpha=0.9 if key == "avg" else 0.5, hatch=None if key == "avg" else "//")
        ax.set_xticks(range(len(rows)), [_us(label) for _, label, _ in rows], rotation=15, fontsize=8)
        ax.set_ylabel("probe RTT (µs): solid average, hatched p99")
        ax.set_xlabel("scheme, best point")


def drops(figs: Figures, adv: dict[str, Any]) -> None:
    """Where packets were dropped (switch port and queue, or a host NIC), per scheme's best point."""
    rows = [(e["scheme"], e["candidate"]["label"], e["candidate_metrics"].get("drops", {}))
            for e in adv["schemes"] if e.get("candidate") and e.get("candidate_metrics")]
    places = sorted({k for _, _, d in rows for k in d.get("at", {})
                     if any((d2.get("at", {}).get(k) or {}).get("mean") for _, _, d2 in rows)})
    if not places:
        return  # the report says there was none
    with figs.figure("drops", "Drops and where they happened", "Mean drops per run at each place (switch port and "
                     "queue, or a host NIC) under each scheme's best point; no bar: no drop there. " + BARS,
                     size=(max(6.4, 0.6 * len(places) + 3), 4.2)) as (fig, axes):
        ax = axes[0][0]
        width = 0.8 / len(rows)
        for i, (scheme, label, d) in enumerate(rows):
            for j, k in enumerate(places):
                e = _err(d.get("at", {}).get(k))
                if e and e[0] > 0:
                    ax.bar(j + (i - (len(rows) - 1) / 2) * width, e[0], width, yerr=e[1], capsize=2,
                           color=COLORS.get(scheme, "k"), label=_us(label))
        ax.set_xticks(range(len(places)), places, rotation=20, fontsize=8)
        ax.set_ylabel("drops per run (packets)")
        ax.set_xlabel("place")
        _legend_outside(ax)


def draw(figs: Figures, adv: dict[str, Any]) -> None:
    for f in (thresholds, race, per_queue, isolation, drops, probes):
        f(figs, adv)
