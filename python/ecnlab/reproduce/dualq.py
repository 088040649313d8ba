"""Catalog entries of the dual-AQM paper (Kühlewind, Wagner, Espinosa, Briscoe, "Using
Data Center TCP (DCTCP) in the Internet", 2014; papers/dctcp-internet-dual-aqm.txt)."""

from __future__ import annotations


from ..sweep import override
from .base import ClaimDef, Experiment, Unavailable, Verdict, axis, cases, grid, register

PAPER = "Dual AQM (Kühlewind et al., 2014)"
BDP = 31250  # bytes: 10 Mbps x 25 ms
RATE = 10e6
BOTTLENECK = "s0->s1"
DCTCP_PORT, RENO_PORT = "s1->h2", "s1->h3"  # host 0 (DCTCP) -> 2, host 1 (Reno) -> 3
MSS, WIRE = 1460, 1500


def _b(x: float) -> str:
    return f"{int(round(x))}B"


def _dur(scale):
    return [override("duration", "120s" if scale == "quick" else "600s"), override("metrics.warmup", "20s")]


def _classic(m_bdp: float, max_p: float = 0.1, width_bdp: float | None = None):
    """Reno's RED: min_th = m BDP and max_th = 3 min_th (§IV-A), or min_th + width."""
    mn = m_bdp * BDP
    mx = 3 * mn if width_bdp is None else mn + width_bdp * BDP
    return [override("marking.dualq.classic.min_th", _b(mn)), override("marking.dualq.classic.max_th", _b(mx)),
            override("marking.dualq.classic.max_p", max_p), override("marking.dualq.classic.w", 0.002)]


def _step(k_bytes: float):
    k = _b(k_bytes)
    return [override("marking.dualq.scalable.min_th", k), override("marking.dualq.scalable.max_th", k),
            override("marking.dualq.scalable.max_p", 1.0), override("marking.dualq.scalable.w", 1.0)]


def _slope(min_th: float, max_th: float, max_p: float):
    return [override("marking.dualq.scalable.min_th", _b(min_th)), override("marking.dualq.scalable.max_th", _b(max_th)),
            override("marking.dualq.scalable.max_p", max_p), override("marking.dualq.scalable.w", 0.002)]


def _metrics(df, n_dctcp=None):
    """Add per-run columns: DCTCP and Reno goodput, throughput ratio, utilization,
    occupancy (BDPs), Jain's index of the per-flow goodputs."""
    import numpy as np

    d = df.copy()
    n = d[n_dctcp].astype(float) if n_dctcp else 1.0
    d["dctcp_bps"] = d[f"goodput_bps[{DCTCP_PORT}:0]"].astype(float)
    d["reno_bps"] = d[f"goodput_bps[{RENO_PORT}:0]"].astype(float)
    d["ratio"] = d["reno_bps"] / (d["dctcp_bps"] / n)
    ucol = f"utilization[{BOTTLENECK}]"
    if ucol in d:
        d["util"] = d[ucol].astype(float)
    else:  # payload goodput -> wire bytes
        d["util"] = d[f"goodput_bps[{BOTTLENECK}:0]"].astype(float) * WIRE / MSS / RATE
    d["occ"] = d[f"avg_qlen_bytes[{BOTTLENECK}:0]"].astype(float) / BDP
    x1, x2 = d["dctcp_bps"] / n, d["reno_bps"]
    d["jain"] = (x1 + x2) ** 2 / (2 * (x1 ** 2 + x2 ** 2))
    d["log_ratio"] = np.log(d["ratio"].clip(lower=1e-6))
    return d


def _crossing(xs, log_ratios):
    """Where the log throughput ratio crosses 0, by linear interpolation (first crossing);
    None if it does not."""
    pts = list(zip(xs, log_ratios))
    for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
        if y0 == 0:
            return x0
        if (y0 < 0) != (y1 < 0):
            return x0 + (0 - y0) * (x1 - x0) / (y1 - y0)
    if pts and pts[-1][1] == 0:
        return pts[-1][0]
    return None


