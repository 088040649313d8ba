"""Starting parameters from the papers' own rules, one function per scheme.

Read first: TCN §2.1 Eq. (1) (the standard threshold K = C x RTT x lambda) and §4.1
Eq. (3) (T = RTT x lambda); ECN# §2.1 (lambda per transport), §3.4 (parameter setting);
the dual AQM paper §IV-A/B (RED's classic values, Table I's equal-sharing step); RFC 8289
§4.3-4.4 (CoDel's interval and target). Each rule returns the scenario keys it sets, the
rule in words with the numbers it used, and its source.

lambda: ECN* halves its window per mark, lambda = 1 (TCN footnote 2; ECN# §2.1); DCTCP's
theory gives 0.17 (ECN# §2.1, after the DCTCP analysis), but the papers' own DCTCP
experiments set their thresholds at lambda = 1 (ECN# §5.2: 250 KB = 10 Gbps x 200 us for
DCTCP-RED-Tail, ins_target = 200 us; TCN §6.1: 256 us at a 250 us RTT), so the starting
point is lambda = 1 and the simulated sweep explores below it. Which RTT: a threshold that
must not cost throughput takes a high percentile (ECN# §2.3, §3.4: the 90th), a target for
the standing queue the mean (ECN# §3.4)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .rtt import RttProfile

LAMBDA = {"ecn_star": 1.0, "newreno": 1.0, "dctcp": 1.0, "dctcp_dualq": 1.0, "dcqcn": 1.0}
LAMBDA_SOURCE = {
    "ecn_star": "TCN §2.1 footnote 2; ECN# §2.1: ECN* halves its window, lambda = 1",
    "newreno": "TCN §2.1 footnote 2 (as ECN*)",
    "dctcp": "ECN# §5.2 and TCN §6.1 set DCTCP's thresholds at lambda = 1 (theory: 0.17, ECN# §2.1)",
    "dctcp_dualq": "as DCTCP",
    "dcqcn": "no lambda in the papers for DCQCN; 1 assumed, the sweep explores below",
}
ROUND_ROBIN = {"dwrr", "wrr", "sp_dwrr"}


@dataclass
class Start:
    scheme: str
    params: dict[str, Any]  # scenario keys -> values with units ("marking.tcn.threshold": "90us")
    rule: str
    source: str
    scale_keys: list[str] = field(default_factory=list)  # the keys the sweep scales together
    note: str = ""


def _bytes(x: float) -> str:
    return f"{max(int(round(x)), 1500)}B"


def _us(x: float) -> str:
    return f"{x:.3f}us".replace(".000us", "us")


def starting_points(schemes: list[str], rate_bps: float, rtt: RttProfile, cc: str, scheduler: str,
                    mtu: int = 1500) -> list[Start]:
    lam = LAMBDA.get(cc, 1.0)
    lam_src = LAMBDA_SOURCE.get(cc, "lambda = 1 assumed")
    C = rate_bps / 8  # bytes per second
    hi, mean = rtt.p90_us, rtt.mean_us
    k_std = lam * C * hi * 1e-6
    out = []
    for s in schemes:
        if s == "per_queue" or s == "dctcp_red":
            out.append(Start(s, {"marking.threshold.k": _bytes(k_std)},
                             f"K = C x RTT x lambda = {rate_bps / 1e9:g} Gbps x {hi:g} us (RTT p90) x {lam:g} "
                             f"= {k_std / 1e3:.1f} KB per queue (the standard threshold; DCTCP's K against C x RTT)",
                             f"TCN §2.1 Eq. (1), §3.2.1; DCTCP; lambda: {lam_src}", ["marking.threshold.k"]))
        elif s == "tcn":
            t = lam * hi
            out.append(Start(s, {"marking.tcn.threshold": _us(t)},
                             f"T = RTT x lambda = {hi:g} us (RTT p90) x {lam:g} = {t:g} us sojourn time",
                             f"TCN §4.1 Eq. (3); lambda: {lam_src}", ["marking.tcn.threshold"]))
        elif s == "ecn_sharp":
            ins, pst = lam * hi, lam * mean
            out.append(Start(s, {"marking.ecn_sharp.ins_target": _us(ins), "marking.ecn_sharp.pst_target": _us(pst),
                                 "marking.ecn_sharp.pst_interval": _us(hi)},
                             f"ins_target = lambda x RTT p90 = {ins:g} us (Eq. 2 with a high-percentile RTT); "
                             f"pst_target = lambda x mean RTT = {pst:g} us (>= lambda x avg RTT); "
                             f"pst_interval = RTT p90 = {hi:g} us (around the high-percentile RTT)",
                             f"ECN# §3.4 (and §3.2, Alg. 1); lambda: {lam_src}",
                             ["marking.ecn_sharp.ins_target", "marking.ecn_sharp.pst_target"]))
        elif s == "red":
            out.append(Start(s, {"marking.red.min_th": _bytes(k_std), "marking.red.max_th": _bytes(3 * k_std),
                                 "marking.red.max_p": 0.1, "marking.red.w": 0.002},
                             f"min_th = C x RTT p90 x lambda = {k_std / 1e3:.1f} KB; max_th = 3 min_th; max_p = 0.1; "
                             f"w = 0.002 (Floyd's RED guidelines)",
                             "dual AQM paper §IV-A (RED after Floyd & Jacobson's guidelines); K as TCN §2.1 Eq. (1)",
                             ["marking.red.min_th", "marking.red.max_th"]))
        elif s == "mq_ecn":
            note = "" if scheduler in ROUND_ROBIN else f"MQ-ECN needs a round-robin scheduler, not {scheduler} (TCN §1)"
            out.append(Start(s, {"marking.mq_ecn.k": _bytes(k_std)},
                             f"K_i = quantum_i / T_round x RTT x lambda, with the standard C x RTT p90 x lambda = "
                             f"{k_std / 1e3:.1f} KB as its full-rate value",
                             "MQ-ECN (NSDI 2016) as TCN §3.2.1 describes it; TCN §2.1 Eq. (1)", ["marking.mq_ecn.k"],
                             note))
        elif s == "codel":
            interval = rtt.p99_us
            out.append(Start(s, {"marking.codel.interval": _us(interval), "marking.codel.target": _us(interval / 10),
                                 "marking.codel.mode": "mark"},
                             f"interval = worst-case RTT (p99) = {interval:g} us; target = 10 % of interval "
                             f"= {interval / 10:g} us; marking, not dropping",
                             "RFC 8289 §4.3-4.4 (target 5-10 % of interval)", ["marking.codel.target"]))
        elif s == "dualq":
            bdp = C * rtt.p50_us * 1e-6
            mn = bdp / 4
            out.append(Start(s, {"marking.dualq.classic.min_th": _bytes(mn),
                                 "marking.dualq.classic.max_th": _bytes(3 * mn),
                                 "marking.dualq.classic.max_p": 0.1, "marking.dualq.classic.w": 0.002,
                                 "marking.dualq.scalable.min_th": _bytes(1.73 * mn),
                                 "marking.dualq.scalable.max_th": _bytes(1.73 * mn),
                                 "marking.dualq.scalable.max_p": 1.0, "marking.dualq.scalable.w": 1.0},
                             f"Reno's RED: min_th = BDP/4 = {mn / 1e3:.1f} KB (BDP at RTT p50), max_th = 3 min_th, "
                             f"max_p = 0.1; DCTCP's step K = 1.73 min_th_Reno (equal sharing at BDP/4, Table I); "
                             f"with a slope instead: min_th_Reno/min_th_DCTCP = x/(x-1), x = max_p_DCTCP/max_p_Reno "
                             f"(Eq. 3)",
                             "dual AQM paper §IV-A, §IV-B Table I, §IV-C Eq. (3)", [],
                             "equal sharing needs mixed DCTCP and Reno traffic in one queue; the simulated check "
                             "(one transport) does not test it"))
        else:
            raise KeyError(s)
    return out
