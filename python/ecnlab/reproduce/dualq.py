"""Catalog entries of the dual-AQM paper (Kühlewind, Wagner, Espinosa, Briscoe, "Using
Data Center TCP (DCTCP) in the Internet", 2014; papers/dctcp-internet-dual-aqm.txt). Its
numbers: ``papers/dualq.toml``."""

from __future__ import annotations


from ..sweep import override
from .base import ClaimDef, Experiment, Unavailable, axis, cases, grid, register
from .numbers import DUALQ as N
from .rules import At, AtLeast, Direction, Fn, Near, Reduction

PAPER = N["nflows_rises"].paper
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


# --------------------------------------------------------------------------------------
# dualq-step (Table I, Fig. 5)


_MINTHS = {"1/8": 1 / 8, "1/4": 1 / 4, "1/2": 1 / 2, "3/4": 3 / 4, "1": 1.0}
# Table I's row of each min_th_Reno (papers/dualq.toml): K/M, U and O with one DCTCP and one
# Reno flow (DR), and with two Reno flows (2R).
_ROW = {name: f"table1_{name.replace('/', '_')}" for name in _MINTHS}


def _kgrid(scale):
    return [1.0, 1.25, 1.5, 1.75, 2.0, 2.25, 2.5, 2.75, 3.0] if scale == "quick" else \
        [round(1 + 0.1 * i, 2) for i in range(21)]


def _step_points(scale, seeds):
    pts = []
    for name, m in _MINTHS.items():
        pts += grid("dualq-step", seeds, [
            cases("min_th", {name: _classic(m)}), cases("mix", {"dctcp_reno": []}),
            axis("k_over_m", _kgrid(scale), lambda r, m=m: _step(r * m * BDP)),
        ], fixed=_dur(scale))
        # Table I's two-Reno columns: flow 0 Reno too (K then marks nothing: no ECN traffic).
        pts += grid("dualq-step", seeds, [cases("min_th", {name: _classic(m)}),
                                          cases("mix", {"two_reno": ['flows.0.cc="newreno"']}),
                                          axis("k_over_m", [0.0], lambda r, m=m: _step(m * BDP))], fixed=_dur(scale))
    return pts


def _at_crossing(s, col: str):
    """``col`` linearly interpolated at the K where the log throughput ratio crosses 0 (the
    first crossing); None where it does not cross."""
    xs, ys = list(s.index), list(s["log_ratio"])
    vs = xs if col == "k" else list(s[col])
    for i in range(len(xs) - 1):
        y0, y1 = ys[i], ys[i + 1]
        if y0 == 0:
            return float(vs[i])
        if (y0 < 0) != (y1 < 0):
            f = (0 - y0) / (y1 - y0)
            return float(vs[i] + f * (vs[i + 1] - vs[i]))
    return None


def _step_tables(ctx):
    """Per min_th_Reno (mean over seeds, by K / min_th): throughput ratio, utilization,
    occupancy; at equal sharing (interpolated where the ratio crosses 1): K / min_th,
    utilization, occupancy; with two Reno flows: utilization and occupancy."""
    d = _metrics(ctx.df)
    g = d[d["mix"] == "dctcp_reno"].groupby(["min_th", "k_over_m"]).mean(numeric_only=True)
    two = d[d["mix"] == "two_reno"].groupby("min_th").mean(numeric_only=True)
    have = set(g.index.get_level_values(0))
    eq = {c: {name: _at_crossing(g.loc[name], c) for name in _MINTHS if name in have} for c in ("k", "util", "occ")}
    data = {"means": g, "equal": eq, "two_reno": {"util": two["util"].to_dict(), "occ": two["occ"].to_dict()}
            if len(two) else Unavailable("no two-Reno runs at this scale")}
    u8, t8 = eq["util"].get("1/8"), data["two_reno"]["util"].get("1/8") if len(two) else None
    data["util_gain"] = {"1/8": (u8 / t8 - 1) * 100} if u8 and t8 else Unavailable("needs BDP/8 with both mixes")
    o8, o1 = eq["occ"].get("1/8"), eq["occ"].get("1")
    data["occ_ratio"] = o1 / o8 if o8 and o1 else None
    return data


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
            k, u, o = (N[f"{_ROW[name]}.{c}"].value for c in ("k_over_m", "u_dr", "o_dr"))
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


