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
PRE_S, AFTER_S, AROUND_S = 0.05, 0.01, 0.0025  # a window of the queue, the drops after the query, the figure's
# A persistent queue is what a busy link keeps: data mining's flows run to 1 GB and its mean
# (12.7 MB) is carried by a few of them, so in some draws no background flow is in flight at
# 4 s (measured: 2 of 3 seeds idle in the 50 ms before it) and the queue then says nothing of
# the marking. The queue is read over the 50 ms windows of the second before the query in
# which the bottleneck carried at least BUSY of its capacity in goodput (the same runs for
# every N: the query has not started).
SPAN_S, BUSY = 1.0, 0.9
# CoDel in drop mode drops background packets all along (0.6-8.3 in every 10 ms of the second
# before the query, by seed): drops the query caused are those past that rate by more than
# three standard deviations of a Poisson count at it.
SIGMAS = 3.0
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


# The query flows: "The size of query flows follows a uniform distribution from 3KB to 60KB"
# (§5.4.1), sent with the scenario's initial window (10 segments of 1460 B).
QUERY_MIN_B, QUERY_MAX_B, IW_SEGMENTS, MSS = 3e3, 60e3, 10, 1460
RTT_US = 40  # the receiver's side of the star: 4 x 10 us


def inferred_buffer_kb() -> float:
    """The bottleneck's buffer that the paper's own onsets imply (§5.3 and §5.4.1 state none):
    ECN# loses nothing up to 150 query flows and loses at 175 ("begins to suffer from packet
    loss when the concurrent senders are increased to 175"; Fig. 17's step is 25), so the
    first round trip's burst of 150 flows fits in the buffer plus what drains in a round trip
    and that of 175 does not; the midpoint (2,190 KB). The authors' code's 250 packets (375 KB)
    cannot hold even 50 flows' burst (690 KB), nor their §5.3 runs' 87.5 KB."""
    n_hi = N["incast_sharp_onset"].value
    lo, hi = (_first_rtt_burst_kb(n, QUERY_MIN_B, QUERY_MAX_B, IW_SEGMENTS * MSS, MSS) for n in (n_hi - 25, n_hi))
    return (lo + hi) / 2 - C_BPS * RTT_US * 1e-6 / 8 / 1e3


def _incast_fixed(scale):
    # The buffer the paper's onsets imply (inferred_buffer_kb): "Other settings are similar to
    # Section 5.3" and §5.3 states no buffer. Tail's K = 275 KB (p90 RTT x C) is what Fig.
    # 16's ~182-packet Tail queue needs; the authors' §5.3 runs used 87.5 KB
    # (ecnsharp-leafspine), which cannot build 182 packets. The queries at 4 s: the data
    # mining background (~90 flows/s at 90 % load, a mean of 12.7 MB) lasts ~10 s in 900 flows.
    ovs = [override("switch.buffer", f"{inferred_buffer_kb():.0f}KB"), override("marking.threshold.k", "275KB"),
           override("traffic.1.start", f"{QUERY_START_S:g}s"), override("duration", f"{QUERY_START_S + 0.3:g}s"),
           override("traffic.0.flows", 900)]
    # Queue samples every 100 us (quick) or 50 us (paper) instead of the scenario's 10 us: a
    # 4.3 s run at 10 us writes 270 MB of time series; Fig. 16's 5 ms window keeps 100 points.
    ovs.append(override("metrics.sample_interval", "100us" if scale == "quick" else "50us"))
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


def _busy_windows(t, q, goodput_bps, dt: float) -> list[tuple[float, float]]:
    """(utilization, mean queue in bytes) of each PRE_S window of the SPAN_S before the
    query, from the sampled rows (a sample without a row is an idle link, an empty queue)."""
    out = []
    for w in range(round(SPAN_S / PRE_S)):
        lo = QUERY_START_S - SPAN_S + w * PRE_S
        m = (t >= lo) & (t < lo + PRE_S)
        out.append((float(goodput_bps[m].sum()) * dt / PRE_S / C_BPS, float(q[m].sum()) * dt / PRE_S))
    return out


