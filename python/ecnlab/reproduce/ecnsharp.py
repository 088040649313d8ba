"""Catalog entries of the ECN# paper (Zhang et al., "Enabling ECN for Datacenter Networks
with RTT Variations", IEEE TCC 2022; papers/ecn-sharp-tcc2022.txt). Its numbers:
``papers/ecnsharp.toml``; the incast entry is ``ecnsharp_incast``."""

from __future__ import annotations


from ..api import resolve
from ..scenario import ScenarioError
from ..sweep import override
from .base import ClaimDef, Experiment, NoRunData, Unavailable, axis, cases, grid, pct_lower, register
from .fct import FctEntry, FctView, build, fct_claim
from .numbers import ECNSHARP as N
from .numbers import similar_as
from .plots import style
from .rules import At, Direction, Grows, Near, Reduction, Within

PAPER = N["star_ws_small_avg"].paper
# ECN#'s own measure of "similar" overall FCT (§5.2.1: "within 4.2%"), for its "similar" claims.
SIMILAR = N["star_ws_overall"]
PORT = "s0->h0"
C_BPS = 10e9


# --------------------------------------------------------------------------------------
# RTT variation: the scenario's distribution is the paper's 3x (70-210 us); n x scales the
# extra delays by (n - 1) / 2 (2x: 70-140 us, ..., 5x: 70-350 us, as §2.3 and §5.2.2).


def _us(text: str) -> float:
    """A duration in microseconds, by the core's one unit grammar."""
    from .. import _core

    try:
        return _core.parse_unit("time", str(text)) / 1e3
    except ValueError as e:
        raise ScenarioError(str(e)) from None


def _points(scenario: str) -> list[tuple[float, float]]:
    doc = resolve(scenario)
    return [(_us(d), float(p)) for d, p in doc["rtt_variation"]["delay"]["points"]]


def _base_rtt_us(scenario: str) -> float:
    """Base RTT of a star scenario: 4 link traversals plus the store-and-forward of a
    1500 B segment twice and an ACK (the scenarios' own arithmetic: ~70 us)."""
    doc = resolve(scenario)
    d = _us(doc["topology"]["link_delay"])
    return 4 * d + 2 * 1.2 + 0.1


def _scaled_points(pts, n: float):
    f = (n - 1) / 2
    return [[f"{d * f:.3f}us", p] for d, p in pts]


def _stats(pts, n: float, base: float):
    """Average and 90th percentile RTT (us) of the n x distribution (linear CDF)."""
    f = (n - 1) / 2
    mean = sum((p1 - p0) * (d0 + d1) / 2 for (d0, p0), (d1, p1) in zip(pts, pts[1:])) * f
    p90 = 0.0
    for (d0, p0), (d1, p1) in zip(pts, pts[1:]):
        if p0 <= 0.9 <= p1 and p1 > p0:
            p90 = (d0 + (0.9 - p0) / (p1 - p0) * (d1 - d0)) * f
            break
    return base + mean, base + p90


def _kb(x: float) -> str:
    return f"{x:.1f}KB"


# --------------------------------------------------------------------------------------
# ecnsharp-dilemma (Figs. 2-3)


# §2.3's thresholds: Fig. 2 sweeps K from 50 to 250 KB (the baseline it normalizes to is
# 50 KB); ~100 KB is the average RTT's, 250 KB the 90th percentile's.
K_MIN, K_AVG, K_P90 = 50, int(N["dilemma_tput_100"].at["k_kb"]), int(N["dilemma_p99_250"].at["k_kb"])
K_GRID = [K_MIN, K_AVG, 150, 200, K_P90]


def _dilemma_points(scale, seeds):
    flows = 1500 if scale == "quick" else 2000
    pts0 = _points("ecnsharp-dilemma")
    base = _base_rtt_us("ecnsharp-dilemma")
    avg3, p903 = _stats(pts0, 3, base)
    fixed = [override("traffic.0.flows", flows)]
    pts = grid("ecnsharp-dilemma", seeds, [
        cases("study", {"fig2": []}), cases("variation", {"3x": []}), cases("basis", {"sweep": []}),
        axis("k_kb", K_GRID, lambda k: [override("marking.threshold.k", f"{k}KB")]),
    ], fixed=fixed)
    for n in (2, 3, 4, 5):
        avg, p90 = _stats(pts0, n, base)
        # The paper's 3x thresholds (avg ~100 KB, p90 250 KB) scaled with the RTT statistics.
        ks = {"avg": K_AVG * avg / avg3, "p90": K_P90 * p90 / p903}
        for basis, k in ks.items():
            pts += grid("ecnsharp-dilemma", seeds, [
                cases("study", {"fig3": []}), cases("variation", {f"{n}x": [override(
                    "rtt_variation.delay.points", _scaled_points(pts0, n))]}),
                cases("basis", {basis: [override("marking.threshold.k", _kb(k))]}),
                axis("k_kb", [round(k, 1)], lambda _k: []),
            ], fixed=fixed)
    return pts


