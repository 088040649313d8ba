"""ecnsharp-incast: the ECN# paper's microscopic view (§5.4.1, Figs. 16-17): 16 senders to 1
receiver with data mining background traffic, and N concurrent query flows at 4 s. Its
numbers: ``papers/ecnsharp.toml``."""

from __future__ import annotations

from ..scenario import ScenarioError
from ..sweep import override
from .base import ClaimDef, Experiment, Unavailable, axis, cases, grid, register
from .numbers import ECNSHARP as N
from .numbers import similar_as
from .plots import style
from .rules import At, Direction, Fn, Grows, Near, Within, Zero

PAPER = N["incast_start"].paper
PORT = "s0->h0"
C_BPS = 10e9
QUERY_START_S = N["incast_start"].value  # §5.4.1: "We start N (100 in default) concurrent query flows at 4s."
PRE_S, AFTER_S, AROUND_S = 0.05, 0.01, 0.0025  # the queue before the query, the drops after it, the figure's window
MTU = 1500


def _us(text: str) -> float:
    from .. import _core

    try:
        return _core.parse_unit("time", str(text)) / 1e3
    except ValueError as e:
        raise ScenarioError(str(e)) from None


def _bytes(text) -> float:
    from .. import _core

    try:
        return float(_core.parse_unit("size", str(text)))
    except ValueError as e:
        raise ScenarioError(str(e)) from None


def _incast_fixed(scale):
    # §5.4.1: "Other settings are similar to Section 5.3": the §5.3 runs' 250-packet (375 KB)
    # buffers (the authors' code; §5.3 states no buffer). Tail's K = 275 KB (p90 RTT x C) is
    # what Fig. 16's ~182-packet Tail queue needs; the authors' §5.3 runs used 87.5 KB
    # (ecnsharp-leafspine), which cannot build 182 packets. The queries at 4 s: the data
    # mining background (~160 flows/s at 90 % load) needs ~700 flows to last past them.
    ovs = [override("switch.buffer", "375KB"), override("marking.threshold.k", "275KB"),
           override("traffic.1.start", f"{QUERY_START_S:g}s"), override("duration", f"{QUERY_START_S + 0.3:g}s"),
           override("traffic.0.flows", 900)]
    if scale == "quick":  # 100 us queue samples instead of 10 us: 10x fewer time-series rows
        ovs.append(override("metrics.sample_interval", "100us"))
    return ovs


def _incast_points(scale, seeds):
    # N = 16: the authors' ns-3 code (queue-track) starts one query flow per sender, 16 per
    # query (REFERENCE-IMPLEMENTATIONS §4.4), where "no drops" can hold (see the claim).
    ns = [16, 25, 50, 100, 150, 175, 200] if scale == "quick" else [16, 25, 50, 75, 100, 125, 150, 175, 200]
    return grid("ecnsharp-incast", seeds, [
        cases("scheme", {"tail": ["marking.scheme=per_queue"], "codel": ["marking.scheme=codel"],
                         "ecn_sharp": ["marking.scheme=ecn_sharp"]}),
        axis("n", ns, "traffic.1.fanout"),
    ], fixed=_incast_fixed(scale))