def _bracket(s):
    """The two measured settings on either side of the first crossing of the throughput
    ratio through 1 (rows of ``s``, indexed by the swept parameter), nearest-to-1 first;
    None if the ratio does not cross 1. Nothing between them was measured, so nothing is
    interpolated there."""
    xs, ys = list(s.index), list(s["log_ratio"])
    for i, (y0, y1) in enumerate(zip(ys, ys[1:])):
        if y0 == 0 or (y0 < 0) != (y1 < 0):
            a, b = s.iloc[i], s.iloc[i + 1]
            pair = [(xs[i], a), (xs[i + 1], b)]
            return sorted(pair, key=lambda p: abs(p[1]["log_ratio"]))
    if ys and ys[-1] == 0:
        return [(xs[-1], s.iloc[-1]), (xs[-1], s.iloc[-1])]
    return None


# --------------------------------------------------------------------------------------
# dualq-step (Table I, Fig. 5)


_MINTHS = {"1/8": 1 / 8, "1/4": 1 / 4, "1/2": 1 / 2, "3/4": 3 / 4, "1": 1.0}
_TABLE1 = {"1/8": (2.3, 0.98, 0.207), "1/4": (1.73, 0.987, 0.335), "1/2": (1.34, 0.996, 0.548),
           "3/4": (1.26, 0.999, 0.724), "1": (1.16, 1.0, 0.99)}


def _kgrid(scale):
    return [1.0, 1.25, 1.5, 1.75, 2.0, 2.25, 2.5, 2.75, 3.0] if scale == "quick" else \
        [round(1 + 0.1 * i, 2) for i in range(21)]


def _step_points(scale, seeds):
    pts = []
    for name, m in _MINTHS.items():
        pts += grid("dualq-step", seeds, [
            cases("min_th", {name: _classic(m)}),
            axis("k_over_m", _kgrid(scale), lambda r, m=m: _step(r * m * BDP)),
        ], fixed=_dur(scale))
    return pts


def _step_tables(ctx):
    """Per min_th_Reno (mean over seeds, by K / min_th): throughput ratio, utilization,
    occupancy; and the two measured K on either side of equal sharing (``_bracket``)."""
    g = _metrics(ctx.df).groupby(["min_th", "k_over_m"]).mean(numeric_only=True)
    have = set(g.index.get_level_values(0))
    return {"means": g, "bracket": {name: _bracket(g.loc[name]) for name in _MINTHS if name in have}}


def _step_draw(ctx, data):
    g = data["means"]
    with ctx.figure("fig5-step", "Fig. 5: marking step K for DCTCP against K / min_th_Reno: throughput ratio "
                    "Reno/DCTCP, utilization, queue occupancy (BDPs)", ncols=3) as (fig, axes):
        for name in _MINTHS:
            if name not in g.index.get_level_values(0):
                continue
            s = g.loc[name]
            line = axes[0][0].semilogy(s.index, s["ratio"], marker="o", ms=3, label=f"BDP*{name}")[0]
            axes[0][1].plot(s.index, s["util"], marker="o", ms=3)
            axes[0][2].plot(s.index, s["occ"], marker="o", ms=3)
            # Table I: the paper's equal-sharing K/min_th with its utilization and occupancy
            k, u, o = _TABLE1[name]
            axes[0][0].plot([k], [1.0], "*", ms=10, color=line.get_color(), mec="k")
            axes[0][1].plot([k], [u], "*", ms=10, color=line.get_color(), mec="k")
            axes[0][2].plot([k], [o], "*", ms=10, color=line.get_color(), mec="k")
        axes[0][0].plot([], [], "k*", label="paper (Table I)")
        axes[0][0].axhline(1, color="k", ls=":", lw=0.8)
        for ax, t in zip(axes[0], ["throughput ratio Reno/DCTCP", "utilization", "queue occupancy (BDPs)"]):
            ax.set_xlabel("K / min_th_Reno")
            ax.set_title(t, fontsize=10)
            ax.grid(alpha=0.3)
        axes[0][0].legend(fontsize=7, title="min_th_Reno", title_fontsize=7)