def _row_claims() -> list[ClaimDef]:
    """Table I, one row per min_th_Reno: where equal sharing is (K / min_th, found on every
    seed), its utilization and occupancy, and those of two Reno flows."""
    out = []
    for name in _MINTHS:
        r, tag = _ROW[name], f"min_th_Reno = BDP*{name}"
        out += [
            ClaimDef(f"k_{name.replace('/', '_')}", f"{tag}: equal sharing at K / min_th", N[f"{r}.k_over_m"],
                     Near(At(("equal", "k", name), f"{tag}: K / min_th where Reno / DCTCP crosses 1 (interpolated)",
                             {"min_th": [name], "mix": ["dctcp_reno"]}), exists=True)),
            ClaimDef(f"u_{name.replace('/', '_')}", f"{tag}: utilization at equal sharing", N[f"{r}.u_dr"],
                     Near(At(("equal", "util", name), f"{tag}: utilization at equal sharing (interpolated)",
                             {"min_th": [name], "mix": ["dctcp_reno"]}))),
            ClaimDef(f"o_{name.replace('/', '_')}", f"{tag}: occupancy at equal sharing (BDP)", N[f"{r}.o_dr"],
                     Near(At(("equal", "occ", name), f"{tag}: occupancy at equal sharing (BDP, interpolated)",
                             {"min_th": [name], "mix": ["dctcp_reno"]}))),
            ClaimDef(f"u2r_{name.replace('/', '_')}", f"{tag}: utilization with two Reno flows", N[f"{r}.u_2r"],
                     Near(At(("two_reno", "util", name), f"{tag}: utilization with two Reno flows",
                             {"min_th": [name], "mix": ["two_reno"]}))),
            ClaimDef(f"o2r_{name.replace('/', '_')}", f"{tag}: occupancy with two Reno flows (BDP)", N[f"{r}.o_2r"],
                     Near(At(("two_reno", "occ", name), f"{tag}: occupancy with two Reno flows (BDP)",
                             {"min_th": [name], "mix": ["two_reno"]}))),
        ]
    return out


