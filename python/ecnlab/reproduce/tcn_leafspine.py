"""tcn-leafspine: the TCN paper's large-scale simulations (§6.2, Figs. 10-13): a 144-host
leaf-spine with SP + 7 (or 31) DWRR/WFQ queues, PIAS and four workloads. Its numbers:
``papers/tcn.toml``."""

from __future__ import annotations

import json

from ..sweep import override
from .base import ClaimDef, Unavailable, axis, cases, grid
from .fct import FctEntry, FctView, build, fct_claim
from .numbers import TCN as N
from .numbers import ratio_of
from .rules import At, Fct, Fn, Grows, Ratio

PAPER = N["perport_8"].paper
SMALL_BYTES = 100_000  # the papers' small flows: (0, 100 KB]


def _ls_services(queues: int) -> list[list[int]]:
    """The service queues (1..queues-1; queue 0 is the strict one) of each workload entry:
    service s runs workload s mod 4 (1 web search, 2 Hadoop, 3 data mining, 0 cache), the
    TCN-NS2 scripts' mapping (REFERENCE-IMPLEMENTATIONS.md §2.11); the scenario's entries are
    in that order. 8 queues: [1, 5], [2, 6], [3, 7], [4]."""
    return [[s for s in range(1, queues) if s % 4 == (w + 1) % 4] for w in range(4)]


def _ls_load(load: float, flows: int, queues: int = 8):
    """Load L and the flow count split over the 4 workload entries by their services' shares
    (7 services: 2/7, 2/7, 2/7, 1/7; 31 services: 8/31, 8/31, 8/31, 7/31)."""
    ovs = []
    for i, svc in enumerate(_ls_services(queues)):
        sh = len(svc) / (queues - 1)
        ovs.append(override(f"traffic.{i}.load", round(load * sh, 10)))
        ovs.append(override(f"traffic.{i}.flows", max(1, round(flows * sh))))
        if queues != 8:
            ovs.append(f"traffic.{i}.classes={json.dumps(svc)}")
    return ovs


# Each variant: transport, scheduler, queues per port (1 strict + the rest DWRR/WFQ).
LS_VARIANTS = {"dctcp_sp_dwrr": ("dctcp", "sp_dwrr", 8), "dctcp_sp_wfq": ("dctcp", "sp_wfq", 8),
               "ecn_star_sp_dwrr": ("ecn_star", "sp_dwrr", 8), "ecn_star_sp_dwrr_32q": ("ecn_star", "sp_dwrr", 32)}
QUICK_VARIANTS = ("dctcp_sp_dwrr", "dctcp_sp_wfq")


def _leafspine_points(scale, seeds):
    if scale == "quick":
        loads, flows, variants = [0.5, 0.9], 1500, {k: LS_VARIANTS[k] for k in QUICK_VARIANTS}
    else:
        loads, flows, variants = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9], 50000, LS_VARIANTS
    pts = []
    for name, (cc, sched, queues) in variants.items():
        thr = ["marking.tcn.threshold=\"78us\"", "marking.threshold.k=\"97.5KB\""] if cc == "dctcp" else \
            ["marking.tcn.threshold=\"100.8us\"", "marking.threshold.k=\"126KB\""]  # 84 packets (§6.2.2)
        pts += grid("tcn-leafspine", seeds, [
            cases("variant", {name: [f"transport.cc={json.dumps(cc)}", f"switch.scheduler.kind={json.dumps(sched)}",
                                     f"switch.queues={queues}"] + thr}),
            cases("scheme", {"per_queue": ["marking.scheme=per_queue"], "tcn": ["marking.scheme=tcn"]}),
            axis("load", loads, lambda L, q=queues: _ls_load(L, flows, q)),
        ])
    return pts


def _series(files):
    """The small flows' count, timeouts and mean FCT, and the run's least RTO (us): the part of
    a TCN vs per-queue gap that is timeouts (flows.csv is not kept)."""
    from ..soundness import Run

    f = files.flows()
    f = f[f["size"].notna()] if len(f) else f
    small = f[f["size"].astype(float) <= SMALL_BYTES] if len(f) else f
    return {"small": {"count": int(len(small)), "timeouts": int(small["timeouts"].fillna(0).sum()) if len(small) else 0,
                      "fct_avg_us": float(small["fct_us"].mean()) if len(small) else None},
            "all_timeouts": int(f["timeouts"].fillna(0).sum()) if len(f) else 0,
            "rto_us": Run({}, files.scenario()).rto_s() * 1e6}