def _dilemma_tables(ctx):
    """Fig. 2: FCT per K at 3x (mean over seeds); Fig. 3: FCT per RTT variation and
    threshold basis, with the avg-RTT threshold's loss and the p90 threshold's penalty (%)."""
    t = ctx.df[ctx.df["study"] == "fig2"].groupby("k_kb").mean(numeric_only=True).sort_index()
    data = {"fig2": t}
    if {K_MIN, K_P90} <= set(t.index):
        data["p99_250"] = float((t.loc[K_P90, "fct_small_p99_us"] / t.loc[K_MIN, "fct_small_p99_us"] - 1) * 100)
    if {K_AVG, K_P90} <= set(t.index):
        data["tput_100"] = float((t.loc[K_AVG, "fct_all_avg_us"] / t.loc[K_P90, "fct_all_avg_us"] - 1) * 100)
    if len(t) >= 2:  # the K best for short flows' p99 and the K best for throughput, KB apart
        data["k_lat"], data["k_tput"] = float(t["fct_small_p99_us"].idxmin()), float(t["fct_all_avg_us"].idxmin())
        data["k_gap"] = abs(data["k_lat"] - data["k_tput"])
    d3 = ctx.df[ctx.df["study"] == "fig3"]
    if d3.empty:
        return data
    g = d3.groupby(["variation", "basis"]).mean(numeric_only=True)
    order = [v for v in ("2x", "3x", "4x", "5x") if v in g.index.get_level_values(0)]
    data["fig3"] = (g, order)
    data["loss"] = {v: (g.loc[(v, "avg"), "fct_all_avg_us"] / g.loc[(v, "p90"), "fct_all_avg_us"] - 1) * 100
                    for v in order}
    data["penalty"] = {v: (g.loc[(v, "p90"), "fct_small_p99_us"] / g.loc[(v, "avg"), "fct_small_p99_us"] - 1) * 100
                       for v in order}
    return data


def _dilemma_draw(ctx, data):
    t = data["fig2"]
    metrics = [("fct_all_avg_us", "(a) overall: avg"), ("fct_small_avg_us", "(b) (0, 100KB]: avg"),
               ("fct_small_p99_us", "(c) (0, 100KB]: 99th pct"), ("fct_large_avg_us", "(d) (10MB, inf): avg")]
    with ctx.figure("fig2-thresholds", "Fig. 2: FCT vs the marking threshold K at 3x RTT variation, normalized "
                    "to K = 50 KB (web search, 50 % load)", ncols=4, size=(13.5, 3.1)) as (fig, axes):
        for ax, (m, title) in zip(axes[0], metrics):
            if 50 in t.index:
                ax.bar([str(int(k)) for k in t.index], t[m] / t.loc[50, m], color="#1f77b4")
            ax.axhline(1, color="k", lw=0.6)
            ax.set_title(title, fontsize=10)
            ax.set_xlabel("K (KB)")
        axes[0][0].set_ylabel("normalized FCT")
    if "fig3" not in data:
        return
    g, order = data["fig3"]
    with ctx.figure("fig3-variation", "Fig. 3: FCT with K from the 90th-percentile RTT normalized to K from the "
                    "average RTT, against the RTT variation", ncols=2) as (fig, axes):
        for ax, (m, title) in zip(axes[0], [("fct_all_avg_us", "overall avg"), ("fct_small_p99_us", "(0, 100KB]: p99")]):
            ax.bar(order, [g.loc[(v, "p90"), m] / g.loc[(v, "avg"), m] for v in order], color="#1f77b4")
            ax.axhline(1, color="k", lw=0.6)
            ax.set_title(title, fontsize=10)
            ax.set_xlabel("RTT variation")
        axes[0][0].set_ylabel("FCT(K_p90) / FCT(K_avg)")


def _dilemma_notes():
    try:
        pts0 = _points("ecnsharp-dilemma")
        base = _base_rtt_us("ecnsharp-dilemma")
        stats = {n: _stats(pts0, n, base) for n in (2, 3, 4, 5)}
        st = "; ".join(f"{n}x: avg {a:.0f} us, p90 {p:.0f} us" for n, (a, p) in stats.items())
    except Exception:  # noqa: BLE001
        st = "(scenario unavailable)"
    return [
        "Scenario ecnsharp-dilemma: 7 senders, 1 receiver, 10 Gbps, base RTT ~70 us, web search (byte CDF of the "
        "ECN# code) at 50 % load, DCTCP with an instantaneous threshold (per-queue DCTCP-RED, enqueue).",
        "RTT variation: the scenario's extra-delay points are the 3x case; n x scales them by (n-1)/2. RTT "
        f"statistics of our distributions: {st}.",
        "Fig. 3 thresholds: the paper's 3x values (avg ~100 KB, p90 250 KB) scaled with the average and 90th "
        "percentile RTT of each n x distribution (Eq. 2: K proportional to RTT).",
        "Throughput is judged by the overall average FCT, as the paper's '8 % throughput degradation (3701 to "
        "3426 us)'. Quick: 1500 flows per run; paper: 2000.",
    ]


def _grows(key: str, what: str, low: str, high: str) -> Grows:
    """``data[key]`` (% per RTT variation) from the paper's ``low`` number to its ``high``."""
    lo, hi = N[low].at["variation"], N[high].at["variation"]
    return Grows(At((key, hi), f"{what} at {hi}"), low=At((key, lo), f"{what} at {lo}"), low_number=N[low])


register(Experiment(
    id="ecnsharp-dilemma", paper=PAPER, figures="Figs. 2-3 (§2.3)", scenario="ecnsharp-dilemma",
    title="The threshold dilemma under RTT variation",
    claims=[
        ClaimDef("p99_250", "3x: K = 250 KB (p90 RTT) gives short flows a longer p99 FCT than 50 KB",
                 N["dilemma_p99_250"], Reduction(At(("p99_250",), "small-flow p99 FCT, K = 250 KB vs 50 KB (% longer)"),
                                                 upto=False, word="longer")),
        ClaimDef("tput_100", "3x: K ~ 100 KB (avg RTT) loses throughput vs 250 KB (overall avg FCT longer)",
                 N["dilemma_tput_100"], Reduction(At(("tput_100",), "overall avg FCT, K = 100 KB vs 250 KB (% longer; "
                                                     "the paper's 'throughput loss')"), upto=False, word="longer")),
        ClaimDef("dilemma", "No single K is best for both short-flow latency and throughput (KB between the two bests)",
                 N["dilemma_none"], Direction(At(("k_gap",), "KB between the K with the lowest small-flow p99 "
                                                 "({k_lat:g}) and the K with the lowest overall avg FCT ({k_tput:g})"))),
        ClaimDef("loss_grows", "Throughput loss of the avg-RTT threshold grows with variation (% longer, 2x to 5x)",
                 N["dilemma_loss_5x"], _grows("loss", "overall avg FCT of K_avg vs K_p90 (% longer)", "dilemma_loss_2x",
                                              "dilemma_loss_5x")),
        ClaimDef("pen_grows", "Short-flow p99 penalty of the p90 threshold grows with variation (% longer, 2x to 5x)",
                 N["dilemma_penalty_5x"], _grows("penalty", "small-flow p99 of K_p90 vs K_avg (% longer)",
                                                 "dilemma_penalty_2x", "dilemma_penalty_5x")),
    ],
    points=_dilemma_points, tables=_dilemma_tables, draw=_dilemma_draw, notes=_dilemma_notes(),
))