register(Experiment(
    id="dualq-step", paper=PAPER, figures="Table I, Fig. 5 (§IV-B)", scenario="dualq-step",
    title="DCTCP marking step vs Reno RED in one queue",
    claims=_row_claims() + [
        ClaimDef("occ4", "Equal sharing with a 4x smaller queue at BDP/8 than at BDP (occupancy ratio)",
                 N["step_occupancy_4x"], AtLeast(At(("occ_ratio",), "occupancy at equal sharing, min_th = BDP over "
                                                    "BDP/8", {"mix": ["dctcp_reno"]}))),
        ClaimDef("util_gain", "At BDP/8 DCTCP raises the utilization over two Reno flows (% higher)",
                 N["step_util_gain"], Reduction(At(("util_gain",), "utilization at equal sharing over two Reno flows' "
                                                   "(% higher)", axis="min_th"), word="higher")),
        ClaimDef("fig1", "Modified DCTCP's window after slow start like DCTCP's (Fig. 1)", N["fig1_similar"],
                 Near(Fn(lambda d, at: Unavailable("ecnlab records no congestion window over time (Fig. 1 plots the "
                                                   "window of single flows)"), "-"))),
    ],
    points=_step_points, tables=_step_tables, draw=_step_draw,
    notes=["Scenario dualq-step: dumbbell, 10 Mbps bottleneck, base RTT 25 ms, 400 KB buffer (not stated), Linux "
           "RTO (200 ms min, 1 s initial); 1 flow of the paper's modified DCTCP (dctcp_dualq) and 1 NewReno flow; "
           "Table I's two-Reno columns: both flows NewReno (mix = two_reno).",
           f"{N['table1_3_4.k_over_m'].point_from}.",
           "Equal sharing: K / min_th, utilization and occupancy interpolated (in the log throughput ratio) where "
           "Reno / DCTCP crosses 1 between two measured K.",
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
    """Per N (mean over K and seeds): utilization, and the slope of utilization against N."""
    import numpy as np

    d = _metrics(ctx.df, n_dctcp="n")
    u = d.groupby("n")["util"].mean()
    slope = float(np.polyfit(u.index.to_numpy(float), u.to_numpy(float), 1)[0]) if len(u) >= 2 else None
    return {"means": d.groupby(["n", "k_over_m"]).mean(numeric_only=True), "ns": sorted(set(d["n"])), "util": u,
            "slope": slope * 100 if slope is not None else None,
            "util_text": ", ".join(f"N={n}: {v:.4f}" for n, v in u.items())}


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


register(Experiment(
    id="dualq-nflows", paper=PAPER, figures="Fig. 6 (§IV-B)", scenario="dualq-nflows",
    title="One Reno flow against N DCTCP flows",
    claims=[ClaimDef("util", "Utilization rises with the number N of DCTCP flows (slope, points per flow)",
                     N["nflows_rises"], Direction(At(("slope",), "least-squares slope of the mean utilization over K "
                                                    "against N, in points of utilization per flow ({util_text})")))],
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
    data = {"means": g, "found": found, "lower": [n for n in _SLOPE_MINTHS if _SLOPE_MINTHS[n] < 1 and n in have],
            "maxp_min": min(_maxp_grid(ctx.scale))}
    data["max_ratio_bdp"] = float(g.loc["1"]["ratio"].max()) if "1" in have else None
    data["found_text"] = "; ".join(f"min_th BDP*{n}: x = {x:.3f}, 1/y = {1 / y:.3f} vs 1 - 1/x = {1 - 1 / x:.3f}"
                                   for n, (x, y) in found.items())
    return data


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


def _slope_facts(data):
    lower, found = data["lower"], data["found"]
    return {"reached": sum(1 for n in lower if n in found) / len(lower) if lower else None}


# Fig. 9's rule y = x / (x - 1) judged as 1/y = 1 - 1/x (bounded, where y explodes near x = 1):
# the median error within the step between the min_th_DCTCP values tried (1/8 BDP), i.e. the
# rule picks the right min_th for ecnlab's max_p.
RULE_STEP = 1 / 8


def _rule_error(data, at=None):
    found = data["found"]
    if not found:
        return None
    errs = sorted(abs((1 - 1 / x) - 1 / y) for x, y in found.values())
    return float(errs[len(errs) // 2])


register(Experiment(
    id="dualq-slope", paper=PAPER, figures="Figs. 7-9 (§IV-C)", scenario="dualq-slope",
    title="DCTCP marking slope: where is equal sharing?",
    claims=[
        ClaimDef("reachable", "Equal sharing reachable for every min_th_DCTCP < BDP (share of them)",
                 N["slope_possible"], Direction(Fn(lambda d, at: _slope_facts(d)["reached"],
                                                   "share of the min_th_DCTCP < BDP with equal sharing at some max_p"),
                                                reference_value=1 - 1e-9)),
        ClaimDef("none_at_bdp", "No equal sharing at min_th_DCTCP = BDP (largest Reno / DCTCP ratio)",
                 N["slope_possible"], Direction(At(("max_ratio_bdp",), "largest Reno / DCTCP ratio over max_p at "
                                                   "min_th_DCTCP = BDP"), sign=-1, reference_value=1.0)),
        ClaimDef("rule", "Fairest settings follow MinTh_Reno / MinTh_DCTCP = x / (x - 1) (median error of 1/y)",
                 N["slope_rule"], Direction(Fn(_rule_error, "median |(1 - 1/x) - 1/y| at ecnlab's equal-sharing "
                                               "points (x = max_p_DCTCP / max_p_Reno where the ratio crosses 1, 1/y = "
                                               "min_th_DCTCP / min_th_Reno; {found_text})"),
                                            sign=-1, reference_value=RULE_STEP)),
    ],
    points=_slope_points, tables=_slope_tables, draw=_slope_draw,
    notes=["Scenario dualq-slope: dualq-step with min_th_Reno = BDP (max_th 3 BDP, max_p 0.1, w 0.002) and a DCTCP "
           "RED slope with w = 0.002, max_th = min_th + 2 BDP (§IV-C); min_th_DCTCP in BDP x {1/8, 1/4, 1/2, 3/4, 1}, "
           "max_p_DCTCP from 0.03/0.05 to 1 (below max_p_Reno = 0.1 too: there the lower min_th values cross in ecnlab).",
           "The fairest max_p per min_th is where the throughput ratio crosses 1 (interpolated). The rule is judged "
           "in 1/y = 1 - 1/x, within 1/8 (the step between the min_th values tried)."],
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


def _equal_facts(ctx):
    g = _metrics(ctx.df).groupby("min_th_reno").mean(numeric_only=True)
    hi = g[g.index >= N["equal_utilization"].at["min_th_reno"] - 1e-9]
    at = g["jain"].idxmin()
    return {"means": g, "jain_min": float(g["jain"].min()), "util_min": float(hi["util"].min()) if len(hi) else None,
            "linear": float(g.index.to_series().corr(g["occ"])) if len(g) >= 3 else None,
            "ratio": g["ratio"], "jain_text": f"at {at:g} BDP, where Reno gets {g.loc[at, 'reno_bps'] / 1e6:.2f} and "
                                              f"DCTCP {g.loc[at, 'dctcp_bps'] / 1e6:.2f} Mbps"}


register(Experiment(
    id="dualq-equal", paper=PAPER, figures="Figs. 2, 10 (§III-C, §IV-C)", scenario="dualq-equal",
    title="Equal-sharing configuration rule",
    claims=[
        ClaimDef("jain", "Jain's index ~1 for every min_th_Reno (lowest)", N["equal_fairness"],
                 Near(At(("jain_min",), "lowest Jain's index over min_th_Reno ({jain_text})"))),
        ClaimDef("util", "Utilization near 100 % from min_th_Reno ~0.3 BDP (lowest)", N["equal_utilization"],
                 Near(At(("util_min",), "lowest utilization for min_th_Reno >= 0.3 BDP"))),
        ClaimDef("linear", "Occupancy roughly linear in min_th_Reno (correlation)", N["equal_linear"],
                 Near(At(("linear",), "Pearson correlation of occupancy with min_th_Reno"))),
        ClaimDef("fig2", "One Reno and one DCTCP flow share equally (Fig. 2; Reno / DCTCP, farthest min_th)",
                 N["fig2_equal"], Near(At(("ratio",), "Reno / DCTCP throughput ratio", axis="min_th_reno"),
                                       over="worst")),
    ],
    points=_equal_points, tables=_equal_facts, draw=_equal_draw,
    notes=["Scenario dualq-equal: max_p_Reno = 0.1 / m, max_p_DCTCP = 0.2 / m (capped at 1), min_th_DCTCP = m / 2, "
           "w = 0.002 for both, m = min_th_Reno in BDPs from 0.2 (below, 0.2/m would exceed 1). Both slopes keep "
           "the width of the Figs. 7-9 configuration, max_th = min_th + 2 BDP, at every m: §IV-C 'altered only the "
           "minimum threshold'. Fig. 2 plots one Reno and one DCTCP flow with 'the used parameter set derived from "
           "our investigations described later on in the second part of Section IV-C': this rule's configurations."],
))