def _series(files):
    """What the claims read of a run: the bottleneck's mean queue (packets) over the busy
    windows of the second before the query, its drops in the 10 ms after (and per 10 ms in
    the second before: the background's own), its queue around the query (the figure), the
    query flows' completion times, and what the burst arithmetic needs of the scenario."""
    import numpy as np

    doc = files.scenario()
    dt = _us(doc.get("metrics", {}).get("sample_interval", "10us")) / 1e6
    p = files.timeseries_of(PORT, 0, (QUERY_START_S - SPAN_S, QUERY_START_S + AFTER_S))
    t, q = p["t_s"].to_numpy(float), p["qlen_bytes"].to_numpy(float)
    windows = _busy_windows(t, q, p["goodput_bps"].to_numpy(float), dt)
    busy_q = [qb for b, qb in windows if b >= BUSY]
    around = (t >= QUERY_START_S - AROUND_S) & (t <= QUERY_START_S + AROUND_S)
    f = files.flows()
    spec_q = len(doc.get("flows", [])) + 1  # flows.csv `spec` of the incast entry
    fq = f[f["spec"] == spec_q] if len(f) else f
    tr, qe = doc.get("transport", {}), doc["traffic"][1]
    drops = p["drops"].to_numpy(float)
    before = (t >= QUERY_START_S - SPAN_S) & (t < QUERY_START_S)
    return {"busy_queue_pkts": float(np.mean(busy_q)) / MTU if busy_q else None, "busy_windows": len(busy_q),
            "drops_after": int(drops[(t >= QUERY_START_S) & (t <= QUERY_START_S + AFTER_S)].sum()),
            "drops_background": float(drops[before].sum()) * AFTER_S / SPAN_S,
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
    """Per (scheme, N), means over seeds: the queue over the busy windows before the query,
    the drops after it, the query flows' average and p99 completion time; per scheme, the
    smallest N whose drops stand out of the background's; the first seed's queue around the
    100-flow query (the figure)."""
    import numpy as np

    per: dict[tuple[str, int], list[dict]] = {}
    around = {}
    for _, r in ctx.df.sort_values("seed").iterrows():
        s, n = r["scheme"], int(r["n"])
        x = ctx.series(r["key"])
        qct = np.array(x["qct_us"])
        per.setdefault((s, n), []).append({
            "queue": x["busy_queue_pkts"], "drops": x["drops_after"],
            "excess": x["drops_after"] - x["drops_background"] > SIGMAS * max(x["drops_background"], 1.0) ** 0.5,
            "qct_avg": float(qct.mean()) if len(qct) else None,
            "qct_p99": float(np.quantile(qct, 0.99)) if len(qct) else None, "burst": x["burst"]})
        if n == N["incast_queue_tail"].at["n"] and s not in around:
            around[s] = x["around"]
    mean = {}
    for (s, n), xs in per.items():
        for k in ("queue", "drops", "excess", "qct_avg", "qct_p99"):
            vals = [v[k] for v in xs if v[k] is not None]
            mean.setdefault(k, {}).setdefault(s, {})[n] = float(np.mean(vals)) if vals else None
    ns = sorted({n for _, n in per})
    # Onset: the smallest N at which the query's drops stand out of the background's in a
    # majority of seeds (``excess`` is a 0/1 per seed: its mean over seeds > 0.5).
    onset = {s: min([n for n in ns if (mean["excess"].get(s, {}).get(n) or 0) > 0.5], default=None)
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


_WHAT = {"queue": f"mean queue (packets) over the {PRE_S * 1e3:g} ms windows of the {SPAN_S:g} s before the query "
                  f"with the bottleneck's goodput >= {BUSY:.0%} of 10 Gbps",
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
              f"{style(s)['label']}: the smallest N whose drops in the 10 ms after the query pass the background's rate "
              f"by over {SIGMAS:g} sigma in most seeds (none up to the largest N: that + 25)",
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
    # Six seeds at paper scale: at three the queues' intervals straddled their bands (ECN#
    # 3.5/4.5/13.6 packets, Tail 119/82/125: a busy background is a matter of the draw).
    points=_incast_points, series=_series, seeds={"quick": 3, "paper": 6},
    tables=lambda ctx: _with_burst(_qct_views(_incast_tables(ctx))), draw=_incast_draw,
    # Timeouts are what Fig. 17 measures; the background runs on past the window the claims read
    # (its flows' FCTs are not read), so flows unfinished at the end are its design.
    guard_expected=("rto_stall", "cut_by_duration"),
    notes=["Scenario ecnsharp-incast (16 senders, ns-3 queue-track link delays, data mining at 90 % load, CoDel "
           "10/240 us drop mode, ECN# 50/150/10 us, RTO_min 1 ms) with Tail K 275 KB (p90 RTT x C: its Tail queue of "
           "~182 packets needs that K; neither the ns-3 queue-track code, K = 40 packets, nor the authors' §5.3 runs, "
           "87.5 KB, ecnsharp-leafspine, can produce it).",
           f"The bottleneck's buffer, {inferred_buffer_kb():.0f} KB, is inferred from the paper's onsets (§5.3 and "
           "§5.4.1 state none): ECN# loses nothing at N = 150 and loses at 175, so the first round trip's burst of 150 "
           "query flows (2,068 KB on the wire) fits in the buffer plus a round trip's drain and that of 175 (2,413 KB) "
           "does not; the midpoint. ECN#'s onset is therefore no evidence here; CoDel's onset and drops, and every "
           "scheme's drops at N = 100, are. With the authors' code's 250 packets (375 KB, build aff0c34c) every scheme "
           "drops 650-750 packets at N = 100 (the burst is 1,379 KB).",
           "N query flows (traffic.1.fanout) start together at 4 s (§5.4.1), the background from 0 (900 flows, "
           "enough to last past them); the queue is read over the 50 ms windows of the second before the query "
           "with the bottleneck's goodput >= 90 % of its rate (a heavy-tailed background leaves it idle in some "
           "draws), drops in the 10 ms after.",
           "N = 16 is the authors' ns-3 code (queue-track: each of the 16 senders starts one query flow).",
           "A scheme starts losing at the smallest N whose drops in the 10 ms after the query pass its own drops per "
           "10 ms in the second before (CoDel drops background packets all along) by over 3 Poisson sigma, in most "
           "seeds.",
           "Quick: N = 16, 25, 50, 100, 150, 175, 200 and the queue sampled every 100 us; paper: N = 16 and 25..200 "
           "step 25, sampled every 50 us."],
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