_FIGS = {"dctcp_sp_dwrr": ("fig10-sp-dwrr", "Fig. 10: SP/DWRR (1+7 queues), DCTCP", "SP/DWRR DCTCP"),
         "dctcp_sp_wfq": ("fig11-sp-wfq", "Fig. 11: SP/WFQ (1+7 queues), DCTCP", "SP/WFQ DCTCP"),
         "ecn_star_sp_dwrr": ("fig12-ecn-star", "Fig. 12: SP/DWRR (1+7 queues), ECN*", "SP/DWRR ECN*"),
         "ecn_star_sp_dwrr_32q": ("fig13-ecn-star-32q", "Fig. 13: SP/DWRR (1+31 queues), ECN*", "SP/DWRR ECN* 32q")}
_VIEWS = [FctView(v, {"variant": v}, "per_queue", tag,
                  (fig, cap + ", 144-host leaf-spine, FCT normalized to per-queue standard threshold", ("per_queue", "tcn")))
          for v, (fig, cap, tag) in _FIGS.items()]
_V = {v.name: v for v in _VIEWS}


def _extra(ctx, data):
    """Per variant and load, the small flows' timeouts per scheme (mean over seeds), their
    ratio TCN / per-queue, and what timeouts make of the small flows' mean FCT; per-queue
    ECN's timeouts (all flows) of ECN* with 32 queues over 8."""
    out = {}
    timeouts, share = {}, {}
    for (v, load), d in ctx.df.groupby(["variant", "load"]):
        per = {}
        for s, g in d.groupby("scheme"):
            xs = [ctx.series(k) for k in g["key"]]
            per[s] = {"small": sum(x["small"]["timeouts"] for x in xs) / len(xs),
                      "all": sum(x["all_timeouts"] for x in xs) / len(xs),
                      "n": sum(x["small"]["count"] for x in xs) / len(xs),
                      "fct": sum(x["small"]["fct_avg_us"] or 0 for x in xs) / len(xs), "rto": xs[0]["rto_us"]}
        timeouts.setdefault(v, {})[float(load)] = per
        if {"tcn", "per_queue"} <= set(per) and per["per_queue"]["small"] > 0:
            out.setdefault(f"to_ratio_{v}", {})[float(load)] = per["tcn"]["small"] / per["per_queue"]["small"]
        share.setdefault(v, {})[float(load)] = "; ".join(
            f"{s} {p['fct']:.0f} us, of which timeouts {p['small'] * p['rto'] / max(p['n'], 1):.0f} us "
            f"({p['small']:.0f} x {p['rto'] / 1e3:g} ms over {p['n']:.0f} small flows)" for s, p in per.items())
    out["timeouts"], out["timeout_share"] = timeouts, share
    top = share.get("dctcp_sp_dwrr", {})
    out["timeout_text"] = f"at load {max(top):.0%}: {top[max(top)]}" if top else ""
    pq = {v: timeouts.get(v, {}).get(0.9, {}).get("per_queue", {}).get("all") for v in ("ecn_star_sp_dwrr",
                                                                                          "ecn_star_sp_dwrr_32q")}
    out["queue_timeouts"] = (pq["ecn_star_sp_dwrr_32q"] / pq["ecn_star_sp_dwrr"] if all(pq.values())
                             else Unavailable("needs ECN* with 8 and 32 queues at 90 % load (paper scale)"))
    return out


def _gain_fct(variant: str) -> Fn:
    """TCN's small-flow avg FCT reduction at the paper's load (90 %) in one variant."""
    f, load = Fct(variant, "fct_small_avg_us", "tcn"), N["ls_ecn_star_8q"].at["load"]
    return Fn(lambda d, at: f.read(d, load), f"{_FIGS[variant][2]}: TCN's small-flow avg FCT at load {load:.0%}, "
              "% lower than per-queue", {"variant": [variant]})