def _equal_k(name):
    """min_th_Reno = name x BDP: equal sharing between two measured K at full utilization."""
    k_paper, u_paper, o_paper = _TABLE1[name]

    def judge(data, paper):
        if name not in data["bracket"]:
            return Unavailable("not run at this scale")
        s, br = data["means"].loc[name], data["bracket"][name]
        if br is None:
            side = "DCTCP" if s["ratio"].max() < 1 else "Reno"
            return Verdict(None, False, f"no K in [1, 3] x min_th gives equal sharing: {side} gets more at every K "
                           f"(ratio {s['ratio'].min():.2f}-{s['ratio'].max():.2f}); rule: shown if the ratio crosses 1 "
                           "between two measured K, both at utilization >= 0.98", {"min_th": [name]})
        (k_near, near), (k_far, far) = br
        pts = "; ".join(f"K/min_th {k:g}: Reno/DCTCP {r['ratio']:.2f}, utilization {r['util']:.3f}, occupancy "
                        f"{r['occ']:.3f} BDP" for k, r in sorted(br, key=lambda p: p[0]))
        ok = min(near["util"], far["util"]) >= 0.98
        return Verdict(k_near, ok, f"the measured K on either side of Reno/DCTCP = 1 ({pts}); value: the one nearer "
                       f"to 1 (paper: K/min_th {k_paper}, utilization {u_paper}, occupancy {o_paper} BDP); rule: shown "
                       "if both are at utilization >= 0.98. Fair because the ratio jumps several-fold per packet of K, "
                       "so no K between two measured ones is known to share equally; the crossing lies between two "
                       "configurations that were run, and both are judged",
                       {"min_th": [name], "k_over_m": [k_near, k_far]})
    return judge


def _occ4(data, paper):
    br = data["bracket"]
    if br.get("1/8") is None or br.get("1") is None or float(br["1/8"][0][1]["occ"]) <= 0:
        return Unavailable("equal sharing not reached for BDP/8 or BDP")
    (k8, n8), _ = br["1/8"]
    (k1, n1), _ = br["1"]
    r = float(n1["occ"]) / float(n8["occ"])
    return Verdict(r, r >= 0.99 / 0.207 / 2, "occupancy at the measured K nearest to equal sharing, "
                   "min_th = BDP vs BDP/8 (ratio); rule: shown if >= half the paper's 4.8",
                   {"min_th": ["1/8", "1"], "k_over_m": [k8, k1]})


register(Experiment(
    id="dualq-step", paper=PAPER, figures="Table I, Fig. 5 (§IV-B)", scenario="dualq-step",
    title="DCTCP marking step vs Reno RED in one queue",
    claims=[
        ClaimDef("k_1_8", "min_th_Reno = BDP/8: equal sharing at some K / min_th, utilization >= 0.98 (K/min_th)",
                 _TABLE1["1/8"][0], _equal_k("1/8")),
        ClaimDef("k_1_4", "min_th_Reno = BDP/4: equal sharing at K / min_th", _TABLE1["1/4"][0], _equal_k("1/4")),
        ClaimDef("k_1_2", "min_th_Reno = BDP/2: equal sharing at K / min_th", _TABLE1["1/2"][0], _equal_k("1/2")),
        ClaimDef("k_3_4", "min_th_Reno = 3 BDP/4: equal sharing at K / min_th", _TABLE1["3/4"][0], _equal_k("3/4")),
        ClaimDef("k_1", "min_th_Reno = BDP: equal sharing at K / min_th", _TABLE1["1"][0], _equal_k("1")),
        ClaimDef("occ4", "Equal sharing with a 4x smaller queue at BDP/8 than at BDP (occupancy ratio)", 4.8, _occ4),
    ],
    points=_step_points, tables=_step_tables, draw=_step_draw,
    notes=["Scenario dualq-step: dumbbell, 10 Mbps bottleneck, base RTT 25 ms, 400 KB buffer (not stated), Linux "
           "RTO (200 ms min, 1 s initial); 1 flow of the paper's modified DCTCP (dctcp_dualq) and 1 NewReno flow.",
           "Table I prints min_th = 1/2 BDP twice; we read the fourth row as 3/4 BDP (its occupancy 0.724 BDP lies "
           "between the 1/2 and 1 BDP rows).",
           "Utilization is the bottleneck's wire utilization; occupancy the time-average queue; both from 20 s on.",
           "Quick: 120 s runs, K / min_th in steps of 0.25; paper: 600 s, steps of 0.1."],
))