# --------------------------------------------------------------------------------------
# ecnsharp-star (Figs. 9-11) and ecnsharp-leafspine (Figs. 13-14)


def _star_schemes(k_tail: str, k_avg: str):
    return {
        "avg": ["marking.scheme=per_queue", override("marking.threshold.k", k_avg)],
        "tail": ["marking.scheme=per_queue", override("marking.threshold.k", k_tail)],
        "codel": ["marking.scheme=codel"],
        "ecn_sharp": ["marking.scheme=ecn_sharp"],
    }


def _star_points(scale, seeds):
    if scale == "quick":  # with the paper's points: 10 % (overall), 80 % (data mining), 90 % (web search)
        loads = [0.1, 0.3, 0.6, 0.8, 0.9]
        workloads = {"websearch": ("websearch_bytes", 800), "datamining": ("datamining_bytes", 250)}
        var_loads = [0.5, 0.9]
    else:
        loads = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
        workloads = {"websearch": ("websearch_bytes", 5000), "datamining": ("datamining_bytes", 2000)}
        var_loads = [0.3, 0.5, 0.7, 0.9]
    pts = []
    for wl, (cdf, flows) in workloads.items():
        pts += grid("ecnsharp-star", seeds, [
            cases("study", {"fig9_10": []}), cases("variation", {"3x": []}),
            cases("workload", {wl: [override("traffic.0.cdf", cdf), override("traffic.0.flows", flows)]}),
            cases("scheme", _star_schemes("250KB", "80KB")),
            axis("load", loads, "traffic.0.load"),
        ])
    # Fig. 11: 4x and 5x, ECN# vs Tail; both re-derived by the paper's rule of thumb (§3.4):
    # Tail K and ECN#'s ins_target / pst_interval scale with the p90 RTT, pst_target with
    # the average RTT (anchored at the paper's 3x values 250 KB, 200/200/85 us).
    pts0 = _points("ecnsharp-star")
    base = _base_rtt_us("ecnsharp-star")
    avg3, p903 = _stats(pts0, 3, base)
    for n in (4, 5):
        avg, p90 = _stats(pts0, n, base)
        hi, lo = p90 / p903, avg / avg3
        var = [override("rtt_variation.delay.points", _scaled_points(pts0, n))]
        sch = {
            "tail": ["marking.scheme=per_queue", override("marking.threshold.k", _kb(250 * hi))],
            "ecn_sharp": ["marking.scheme=ecn_sharp", override("marking.ecn_sharp.ins_target", f"{200 * hi:.1f}us"),
                          override("marking.ecn_sharp.pst_interval", f"{200 * hi:.1f}us"),
                          override("marking.ecn_sharp.pst_target", f"{85 * lo:.1f}us")],
        }
        pts += grid("ecnsharp-star", seeds, [
            cases("study", {"fig11": []}), cases("variation", {f"{n}x": var}),
            cases("workload", {"websearch": [override("traffic.0.cdf", "websearch_bytes"),
                                             override("traffic.0.flows", workloads["websearch"][1])]}),
            cases("scheme", sch), axis("load", var_loads, "traffic.0.load"),
        ])
    return pts


def _codel_losses(runs, scenario: str) -> str:
    """What the paper blames for CoDel's short-flow FCT (§5.2.1: timeouts after drops under
    bursts), as these runs measured it: drops, timeouts and the peak queue against the buffer."""
    if runs.empty:
        return ""
    got = [f"{runs[c].astype(float).sum():.0f} {c}" for c in ("drops", "timeouts") if c in runs]
    if "max_qlen_bytes" in runs:
        got.append(f"peak queue {runs['max_qlen_bytes'].astype(float).max() / 1000:.0f} KB of the "
                   f"{resolve(scenario)['switch']['buffer']} buffer")
    return f"CoDel's runs: {', '.join(got)} (the paper blames timeouts after drops under bursts)." if got else ""


_STAR_FIGS = {"websearch": ("fig9-websearch", "Fig. 9: web search, 3x RTT variation: FCT normalized to DCTCP-RED-Tail"),
              "datamining": ("fig10-datamining", "Fig. 10: data mining, 3x RTT variation: FCT normalized to "
                             "DCTCP-RED-Tail")}
_LS_FIGS = {"websearch": ("fig13-websearch", "Fig. 13: 128-host leaf-spine, web search: FCT normalized to DCTCP-RED-Tail"),
            "datamining": ("fig14-datamining", "Fig. 14: 128-host leaf-spine, data mining: FCT normalized to "
                           "DCTCP-RED-Tail")}