def _series(files):
    """What the claims read of a run: the bottleneck's mean queue (packets) in the 50 ms
    before the query, its drops in the 10 ms after, its queue around the query (the figure),
    the query flows' completion times, and what the burst arithmetic needs of the scenario."""
    import numpy as np

    ts, doc = files.timeseries(), files.scenario()
    p = ts[(ts["port"] == PORT) & (ts["queue"] == 0)]
    t, q = p["t_s"].to_numpy(float), p["qlen_bytes"].to_numpy(float)
    pre = (t >= QUERY_START_S - PRE_S) & (t < QUERY_START_S)
    around = (t >= QUERY_START_S - AROUND_S) & (t <= QUERY_START_S + AROUND_S)
    f = files.flows()
    spec_q = len(doc.get("flows", [])) + 1  # flows.csv `spec` of the incast entry
    fq = f[f["spec"] == spec_q] if len(f) else f
    tr, qe = doc.get("transport", {}), doc["traffic"][1]
    return {"pre_queue_pkts": float(np.mean(q[pre])) / MTU if pre.any() else None,
            "drops_after": int(p["drops"].to_numpy()[(t >= QUERY_START_S) & (t <= QUERY_START_S + AFTER_S)].sum()),
            "around": {"t_s": list(t[around] - QUERY_START_S), "pkts": list(q[around] / MTU)},
            "qct_us": [float(x) for x in fq["fct_us"].dropna()],
            "burst": {"iw": int(tr.get("init_cwnd", 10)), "mss": int(tr.get("mss", 1460)),
                      "buf": doc.get("switch", {}).get("buffer", "?"), "smin": _bytes(qe["size_min"]),
                      "smax": _bytes(qe["size_max"]), "rtt_us": 4 * _us(doc["topology"]["link_delay"])}}


def _first_rtt_burst_kb(n, size_min, size_max, iw_bytes, mss):
    """Wire bytes (KB) that n query flows of U(size_min, size_max) payload put into the
    network in their first RTT: each sends min(size, IW), E[min(U, c)] for U ~ U(a, b) is
    (c^2 - a^2) / (2 (b - a)) + c (b - c) / (b - a)."""
    a, b, c = size_min, size_max, min(iw_bytes, size_max)
    e = (c * c - a * a) / (2 * (b - a)) + c * (b - c) / (b - a) if c > a else c
    return n * e * (mss + 40) / mss / 1e3


def _incast_tables(ctx):
    """Per (scheme, N), means over seeds: the queue before the query, the drops after it, the
    query flows' average and p99 completion time; per scheme, the smallest N with drops; the
    first seed's queue around the 100-flow query (the figure)."""
    import numpy as np

    per: dict[tuple[str, int], list[dict]] = {}
    around = {}
    for _, r in ctx.df.sort_values("seed").iterrows():
        s, n = r["scheme"], int(r["n"])
        x = ctx.series(r["key"])
        qct = np.array(x["qct_us"])
        per.setdefault((s, n), []).append({
            "queue": x["pre_queue_pkts"], "drops": x["drops_after"],
            "qct_avg": float(qct.mean()) if len(qct) else None,
            "qct_p99": float(np.quantile(qct, 0.99)) if len(qct) else None, "burst": x["burst"]})
        if n == N["incast_queue_tail"].at["n"] and s not in around:
            around[s] = x["around"]
    mean = {}
    for (s, n), xs in per.items():
        for k in ("queue", "drops", "qct_avg", "qct_p99"):
            vals = [v[k] for v in xs if v[k] is not None]
            mean.setdefault(k, {}).setdefault(s, {})[n] = float(np.mean(vals)) if vals else None
    ns = sorted({n for _, n in per})
    onset = {s: min([n for n in ns if (mean["drops"].get(s, {}).get(n) or 0) > 0], default=None)
             for s in ("tail", "codel", "ecn_sharp")}
    data = {"per": per, "ns": ns, "mean": mean, "around": around, "onset": onset,
            "burst": next(iter(per.values()))[0]["burst"] if per else None}
    qr = {}
    for n in ns:
        a, b = mean["qct_avg"].get("ecn_sharp", {}).get(n), mean["qct_avg"].get("tail", {}).get(n)
        c = mean["qct_avg"].get("codel", {}).get(n)
        qr[n] = {"like_tail": (a / b - 1) * 100 if a and b else None, "vs_codel": (c - a) / c * 100 if a and c else None}
    data["qct"] = qr
    return data