# --------------------------------------------------------------------------------------
# dualq-nflows (Fig. 6)


def _nflows_points(scale, seeds):
    return grid("dualq-nflows", seeds, [
        axis("n", [1, 2, 3, 4, 5], "flows.0.count"),
        axis("k_over_m", _kgrid(scale), lambda r: _step(r * BDP / 8)),
    ], fixed=_dur(scale) + _classic(1 / 8))


def _nflows_tables(ctx):
    d = _metrics(ctx.df, n_dctcp="n")
    return {"means": d.groupby(["n", "k_over_m"]).mean(numeric_only=True), "ns": sorted(set(d["n"])),
            "util": d.groupby("n")["util"].mean()}


def _nflows_draw(ctx, data):
    g = data["means"]
    with ctx.figure("fig6-nflows", "Fig. 6: 1 Reno vs N DCTCP flows, min_th_Reno = BDP/8: throughput ratio Reno / "
                    "(DCTCP/N), utilization, occupancy", ncols=3) as (fig, axes):
        for n in data["ns"]:
            s = g.loc[n]
            axes[0][0].semilogy(s.index, s["ratio"], marker="o", ms=3, label=f"N = {n}")
            axes[0][1].plot(s.index, s["util"], marker="o", ms=3)
            axes[0][2].plot(s.index, s["occ"], marker="o", ms=3)
        axes[0][0].axhline(1, color="k", ls=":", lw=0.8)
        for ax, t in zip(axes[0], ["throughput ratio Reno/(DCTCP/N)", "utilization", "queue occupancy (BDPs)"]):
            ax.set_xlabel("K / min_th_Reno")
            ax.set_title(t, fontsize=10)
            ax.grid(alpha=0.3)
        axes[0][0].legend(fontsize=7)


def _util_rises(data, paper):
    u = data["util"]
    if len(u) < 2:
        return None
    rho = float(u.index.to_series().rank().corr(u.rank()))
    return Verdict(rho, rho >= 0.9 - 1e-9 and u.iloc[-1] > u.iloc[0],
                   f"Spearman rank correlation of N with the mean utilization over K (N=1: {u.iloc[0]:.4f}, "
                   f"N={u.index[-1]}: {u.iloc[-1]:.4f}); rule: shown if >= 0.9 and utilization at N=5 above N=1")


register(Experiment(
    id="dualq-nflows", paper=PAPER, figures="Fig. 6 (§IV-B)", scenario="dualq-nflows",
    title="One Reno flow against N DCTCP flows",
    claims=[ClaimDef("util", "Utilization rises with the number N of DCTCP flows (rank correlation)", "rises",
                     _util_rises)],
    points=_nflows_points, tables=_nflows_tables, draw=_nflows_draw,
    notes=["Scenario dualq-nflows: dualq-step with min_th_Reno = BDP/8 and N = flows.0.count DCTCP flows "
           "(all to host 2; the DCTCP share is their aggregate / N)."],
))


# --------------------------------------------------------------------------------------
# dualq-slope (Figs. 7-9)


_SLOPE_MINTHS = {"1/8": 1 / 8, "1/4": 1 / 4, "1/2": 1 / 2, "3/4": 3 / 4, "1": 1.0}