build(FctEntry(
    id="tcn-leafspine", paper=PAPER, figures="Figs. 10-13 (§6.2)", scenario="tcn-leafspine",
    title="144-host leaf-spine with SP + 7 (or 31) DWRR/WFQ queues, PIAS, 4 workloads",
    points=_leafspine_points, views=_VIEWS, extra=_extra, series=_series,
    extra_keys=("timeouts", "timeout_share", "timeout_text", "to_ratio_dctcp_sp_dwrr", "queue_timeouts"),
    claims=[
        fct_claim("small_p99", N["ls_small_p99"], _V["dctcp_sp_dwrr"], "fct_small_p99_us", "tcn"),
        fct_claim("small_avg", N["ls_dwrr_small_avg"], _V["dctcp_sp_dwrr"], "fct_small_avg_us", "tcn"),
        fct_claim("small_p99_wfq", N["ls_small_p99"], _V["dctcp_sp_wfq"], "fct_small_p99_us", "tcn"),
        fct_claim("small_avg_wfq", N["ls_wfq_small_avg"], _V["dctcp_sp_wfq"], "fct_small_avg_us", "tcn"),
        ClaimDef("timeouts", "Far fewer small-flow timeouts with TCN at 90 % load (SP/DWRR; TCN / per-queue)",
                 ratio_of(N["ls_timeouts_tcn"], N["ls_timeouts_pq"], "ls_timeouts_ratio"),
                 Ratio(At(("to_ratio_dctcp_sp_dwrr",), "small-flow timeouts, TCN / per-queue (small flows' mean FCT "
                          "{timeout_text})",
                          {"variant": ["dctcp_sp_dwrr"]}, axis="load"))),
        fct_claim("large", N["ls_dwrr_large"], _V["dctcp_sp_dwrr"], "fct_large_avg_us", "tcn", "within"),
        fct_claim("large_wfq", N["ls_wfq_large"], _V["dctcp_sp_wfq"], "fct_large_avg_us", "tcn", "within"),
        fct_claim("large_ecn_star", N["ls_ecn_star_large"], _V["ecn_star_sp_dwrr"], "fct_large_avg_us", "tcn",
                  "within"),
        ClaimDef("queues_gain", "ECN* at 90 % load: TCN's small-flow gain larger with 32 queues than with 8",
                 N["ls_ecn_star_32q"],
                 Grows(_gain_fct("ecn_star_sp_dwrr_32q"), low=_gain_fct("ecn_star_sp_dwrr"),
                       low_number=N["ls_ecn_star_8q"])),
        ClaimDef("queues_timeouts", "ECN* at 90 % load: per-queue ECN's timeouts grow with the queues (32 / 8)",
                 ratio_of(N["ls_pq_timeouts_32q"], N["ls_pq_timeouts_8q"], "ls_pq_timeouts_ratio"),
                 Ratio(At(("queue_timeouts",), "per-queue ECN's timeouts (all flows) at 90 % load, 32 queues / 8",
                          {"variant": ["ecn_star_sp_dwrr", "ecn_star_sp_dwrr_32q"], "scheme": ["per_queue"]}),
                       below=False)),
    ],
    notes=["Scenario tcn-leafspine: 12x12 leaf-spine, 10 Gbps, base RTT 85.2 us, 300 KB shared buffer per port, "
           "SP + 7 DWRR (quantum 1.5 KB), DCTCP IW 16, RTO_min = RTO_init = 5 ms, PIAS 100 KB, K = 65 packets / "
           "T = 78 us (ECN*: 84 packets / 100.8 us, TCN-NS2 run script).",
           "Load L is split over the 4 workload entries by their services' shares (2/7, 2/7, 2/7, 1/7).",
           "Quick: DCTCP with SP/DWRR and SP/WFQ, loads 50/90 %, 1500 flows; paper: 10-90 %, 50,000 flows, SP/DWRR and "
           "SP/WFQ with DCTCP and SP/DWRR with ECN*, 8 queues and (Fig. 13) 32 queues: 1 strict + 31 DWRR, "
           "service s in 1..31 running workload s mod 4 as the TCN-NS2 scripts do, load split 8/31, 8/31, 8/31, "
           "7/31."],
    scale_notes={"quick": "Quick scale: 1500 flows per load instead of 50,000 (the 99th percentile of small "
                 "flows rests on ~8 flows); the run lasts until the last large flow has drained."},
))