def _views(figs, avg: bool) -> list[FctView]:
    out = []
    for wl, (fig, cap) in figs.items():
        out += [FctView(wl, {"workload": wl, "study": "fig9_10"} if avg else {"workload": wl}, "tail", wl,
                        (fig, cap, ("tail", "avg", "codel", "ecn_sharp"))),
                FctView(f"{wl}-vs-codel", {"workload": wl, "study": "fig9_10"} if avg else {"workload": wl}, "codel",
                        wl)]
        if avg:
            out.append(FctView(f"{wl}-vs-avg", {"workload": wl, "study": "fig9_10"}, "avg", wl))
    return out


def _star_extra(ctx, data):
    """Fig. 11: ECN#'s small-flow p99 over Tail's at 3x-5x (NFCT, load x variation) and its
    largest reduction per variation (%); what CoDel's runs lost."""
    out = {f"{wl}-codel": _codel_losses(ctx.df[(ctx.df["scheme"] == "codel") & (ctx.df["workload"] == wl)],
                                        ctx.exp.scenario) for wl in ("websearch", "datamining")}
    d = ctx.df[ctx.df["variation"].isin(["3x", "4x", "5x"]) & (ctx.df["workload"] == "websearch")
               & ctx.df["scheme"].isin(["tail", "ecn_sharp"])]
    if d.empty or set(d["variation"]) == {"3x"}:
        return out | {"nfct_best": Unavailable("no 4x / 5x runs at this scale")}
    loads = sorted(set(d[d["variation"] == "5x"]["load"]))
    g = d[d["load"].isin(loads)].groupby(["variation", "load", "scheme"])["fct_small_p99_us"].mean().unstack("scheme")
    nf = (g["ecn_sharp"] / g["tail"]).unstack("variation")
    return out | {"nfct": nf, "nfct_best": {v: float((1 - nf[v]).max() * 100) for v in nf.columns}}


def _star_draw(ctx, data):
    if "nfct" not in data:
        return
    nf = data["nfct"]
    with ctx.figure("fig11-variation", "Fig. 11: web search, small-flow p99 FCT of ECN# normalized to DCTCP-RED-"
                    "Tail (NFCT) at 3x, 4x, 5x RTT variation", ncols=1) as (fig, axes):
        ax = axes[0][0]
        for v in [c for c in ("3x", "4x", "5x") if c in nf.columns]:
            ax.plot([100 * x for x in nf.index], nf[v], marker="o", label=f"NFCT {v}")
        ax.axhline(1, color="k", lw=0.6)
        ax.set_xlabel("load (%)")
        ax.set_ylabel("ECN# / Tail, small p99")
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)


_STAR_VIEWS = _views(_STAR_FIGS, avg=True)
_SV = {v.name: v for v in _STAR_VIEWS}


def _best_at(v: str) -> At:
    return At(("nfct_best", v), f"web search, {v}: ECN#'s largest small-flow p99 reduction vs Tail over loads (%)",
              {"scheme": ["tail", "ecn_sharp"], "variation": [v]})


build(FctEntry(
    id="ecnsharp-star", paper=PAPER, figures="Figs. 9-11 (§5.2)", scenario="ecnsharp-star",
    title="Testbed: 7-to-1 star with 3x-5x RTT variation, web search and data mining",
    points=_star_points, views=_STAR_VIEWS, extra=_star_extra, extra_draw=_star_draw,
    claims=[
        fct_claim("ws_small_avg", N["star_ws_small_avg"], _SV["websearch"], "fct_small_avg_us", "ecn_sharp"),
        fct_claim("ws_small_p99", N["star_ws_small_p99"], _SV["websearch"], "fct_small_p99_us", "ecn_sharp"),
        fct_claim("ws_large_tail", similar_as(N["star_large_like_tail"], SIMILAR), _SV["websearch"], "fct_large_avg_us",
                  "ecn_sharp", "similar"),
        fct_claim("ws_large_avg", N["star_ws_large_avg"], _SV["websearch-vs-avg"], "fct_large_avg_us", "ecn_sharp"),
        fct_claim("ws_overall", N["star_ws_overall"], _SV["websearch"], "fct_all_avg_us", "ecn_sharp", "within"),
        fct_claim("ws_codel", N["star_codel_bad"], _SV["websearch-vs-codel"], "fct_small_avg_us", "ecn_sharp",
                  "direction"),
        fct_claim("dm_small_avg", N["star_dm_small_avg"], _SV["datamining"], "fct_small_avg_us", "ecn_sharp"),
        fct_claim("dm_small_p99", N["star_dm_small_p99"], _SV["datamining"], "fct_small_p99_us", "ecn_sharp"),
        fct_claim("dm_large_tail", similar_as(N["star_large_like_tail"], SIMILAR), _SV["datamining"],
                  "fct_large_avg_us", "ecn_sharp", "similar"),
        fct_claim("dm_large_avg", N["star_dm_large_avg"], _SV["datamining-vs-avg"], "fct_large_avg_us", "ecn_sharp"),
        fct_claim("dm_codel", N["star_codel_bad"], _SV["datamining-vs-codel"], "fct_small_avg_us", "ecn_sharp",
                  "direction"),
        ClaimDef("p99_4x", "Web search, 4x RTT variation: small-flow p99 up to X % lower with ECN# than Tail",
                 N["star_p99_4x"], Reduction(_best_at("4x"), upto=False)),
        ClaimDef("grows", "The short-flow p99 benefit grows with RTT variation (% lower, 3x to 5x)", N["star_p99_5x"],
                 Grows(_best_at("5x"), low=_best_at("3x"), low_number=N["star_p99_3x"])),
    ],
    notes=["Scenario ecnsharp-star: 7 senders, 1 receiver, 10 Gbps, base RTT ~70 us, 3x RTT variation (70-210 us, "
           "long-tailed), 22 MB buffer (the testbed's Tofino, whose buffer the paper does not state), DCTCP, RTO_min "
           "5 ms, persistent connections; DCTCP-RED-AVG 80 KB, -Tail 250 KB, CoDel 85/200 us, ECN# 200/200/85 us (§5.2).",
           "Fig. 11 (4x, 5x): Tail K and ECN#'s ins_target, pst_interval scaled with the p90 RTT and pst_target "
           "with the average RTT of the n x distribution (the rule of thumb of §3.4, anchored at the 3x values); "
           "the paper does not list its 4x/5x settings.",
           "Quick: loads 10/30/60/80/90 %, 800 web search / 250 data mining flows; paper: 10-90 %, 5000 / 2000 flows."],
    scale_notes={"quick": "Quick scale: few flows per load; large-flow FCT rests on a handful of flows."},
))