def _incast_draw(ctx, data):
    mean, ns, around = data["mean"], data["ns"], data["around"]
    paper_q = {"ecn_sharp": N["incast_queue_sharp"], "tail": N["incast_queue_tail"]}
    with ctx.figure("fig16-queue", "Fig. 16: bottleneck queue (packets) around the 100-flow query burst "
                    "(time 0 = query start, at 4 s; first seed)", ncols=3) as (fig, axes):
        for ax, s in zip(axes[0], ["tail", "codel", "ecn_sharp"]):
            if s in around:
                ax.plot([t * 1e3 for t in around[s]["t_s"]], around[s]["pkts"], lw=0.7, color=style(s)["color"])
            if s in paper_q:
                ax.axhline(paper_q[s].value, color="k", ls="--", lw=1, label=f"paper: {paper_q[s].value:g} packets")
                ax.legend(fontsize=8)
            ax.set_title(style(s)["label"], fontsize=10)
            ax.set_xlabel("time (ms)")
            ax.grid(alpha=0.3)
        axes[0][0].set_ylabel("queue length (packets)")
    with ctx.figure("fig17-query", "Fig. 17: query flows: average and 99th percentile completion time, and "
                    "drops at the bottleneck in the 10 ms after the query, against N (means over seeds)",
                    ncols=3) as (fig, axes):
        for s in ["tail", "codel", "ecn_sharp"]:
            st = style(s)
            for ax, k in zip(axes[0], ("qct_avg", "qct_p99", "drops")):
                xs = [n for n in ns if mean[k].get(s, {}).get(n) is not None]
                ax.plot(xs, [mean[k][s][n] for n in xs], **st)
        for ax, tl in zip(axes[0], ["avg QCT (us)", "p99 QCT (us)", "drops"]):
            ax.set_xlabel("concurrent query flows N")
            ax.set_title(tl, fontsize=10)
            ax.grid(alpha=0.3)
        axes[0][2].legend(fontsize=8)


def _at_n(key, s):
    """``mean[key][s]`` by N: judged at the paper's N."""
    return At(("mean", key, s), f"{style(s)['label']}: {_WHAT[key]}, mean over seeds",
              {"scheme": [s]}, axis="n")


_WHAT = {"queue": "mean queue (packets) in the 50 ms before the query",
         "drops": "drops at the bottleneck in the 10 ms after the query", "qct_avg": "query flows' avg completion (us)"}


def _burst_text(data, n) -> str:
    b = data.get("burst")
    if not b:
        return ""
    burst = _first_rtt_burst_kb(n, b["smin"], b["smax"], b["iw"] * b["mss"], b["mss"])
    drained = C_BPS * b["rtt_us"] * 1e-6 / 8 / 1e3
    fits = burst <= _bytes(b["buf"]) / 1e3 + drained
    return (f"{n} flows of U({b['smin'] / 1e3:g}, {b['smax'] / 1e3:g}) KB send min(size, IW = {b['iw']} x {b['mss']} B) "
            f"in their first RTT, {burst:.0f} KB on the wire on average, against a {b['buf']} buffer plus ~{drained:.0f} "
            f"KB drained in a {b['rtt_us']:.0f} us RTT: {'it fits' if fits else 'it cannot fit whatever the marking'}")


def _drops(n):
    return Fn(lambda d, at: d["mean"]["drops"].get("ecn_sharp", {}).get(n) if n in d.get("ns", [])
              else Unavailable(f"no run with N = {n} at this scale"),
              f"ECN#'s drops at the bottleneck in the 10 ms after an N = {n} query ({{burst_{n}}})",
              {"scheme": ["ecn_sharp"], "n": [n]})


def _onset(s):
    return Fn(lambda d, at: d["onset"][s] if d["onset"][s] is not None else max(d["ns"]) * 1.0 + 25,
              f"{style(s)['label']}: the smallest N with drops after the query (none up to the largest N: that + 25)",
              {"scheme": [s]})


def _with_burst(data):
    """The burst arithmetic of the paper's N = 100 and the authors' code's N = 16, as notes read it."""
    return data | {"burst_100": _burst_text(data, 100), "burst_16": _burst_text(data, 16)}