def _maxp_grid(scale):
    # Down to max_p_DCTCP = 0.05 (x = 0.5): the lower min_th_DCTCP values cross at or
    # below max_p_Reno = 0.1 in ecnlab, where the paper's rule has no solution (x <= 1).
    if scale == "quick":
        return [0.05, 0.07, 0.09, 0.1, 0.105, 0.11, 0.12, 0.13, 0.15, 0.175, 0.2, 0.25, 0.3, 0.4, 0.5, 0.7, 1.0]
    return [0.03, 0.05, 0.06, 0.07, 0.08, 0.09, 0.095, 0.1, 0.105, 0.11, 0.115, 0.12, 0.13, 0.14, 0.15, 0.165, 0.18,
            0.2, 0.225, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6, 0.7, 0.85, 1.0]


def _slope_points(scale, seeds):
    pts = []
    for name, m in _SLOPE_MINTHS.items():
        pts += grid("dualq-slope", seeds, [
            cases("min_th_dctcp", {name: []}),
            axis("max_p", _maxp_grid(scale), lambda p, m=m: _slope(m * BDP, m * BDP + 2 * BDP, p)),
        ], fixed=_dur(scale) + _classic(1.0))
    return pts


def _slope_tables(ctx):
    """Per min_th_DCTCP (mean over seeds, by max_p_DCTCP): throughput ratio and Jain's index;
    where the ratio crosses 1, as (x = max_p_DCTCP / max_p_Reno, y = min_th_Reno /
    min_th_DCTCP)."""
    g = _metrics(ctx.df).groupby(["min_th_dctcp", "max_p"]).mean(numeric_only=True)
    have = set(g.index.get_level_values(0))
    found = {}
    for name, m in _SLOPE_MINTHS.items():
        if name in have:
            s = g.loc[name]
            x = _crossing(list(s.index), list(s["log_ratio"]))
            if x is not None:
                found[name] = (x / 0.1, 1 / m)
    return {"means": g, "found": found, "lower": [n for n in _SLOPE_MINTHS if _SLOPE_MINTHS[n] < 1 and n in have],
            "maxp_min": min(_maxp_grid(ctx.scale))}


def _slope_draw(ctx, data):
    import numpy as np

    g, found = data["means"], data["found"]
    with ctx.figure("fig7-9-slope", "Figs. 7-9: DCTCP marking slope, min_th_Reno = BDP: throughput ratio and "
                    "Jain's index against max_p_DCTCP; fairest settings vs y = x/(x-1)", ncols=3) as (fig, axes):
        for name in _SLOPE_MINTHS:
            if name not in g.index.get_level_values(0):
                continue
            s = g.loc[name]
            axes[0][0].semilogy(s.index, s["ratio"], marker="o", ms=3, label=f"BDP*{name}")
            axes[0][1].plot(s.index, s["jain"], marker="o", ms=3)
        axes[0][0].axhline(1, color="k", ls=":", lw=0.8)
        axes[0][0].legend(fontsize=7, title="min_th_DCTCP", title_fontsize=7)
        for ax, t in zip(axes[0][:2], ["throughput ratio Reno/DCTCP", "Jain's index"]):
            ax.set_xlabel("max_p_DCTCP")
            ax.set_title(t, fontsize=10)
            ax.grid(alpha=0.3)
        ax = axes[0][2]
        xs = np.linspace(1.05, 9, 200)
        ax.plot(xs, xs / (xs - 1), "k-", lw=1, label="y = x/(x-1)")
        if found:
            ax.plot([v[0] for v in found.values()], [v[1] for v in found.values()], "ro", label="ecnlab")
        ax.set_xlim(1, 9)
        ax.set_ylim(1, 9)
        ax.set_xlabel("max_p_DCTCP / max_p_Reno")
        ax.set_ylabel("min_th_Reno / min_th_DCTCP")
        ax.set_title("maximum fairness", fontsize=10)
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)


def _reachable(data, paper):
    lower, found = data["lower"], data["found"]
    reached = [n for n in lower if n in found]
    return Verdict(len(reached), len(reached) == len(lower) and len(lower) > 0,
                   f"min_th_DCTCP < BDP values with equal sharing at some max_p in [{data['maxp_min']}, 1]: "
                   f"{', '.join(reached) or 'none'} of {', '.join(lower)}; rule: shown if all")