def _ls_points(scale, seeds):
    doc = resolve("ecnsharp-leafspine")
    k_tail = doc["marking"]["threshold"]["k"]
    if scale == "quick":  # with web search's point, 90 %
        loads, workloads = [0.5, 0.9], {"websearch": ("websearch_bytes", 2000)}
    else:
        loads = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
        workloads = {"websearch": ("websearch_bytes", 20000), "datamining": ("datamining_bytes", 5000)}
    pts = []
    for wl, (cdf, flows) in workloads.items():
        pts += grid("ecnsharp-leafspine", seeds, [
            cases("workload", {wl: [override("traffic.0.cdf", cdf), override("traffic.0.flows", flows)]}),
            cases("scheme", _star_schemes(k_tail, "37.5KB")),  # AVG: the README's TCN_Low, 30 us x 10 Gbps
            axis("load", loads, "traffic.0.load"),
        ])
    return pts


_LS_VIEWS = _views(_LS_FIGS, avg=False)
_LV = {v.name: v for v in _LS_VIEWS}

build(FctEntry(
    id="ecnsharp-leafspine", paper=PAPER, figures="Figs. 13-14 (§5.3)", scenario="ecnsharp-leafspine",
    title="128-host leaf-spine with 3x RTT variation",
    points=_ls_points, views=_LS_VIEWS,
    claims=[
        fct_claim("ws_small_avg", N["ls_ws_small_avg"], _LV["websearch"], "fct_small_avg_us", "ecn_sharp"),
        fct_claim("ws_small_p99", N["ls_ws_small_p99"], _LV["websearch"], "fct_small_p99_us", "ecn_sharp"),
        fct_claim("ws_overall", similar_as(N["ls_overall_similar"], SIMILAR), _LV["websearch"], "fct_all_avg_us",
                  "ecn_sharp", "similar"),
        fct_claim("dm_small_avg", N["ls_dm_small_avg"], _LV["datamining"], "fct_small_avg_us", "ecn_sharp"),
        fct_claim("dm_small_p99", N["ls_dm_small_p99"], _LV["datamining"], "fct_small_p99_us", "ecn_sharp"),
        fct_claim("dm_overall", similar_as(N["ls_overall_similar"], SIMILAR), _LV["datamining"], "fct_all_avg_us",
                  "ecn_sharp", "similar"),
    ],
    notes=["Scenario ecnsharp-leafspine: 8x8 leaf-spine, 16 hosts per leaf, 10 Gbps, 10 us per link, RTT 80-240 us "
           "(avg ~137, p90 ~220), 375 KB per port, DCTCP; DCTCP-RED-Tail K = 87.5 KB and -AVG 37.5 KB, the authors' "
           "ns-3 runs (README: thresholds 'calculated based on tail RTT and average RTT', 70 and 30 us at 10 Gbps); "
           "ECN# 70/70/10 us from the same runs, its persistent marks spaced as their code (pst_interval / "
           "sqrt(count) from now; Alg. 1 as printed accumulates pst_interval / count), so Tail's threshold is ECN#'s "
           "instantaneous one (§3.4: ECN# inherits the high-percentile threshold) and the two differ only by ECN#'s "
           "persistent marking. CoDel 10/150 us.",
           "Quick: web search only, loads 50/90 %, 2000 flows; paper: both workloads, 10-90 %, 20000 / 5000 flows."],
    scale_notes={"quick": "Quick scale: web search only, 2000 flows per load; the data mining claims are not "
                 "evaluated."},
))


from . import ecnsharp_incast as _incast  # noqa: E402,F401  (registers ecnsharp-incast, in SPEC order)


# --------------------------------------------------------------------------------------
# ecnsharp-sensitivity (Fig. 18)


def _sens_points(scale, seeds):
    if scale == "quick":
        wl = {"websearch": ("websearch_bytes", 2000)}
        intervals, targets = [50, 70, 150], [5, 10, 20]
    else:
        wl = {"websearch": ("websearch_bytes", 20000), "datamining": ("datamining_bytes", 5000)}
        intervals, targets = [50, 70, 100, 150, 200], [5, 10, 20, 40]
    pts = []
    for w, (cdf, flows) in wl.items():
        fixed = ["marking.scheme=ecn_sharp", override("traffic.0.cdf", cdf), override("traffic.0.flows", flows),
                 override("traffic.0.load", 0.6)]
        pts += grid("ecnsharp-leafspine", seeds, [
            cases("workload", {w: []}), cases("vary", {"pst_interval": []}),
            axis("value_us", intervals, lambda v: [override("marking.ecn_sharp.pst_interval", f"{v}us"),
                                                    override("marking.ecn_sharp.pst_target", "10us")]),
        ], fixed=fixed)
        pts += grid("ecnsharp-leafspine", seeds, [
            cases("workload", {w: []}), cases("vary", {"pst_target": []}),
            axis("value_us", targets, lambda v: [override("marking.ecn_sharp.pst_target", f"{v}us"),
                                                  override("marking.ecn_sharp.pst_interval", "70us")]),
        ], fixed=fixed)
    return pts