register(Experiment(
    id="ecnsharp-incast", paper=PAPER, figures="Figs. 16-17 (§5.4.1)", scenario="ecnsharp-incast",
    title="Queue occupancy and incast: 16-to-1 with data mining background and query bursts",
    claims=[
        ClaimDef("q_ecnsharp", "ECN# keeps a low persistent queue (packets, N = 100)", N["incast_queue_sharp"],
                 Near(_at_n("queue", "ecn_sharp"))),
        ClaimDef("q_tail", "DCTCP-RED-Tail's queue (packets, N = 100)", N["incast_queue_tail"],
                 Near(_at_n("queue", "tail"))),
        ClaimDef("drops_ecnsharp", "No drops for ECN# with 100 concurrent query flows", N["incast_no_drops"],
                 Zero(_drops(100))),
        ClaimDef("drops_ecnsharp16", "No drops for ECN# with the 16 query flows the authors' code starts",
                 N["incast_no_drops"], Zero(_drops(16))),
        ClaimDef("drops_codel", "CoDel drops packets with 100 query flows", N["incast_codel_drops"],
                 Near(_at_n("drops", "codel"))),
        ClaimDef("onset", "ECN# starts losing at more concurrent senders than CoDel (N)", N["incast_sharp_onset"],
                 Grows(_onset("ecn_sharp"), low=_onset("codel"), low_number=N["incast_codel_onset"])),
        ClaimDef("qct_like_tail", "Query completion like DCTCP-RED-Tail's (ECN#'s avg QCT, % off Tail's, farthest N)",
                 similar_as(N["incast_qct_like_tail"], N["star_ws_overall"]),
                 Within(At(("qct_n", "like_tail"), "ECN#'s avg query completion, % off Tail's",
                           {"scheme": ["ecn_sharp", "tail"]}, axis="n"))),
        ClaimDef("qct_vs_codel", "Query completion largely better than CoDel's from N = 100 on (% lower, smallest)",
                 N["incast_qct_beats_codel"], Direction(At(("qct_from_100", "vs_codel"), "ECN#'s avg query completion, "
                                                           "% lower than CoDel's", {"scheme": ["ecn_sharp", "codel"]},
                                                           axis="n"), over="weakest")),
    ],
    points=_incast_points, series=_series,
    tables=lambda ctx: _with_burst(_qct_views(_incast_tables(ctx))), draw=_incast_draw,
    # Timeouts are what Fig. 17 measures; the background runs on past the window the claims read
    # (its flows' FCTs are not read), so flows unfinished at the end are its design.
    guard_expected=("rto_stall", "cut_by_duration"),
    notes=["Scenario ecnsharp-incast (16 senders, ns-3 queue-track link delays, data mining at 90 % load, CoDel "
           "10/240 us drop mode, ECN# 50/150/10 us, RTO_min 1 ms) with the §5.3 runs' buffer (375 KB, the authors' "
           "code) and Tail K 275 KB (p90 RTT x C): the paper says 'other settings are similar to Section 5.3', and "
           "its Tail queue of ~182 packets needs that K; neither the ns-3 queue-track code (120-packet buffer, K = 40 "
           "packets) nor the authors' §5.3 runs (87.5 KB, ecnsharp-leafspine) can produce it.",
           "N query flows (traffic.1.fanout) start together at 4 s (§5.4.1), the background from 0 (900 flows, "
           "enough to last past them); the queue is read in the 50 ms before the query, drops in the 10 ms after.",
           "N = 16 is the authors' ns-3 code (queue-track: each of the 16 senders starts one query flow).",
           "Quick: N = 16, 25, 50, 100, 150, 175, 200 and the queue sampled every 100 us; paper: N = 16 and 25..200 "
           "step 25, sampled every 10 us (the scenario's)."],
))


def _qct_views(data):
    """The QCT ratios by N as mappings the claims read: ECN# / Tail at every N, and ECN#'s
    gain over CoDel from the N at which the paper's CoDel starts losing."""
    qr = data["qct"]
    data["qct_n"] = {"like_tail": {n: v["like_tail"] for n, v in qr.items() if v["like_tail"] is not None}}
    start = N["incast_codel_onset"].value
    data["qct_from_100"] = {"vs_codel": {n: v["vs_codel"] for n, v in qr.items()
                                         if n >= start and v["vs_codel"] is not None}}
    return data