def _none_at_bdp(data, paper):
    g = data["means"]
    if "1" not in g.index.get_level_values(0):
        return None
    return Verdict(float(g.loc["1"]["ratio"].max()), "1" not in data["found"],
                   "largest Reno/DCTCP ratio over max_p at min_th_DCTCP = BDP; rule: shown if it never reaches 1 "
                   "(no equal sharing), as the paper")


def _slope_rule(data, paper):
    found = data["found"]
    if not found:
        return Verdict(None, False, "no equal-sharing point found")
    # y = x/(x-1) is 1/y = 1 - 1/x: min_th_DCTCP / min_th_Reno against 1 - max_p_Reno /
    # max_p_DCTCP. Both sides lie in (-inf, 1) and the error is bounded, where y itself
    # explodes near x = 1 (a 0.01 error in x there is a 100 % error in y).
    errs = {n: abs((1 - 1 / x) - 1 / y) for n, (x, y) in found.items()}
    med = float(sorted(errs.values())[len(errs) // 2])
    det = "; ".join(f"min_th BDP*{n}: x = {v[0]:.3f}, 1/y = {1 / v[1]:.3f} vs 1 - 1/x = {1 - 1 / v[0]:.3f}"
                    for n, v in found.items())
    return Verdict(med, med <= 0.125, f"median |(1 - 1/x) - 1/y| at ecnlab's equal-sharing points "
                   f"(x = max_p_DCTCP / max_p_Reno interpolated where the ratio crosses 1, 1/y = min_th_DCTCP / "
                   f"min_th_Reno); {det}; rule: shown if <= 1/8, the step between the min_th values tried, i.e. the "
                   "rule picks the right min_th for ecnlab's max_p. Judged in 1/y, which is bounded, not in y = "
                   "x/(x-1), which explodes near x = 1")


register(Experiment(
    id="dualq-slope", paper=PAPER, figures="Figs. 7-9 (§IV-C)", scenario="dualq-slope",
    title="DCTCP marking slope: where is equal sharing?",
    claims=[
        ClaimDef("reachable", "Equal sharing reachable for every min_th_DCTCP < BDP (count)", 4, _reachable),
        ClaimDef("none_at_bdp", "No equal sharing at min_th_DCTCP = BDP (max Reno/DCTCP ratio)", "< 1", _none_at_bdp),
        ClaimDef("rule", "Fairest settings follow MinTh_Reno/MinTh_DCTCP = x/(x-1) (median error of 1/y = 1 - 1/x)",
                 0.0, _slope_rule),
    ],
    points=_slope_points, tables=_slope_tables, draw=_slope_draw,
    notes=["Scenario dualq-slope: dualq-step with min_th_Reno = BDP (max_th 3 BDP, max_p 0.1, w 0.002) and a DCTCP "
           "RED slope with w = 0.002, max_th = min_th + 2 BDP (§IV-C); min_th_DCTCP in BDP x {1/8, 1/4, 1/2, 3/4, 1}, "
           "max_p_DCTCP from 0.03/0.05 to 1 (below max_p_Reno = 0.1 too: there the lower min_th values cross in ecnlab).",
           "The fairest max_p per min_th is where the throughput ratio crosses 1 (interpolated)."],
))


# --------------------------------------------------------------------------------------
# dualq-equal (Fig. 10)


EQUAL_WIDTH_BDP = 2.0  # max_th - min_th of both RED slopes in Figs. 7-9 (Reno: 3 BDP - BDP)


def _equal_points(scale, seeds):
    ms = [0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0] if scale == "quick" else [round(0.2 + 0.05 * i, 2) for i in range(17)]

    # §IV-C: "we scale the maximum marking probability by MinThresh_Reno/BDP and altered
    # only the minimum threshold": from the Figs. 7-9 configuration (min_th_Reno = BDP,
    # both slopes 2 BDP wide) only the minimum thresholds move, so both widths stay 2 BDP.
    def ovs(m):
        return (_classic(m, 0.1 / m, width_bdp=EQUAL_WIDTH_BDP)
                + _slope(m / 2 * BDP, m / 2 * BDP + EQUAL_WIDTH_BDP * BDP, min(1.0, 0.2 / m)))

    return grid("dualq-equal", seeds, [axis("min_th_reno", ms, ovs)], fixed=_dur(scale))


def _equal_tables(ctx):
    return {"means": _metrics(ctx.df).groupby("min_th_reno").mean(numeric_only=True)}


def _equal_draw(ctx, data):
    g = data["means"]
    with ctx.figure("fig10-equal", "Fig. 10: equal-sharing configurations: Jain's index, utilization and queue "
                    "occupancy against min_th_Reno", ncols=1, size=(5.2, 3.4)) as (fig, axes):
        ax = axes[0][0]
        ax.plot(g.index, g["jain"], marker="o", label="Jain's index")
        ax.plot(g.index, g["util"], marker="s", label="utilization")
        ax.set_ylim(min(0.9, float(g[["jain", "util"]].min().min()) - 0.01), 1.005)
        ax.set_xlabel("min_th_Reno (BDPs)")
        ax.set_ylabel("Jain's index, utilization")
        ax2 = ax.twinx()
        ax2.plot(g.index, g["occ"], marker="^", color="#2ca02c", label="occupancy")
        ax2.set_ylabel("occupancy (BDPs)")
        ax.legend(loc="lower right", fontsize=8)
        ax2.legend(loc="center right", fontsize=8)
        ax.grid(alpha=0.3)


def _jain(data, paper):
    g = data["means"]
    jmin = float(g["jain"].min())
    at = g["jain"].idxmin()
    return Verdict(jmin, jmin >= 0.95, f"lowest Jain's index over min_th_Reno (at {at:g} BDP, where Reno gets "
                   f"{g.loc[at, 'reno_bps'] / 1e6:.2f} and DCTCP {g.loc[at, 'dctcp_bps'] / 1e6:.2f} Mbps); "
                   "rule: shown if >= 0.95")


def _full_util(data, paper):
    hi = data["means"][data["means"].index >= 0.3 - 1e-9]
    if not len(hi):
        return None
    umin = float(hi["util"].min())
    return Verdict(umin, umin >= 0.98, f"lowest utilization for min_th_Reno >= 0.3 BDP (at {hi['util'].idxmin():g} "
                   "BDP); rule: shown if >= 0.98")


def _linear(data, paper):
    g = data["means"]
    if len(g) < 3:
        return None
    r = float(g.index.to_series().corr(g["occ"]))
    return Verdict(r, r >= 0.95, "Pearson correlation of occupancy with min_th_Reno; rule: shown if >= 0.95")


register(Experiment(
    id="dualq-equal", paper=PAPER, figures="Fig. 10 (§IV-C)", scenario="dualq-equal",
    title="Equal-sharing configuration rule",
    claims=[
        ClaimDef("jain", "Jain's index ~1 for every min_th_Reno (minimum)", 1.0, _jain),
        ClaimDef("util", "Utilization near 100 % from min_th_Reno ~0.3 BDP (minimum)", 0.99, _full_util),
        ClaimDef("linear", "Occupancy roughly linear in min_th_Reno (correlation)", 1.0, _linear),
    ],
    points=_equal_points, tables=_equal_tables, draw=_equal_draw,
    notes=["Scenario dualq-equal: max_p_Reno = 0.1 / m, max_p_DCTCP = 0.2 / m (capped at 1), min_th_DCTCP = m / 2, "
           "w = 0.002 for both, m = min_th_Reno in BDPs from 0.2 (below, 0.2/m would exceed 1). Both slopes keep "
           "the width of the Figs. 7-9 configuration, max_th = min_th + 2 BDP, at every m: §IV-C 'altered only the "
           "minimum threshold' (an earlier version widened them with m, 2 m BDP)."],
))