def _sens_tables(ctx):
    """The overall average FCT per workload and setting (mean over seeds) and its spread,
    (max/min - 1) over all settings (%)."""
    g = ctx.df.groupby(["workload", "vary", "value_us"])["fct_all_avg_us"].mean()
    spread = {}
    for w in ("websearch", "datamining"):
        if w not in set(ctx.df["workload"]):
            spread[w] = Unavailable(f"no {w} runs at this scale")
            continue
        v = g.loc[w]
        spread[w] = float((v.max() / v.min() - 1) * 100)
    return {"fct": g, "spread": spread}


def _sens_draw(ctx, data):
    g = data["fct"]
    with ctx.figure("fig18-sensitivity", "Fig. 18: overall average FCT of ECN# against pst_interval (target 10 us) "
                    "and pst_target (interval 70 us), normalized to the scenario's 70/10 us", ncols=2) as (fig, axes):
        for ax, vary in zip(axes[0], ["pst_interval", "pst_target"]):
            for w in sorted(set(ctx.df["workload"])):
                if (w, vary) not in g.index.droplevel(2):
                    continue
                s = g.loc[(w, vary)]
                ref = g.loc[(w, "pst_interval", 70)] if (w, "pst_interval", 70) in g.index else s.iloc[0]
                ax.plot(s.index, s / ref, marker="o", label=w)
            ax.set_xlabel(f"{vary} (us)")
            ax.set_title(vary, fontsize=10)
            ax.grid(alpha=0.3)
        axes[0][0].set_ylabel("normalized overall avg FCT")
        axes[0][0].legend(fontsize=8)


def _spread(w):
    return Within(At(("spread", w), f"{w}: (max/min - 1) of the overall avg FCT over all settings (%)",
                     {"workload": [w]}))


register(Experiment(
    id="ecnsharp-sensitivity", paper=PAPER, figures="Fig. 18 (§5.4.2)", scenario="ecnsharp-leafspine",
    title="Sensitivity of ECN# to pst_interval and pst_target",
    claims=[
        ClaimDef("ws", "Web search: overall FCT changes by less than X % across settings", N["sens_ws"],
                 _spread("websearch")),
        ClaimDef("dm", "Data mining: overall FCT changes by less than X % across settings", N["sens_dm"],
                 _spread("datamining")),
    ],
    points=_sens_points, tables=_sens_tables, draw=_sens_draw,
    notes=["The §5.3 set-up (ecnsharp-leafspine) at 60 % load with ECN#; one parameter varied at a time around the "
           "scenario's 70 us / 10 us. The paper's figure does not state the values it tried; ours: pst_interval "
           "50-200 us (around the base and high-percentile RTTs, §3.4), pst_target 5-40 us.",
           "Quick: web search only, 2000 flows, 3 + 3 settings; paper: both workloads, 5 + 4 settings."],
))


# --------------------------------------------------------------------------------------
# ecnsharp-sched (Figs. 19-20)


def _sched_points(scale, seeds):
    return grid("ecnsharp-sched", seeds, [cases("scheme", {"ecn_sharp": ["marking.scheme=ecn_sharp"],
                                                           "tcn": ["marking.scheme=tcn"]})])


SCHED_QUEUES = 3


def _sched_series(f):
    return {"goodput": [_trace_of(f, "goodput_bps", q) for q in range(SCHED_QUEUES)]}


def _trace_of(f, column, q):
    ts = f.timeseries()
    d = ts[(ts["port"] == PORT) & (ts["queue"] == q)]
    return {"t_s": [float(x) for x in d["t_s"]], "v": [float(x) for x in d[column]]}


def _sched_tables(ctx):
    """Per scheme and queue, the mean goodput (Gbps) in each phase (per run, the first 20 ms
    of each phase skipped: slow start, DWRR settling; then the mean over seeds); the short
    flows' average FCT per scheme and ECN#'s reduction against TCN (%)."""
    import numpy as np

    doc = resolve("ecnsharp-sched")
    starts = [_us(f.get("start", "0s")) / 1e6 for f in doc["flows"]]
    end = _us(doc["duration"]) / 1e6
    phases = [(starts[0], starts[1]), (starts[1], starts[2]), (starts[2], end)]
    runs: dict[tuple[str, int], list[list[float]]] = {}
    m = ctx.df.groupby("scheme")["fct_all_avg_us"].mean()
    data = {"phases": phases, "short_fct": m}
    if {"ecn_sharp", "tcn"} <= set(m.index):
        data["short"] = pct_lower(m["tcn"], m["ecn_sharp"])
    try:
        traces = [(r["scheme"], ctx.series(r["key"])["goodput"]) for _, r in ctx.df.iterrows()]
    except NoRunData as e:
        return data | {"goodput": Unavailable(str(e))}
    for scheme, goodput in traces:
        for q, tr in enumerate(goodput):
            t, g = np.array(tr["t_s"]), np.array(tr["v"]) / 1e9
            runs.setdefault((scheme, q), []).append(
                [float(np.mean(g[(t > a + 0.02) & (t <= b)])) if ((t > a + 0.02) & (t <= b)).any() else float("nan")
                 for a, b in phases])
    data["goodput"] = {s: {f"{ph + 1}.{q + 1}": float(np.mean([v[ph] for v in runs[(s, q)]]))
                           for q in range(SCHED_QUEUES) for ph in range(3) if (s, q) in runs}
                       for s in set(ctx.df["scheme"])}
    return data


def _sched_draw(ctx, data):
    phases = data["phases"]
    first = ctx.df.sort_values("seed").groupby("scheme").head(1).set_index("scheme")
    with ctx.figure("fig20-sched", "Fig. 20: (a) per-queue goodput over time with ECN# (DWRR 2:1:1, long flows "
                    "start in queue 1, 2, 3 in turn); (b) short-flow average FCT", ncols=2) as (fig, axes):
        ax = axes[0][0]
        if "ecn_sharp" in first.index:
            for q, tr in enumerate(ctx.series(first.loc["ecn_sharp", "key"])["goodput"]):
                ax.plot(tr["t_s"], [x / 1e9 for x in tr["v"]], label=f"queue {q + 1}")
        for key, n in SCHED_NUMBERS.items():
            ph, q = n.at["phase"] - 1, n.at["queue"] - 1
            ax.hlines(n.value, *phases[ph], colors=f"C{q}", linestyles="--", lw=1.2)
        ax.plot([], [], "k--", label="paper")
        ax.set_xlabel("time (s)")
        ax.set_ylabel("goodput (Gbps)")
        ax.set_title("(a) ECN#: goodput", fontsize=10)
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
        m = data["short_fct"]
        axes[0][1].bar([style(s)["label"] for s in m.index], m.values, color=[style(s).get("color") for s in m.index])
        axes[0][1].set_ylabel("short-flow avg FCT (us)")
        axes[0][1].set_title("(b) short flows", fontsize=10)


# §5.4.3's goodputs with ECN#, by phase and queue (papers/ecnsharp.toml's `at`).
SCHED_NUMBERS = {k: N[k] for k in ("sched_g11", "sched_g21", "sched_g22", "sched_g31", "sched_g32", "sched_g33")}


def _sched_goodput(n):
    ph, q = n.at["phase"], n.at["queue"]
    return Near(At(("goodput", "ecn_sharp", f"{ph}.{q}"), f"ECN#, queue {q} mean goodput (Gbps) in phase {ph} "
                   f"({{phases[{ph - 1}][0]:.2f}}-{{phases[{ph - 1}][1]:.2f}} s, first 20 ms skipped)",
                   {"scheme": ["ecn_sharp"]}))


register(Experiment(
    id="ecnsharp-sched", paper=PAPER, figures="Figs. 19-20 (§5.4.3)", scenario="ecnsharp-sched",
    title="ECN# over DWRR: scheduling preserved, shorter short-flow FCT than TCN",
    claims=[
        *[ClaimDef(k.replace("sched_", ""), f"{'Queue 1 alone' if n.at['phase'] == 1 else 'Queues 1-' + str(n.at['phase'])}"
                   f": queue {n.at['queue']} goodput (Gbps)", n, _sched_goodput(n)) for k, n in SCHED_NUMBERS.items()],
        ClaimDef("short", "ECN#'s short-flow average FCT lower than TCN's", N["sched_short"],
                 Reduction(At(("short",), "short-flow avg FCT of ECN# vs TCN (% lower)"), upto=False)),
    ],
    points=_sched_points, tables=_sched_tables, draw=_sched_draw, series=_sched_series,
    notes=["Scenario ecnsharp-sched: the ns-3 `mq` example's topology (30/40/70 us sender links, 50 us to the "
           "receiver), DWRR weights 2:1:1, TCN 150 us, ECN# 150/200/10 us (ns-3 mq); short flows uniform 3-60 KB "
           "(paper; the code uses 28,000 B), one every 12 ms per queue, from two other senders.",
           "Every flow with a size in this scenario is a short probe flow, so the overall FCT columns are the "
           "short-flow FCT. TCN's DWRR shares are the soundness guard's to check (a weighted queue below its due).",
           "The run is the same at both scales (it is small); paper scale uses 3 seeds."],
))


# --------------------------------------------------------------------------------------
# ecnsharp-dcqcn (Fig. 21) and ecnsharp-pias (Fig. 22)


def _dcqcn_requires():
    from ..api import validate

    try:
        validate("ecnsharp-leafspine", ['transport.cc="dcqcn"'])
    except ScenarioError as e:
        return f"the simulator has no DCQCN transport yet (transport.cc = \"dcqcn\": {e})"
    return None


def _dcqcn_points(scale, seeds):
    loads, flows = ([0.5, 0.9], 2000) if scale == "quick" else ([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9], 20000)
    # DCQCN's CP: RED on the instantaneous queue (w = 1) with the DCQCN paper's K_min = 5 KB
    # and P_max = 1 %, and K_max = 275 KB from the 90th-percentile RTT (220 us x 10 Gbps;
    # §5.4.4: "derived based on high percentile RTTs"). ECN# + DCQCN: the same ramp as
    # ECN#'s probabilistic instantaneous part (in time at 10 Gbps: 4 us .. 220 us), plus its
    # persistent-queue marking with the scenario's pst_interval / pst_target (§3.5).
    red = ["marking.scheme=red", 'marking.red.min_th="5KB"', 'marking.red.max_th="275KB"',
           "marking.red.max_p=0.01", "marking.red.w=1.0", "marking.red.gentle=false"]
    sharp = ["marking.scheme=ecn_sharp", 'marking.ecn_sharp.ins_min="4us"', 'marking.ecn_sharp.ins_max="220us"',
             "marking.ecn_sharp.p_max=0.01"]
    # A lossless fabric, as DCQCN assumes and the simulator §5.4.4 follows (the DCQCN authors'
    # ns3-rdma): PFC on a 9 MB shared buffer per switch (ns3-rdma's broadcom-node.cc), with
    # ecnlab's PFC defaults (dynamic threshold alpha = 1/8, resume 3 KB below: HPCC's
    # simulator, SONiC's Broadcom profiles). Data in priority 1, lossless; ACKs and CNPs in
    # priority 0, strictly first and never paused, as ns3-rdma's (and HPCC's) control queue:
    # a CNP that waited behind paused data would arrive after the congestion it reports. The
    # NICs do not mark: an RDMA NIC's queue is its QPs' backlog behind the line-rate arbiter.
    lossless = ['switch.buffer="9MB"', 'switch.pool="9MB"', "switch.queues=2", "switch.pfc.enabled=true",
                "switch.pfc.queues=[1]", "traffic.0.classes=[1]", "host.ack_dscp=0", "host.nic_marking=false"]
    return grid("ecnsharp-leafspine", seeds, [
        cases("scheme", {"dcqcn": red, "dcqcn_ecn_sharp": sharp}),
        axis("load", loads, "traffic.0.load"),
    ], fixed=['transport.cc="dcqcn"', override("traffic.0.flows", flows), *lossless])


_DCQCN_VIEW = FctView("fct", {}, "dcqcn", "web search", ("fig21-dcqcn", "Fig. 21: web search with DCQCN: FCT "
                                                          "normalized to DCQCN", ("dcqcn", "dcqcn_ecn_sharp")))

build(FctEntry(
    id="ecnsharp-dcqcn", paper=PAPER, figures="Fig. 21 (§5.4.4)", scenario="ecnsharp-leafspine",
    title="ECN# with DCQCN", points=_dcqcn_points, views=[_DCQCN_VIEW], requires=_dcqcn_requires,
    claims=[fct_claim("short", N["dcqcn_short"], _DCQCN_VIEW, "fct_small_avg_us", "dcqcn_ecn_sharp"),
            fct_claim("overall", similar_as(N["dcqcn_overall"], SIMILAR), _DCQCN_VIEW, "fct_all_avg_us",
                      "dcqcn_ecn_sharp", "similar")],
    notes=["The §5.3 leaf-spine (ecnsharp-leafspine) with DCQCN at the hosts (transport.cc = dcqcn, the "
           "simulator's DCQCN defaults: the DCQCN paper's parameters, go-back-N) on a lossless fabric: PFC "
           "(switch.pfc, dynamic threshold alpha = 1/8 of the free buffer, resume 3 KB below) on a 9 MB shared "
           "buffer per switch, as the DCQCN authors' ns3-rdma that §5.4.4 follows ('we mainly refer to the "
           "simulator from DCQCN's paper'); data in a lossless priority, ACKs and CNPs in a strict-priority class "
           "that is never paused (ns3-rdma's control queue); NICs without marking. DCQCN marking: RED on the "
           "instantaneous queue with the DCQCN paper's K_min = 5 KB and P_max = 1 %, K_max = 275 KB from the p90 "
           "RTT (§5.4.4: 'derived based on high percentile RTTs'); ECN# with the same ramp as its probabilistic "
           "instantaneous part (§3.5) plus persistent-queue marking. ecnlab's RED spreads marks with RED's count "
           "(Floyd-Jacobson), where a DCQCN switch marks with the plain ramp probability."],
))


def _pias_points(scale, seeds):
    loads, flows = ([0.5, 0.9], 2000) if scale == "quick" else ([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9], 20000)
    return grid("ecnsharp-pias", seeds, [
        cases("scheme", {"pias": ["marking.scheme=tcn"], "pias_ecn_sharp": ["marking.scheme=ecn_sharp"]}),
        axis("load", loads, "traffic.0.load"),
    ], fixed=[override("traffic.0.flows", flows)])


_PIAS_VIEW = FctView("fct", {}, "pias", "web search", ("fig22-pias", "Fig. 22: web search with PIAS: FCT normalized "
                                                        "to PIAS (TCN at 70 us per queue)", ("pias", "pias_ecn_sharp")))

build(FctEntry(
    id="ecnsharp-pias", paper=PAPER, figures="Fig. 22 (§5.4.5)", scenario="ecnsharp-pias",
    title="ECN# with PIAS flow scheduling", points=_pias_points, views=[_PIAS_VIEW],
    claims=[fct_claim("short", N["pias_short"], _PIAS_VIEW, "fct_small_avg_us", "pias_ecn_sharp"),
            fct_claim("overall", similar_as(N["pias_overall"], SIMILAR), _PIAS_VIEW, "fct_all_avg_us",
                      "pias_ecn_sharp", "similar")],
    notes=["Scenario ecnsharp-pias: the §5.3 leaf-spine with SP ports of 4 queues and PIAS at the hosts "
           "(one level down every 140,000 B, ns-3 large-scale-pias), each queue its own 375 KB (the code's 250-packet "
           "queue disc per class). The paper does not name the baseline's marking; large-scale-pias.cc runs TCN or "
           "ECN# only, so PIAS marks with TCN at ECN#'s 70 us (README 'high').",
           "Quick: loads 50/90 %, 2000 flows; paper: 10-90 %, 20000 flows."],
))


# --------------------------------------------------------------------------------------
# ecnsharp-testbed (Figs. 1, 6): the authors' hardware


def _testbed_requires():
    return ("Fig. 1 measures the processing delays of the authors' servers (network stack, load balancer, "
            "hypervisor) and Fig. 6 the Tofino's approximate division; ecnlab simulates neither: it takes RTT "
            "variation as an input (rtt_variation) and divides exactly")


register(Experiment(
    id="ecnsharp-testbed", paper=PAPER, figures="Figs. 1, 6 (§2.2, §4.3)", scenario=None,
    title="Measurements of the authors' hardware: RTT variation from processing delay, approximate division",
    claims=[ClaimDef("rtt_variation", "Processing delay alone varies the RTT by up to 2.68x (testbed)",
                     N["rtt_variation_testbed"], Near(At(("none",), "-"))),
            ClaimDef("division", "The Tofino's approximate pst_interval / count overlaps the exact value",
                     N["division_overlaps"], Near(At(("none",), "-")))],
    points=lambda scale, seeds: [], tables=lambda ctx: {}, requires=_testbed_requires,
))
