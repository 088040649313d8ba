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

import math
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
SIGNIFICANT = 3  # a rule of thumb has no seven significant digits (issue 31: k=3118622B)


@dataclass
class Start:
    scheme: str
    params: dict[str, Any]  # scenario keys -> values with units ("marking.tcn.threshold": "90us")
    rule: str
    source: str
    scale_keys: list[str] = field(default_factory=list)  # the keys the sweep scales together
    note: str = ""


@dataclass(frozen=True)
class Skip:
    """A scheme that cannot run on the operator's switch, and why (never started)."""

    scheme: str
    why: str


def round_sig(x: float, digits: int = SIGNIFICANT) -> float:
    """``x`` to ``digits`` significant digits (3118622 -> 3120000, 53.5999 -> 53.6)."""
    if x == 0 or not math.isfinite(x):
        return x
    e = math.floor(math.log10(abs(x)))
    q = 10.0 ** (e - digits + 1)
    v = math.copysign(math.floor(abs(x) / q + 0.5 + 1e-9) * q, x)  # half up (1125000 -> 1130000), past float noise
    return round(v, max(0, digits - 1 - e))


def _bytes(x: float) -> str:
    return f"{max(int(round_sig(x)), 1500)}B"


def _us(x: float) -> str:
    """A time in whole nanoseconds with the unit the core takes, at 3 significant digits."""
    ns = max(1, round(round_sig(x * 1000)))  # whole nanoseconds, at least one
    return f"{ns // 1000}us" if ns % 1000 == 0 else f"{ns}ns"


def skipped(schemes: list[str], scheduler: str) -> list[Skip]:
    """The schemes the operator's scheduler cannot run, each with the paper's reason."""
    return [Skip(s, f"MQ-ECN needs a round-robin scheduler (DWRR, WRR; MQ-ECN NSDI 2016 §3, TCN §1), not "
                    f"{scheduler}: its threshold follows the round time, which {scheduler} has not")
            for s in schemes if s == "mq_ecn" and scheduler not in ROUND_ROBIN]


def starting_points(schemes: list[str], rate_bps: float, rtt: RttProfile, cc: str, scheduler: str,
                    mtu: int = 1500) -> list[Start]:
    lam = LAMBDA.get(cc, 1.0)
    lam_src = LAMBDA_SOURCE.get(cc, "lambda = 1 assumed")
    C = rate_bps / 8  # bytes per second
    hi, mean = round_sig(rtt.p90_us), round_sig(rtt.mean_us)
    k_std = lam * C * hi * 1e-6
    out = []
    for s in schemes:
        if s == "per_queue" or s == "dctcp_red":
            out.append(Start(s, {"marking.threshold.k": _bytes(k_std)},
                             f"K = C x RTT x lambda = {rate_bps / 1e9:g} Gbps x {hi:g} us (RTT p90) x {lam:g} "
                             f"= {round_sig(k_std) / 1e3:g} KB per queue (the standard threshold; DCTCP's K against C x RTT)",
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
                             f"min_th = C x RTT p90 x lambda = {round_sig(k_std) / 1e3:g} KB; max_th = 3 min_th; max_p = 0.1; "
                             f"w = 0.002 (Floyd's RED guidelines)",
                             "dual AQM paper §IV-A (RED after Floyd & Jacobson's guidelines); K as TCN §2.1 Eq. (1)",
                             ["marking.red.min_th", "marking.red.max_th"]))
        elif s == "mq_ecn":
            if scheduler not in ROUND_ROBIN:
                continue  # skipped(), with its reason
            out.append(Start(s, {"marking.mq_ecn.k": _bytes(k_std)},
                             f"K_i = quantum_i / T_round x RTT x lambda, with the standard C x RTT p90 x lambda = "
                             f"{round_sig(k_std) / 1e3:g} KB as its full-rate value",
                             "MQ-ECN (NSDI 2016) as TCN §3.2.1 describes it; TCN §2.1 Eq. (1)", ["marking.mq_ecn.k"]))
        elif s == "codel":
            interval = round_sig(rtt.p99_us)
            out.append(Start(s, {"marking.codel.interval": _us(interval), "marking.codel.target": _us(interval / 10),
                                 "marking.codel.mode": "mark"},
                             f"interval = worst-case RTT (p99) = {interval:g} us; target = 10 % of interval "
                             f"= {interval / 10:g} us; marking, not dropping",
                             "RFC 8289 §4.3-4.4 (target 5-10 % of interval)", ["marking.codel.target"]))
        elif s == "dualq":
            bdp = C * round_sig(rtt.p50_us) * 1e-6
            mn = bdp / 4
            out.append(Start(s, {"marking.dualq.classic.min_th": _bytes(mn),
                                 "marking.dualq.classic.max_th": _bytes(3 * mn),
                                 "marking.dualq.classic.max_p": 0.1, "marking.dualq.classic.w": 0.002,
                                 "marking.dualq.scalable.min_th": _bytes(1.73 * mn),
                                 "marking.dualq.scalable.max_th": _bytes(1.73 * mn),
                                 "marking.dualq.scalable.max_p": 1.0, "marking.dualq.scalable.w": 1.0},
                             f"Reno's RED: min_th = BDP/4 = {round_sig(mn) / 1e3:g} KB (BDP at RTT p50), max_th = 3 min_th, "
                             f"max_p = 0.1; DCTCP's step K = 1.73 min_th_Reno (equal sharing at BDP/4, Table I); "
                             f"with a slope instead: min_th_Reno/min_th_DCTCP = x/(x-1), x = max_p_DCTCP/max_p_Reno "
                             f"(Eq. 3)",
                             "dual AQM paper §IV-A, §IV-B Table I, §IV-C Eq. (3)", [],
                             "equal sharing needs mixed DCTCP and Reno traffic in one queue; the simulated check "
                             "(one transport) does not test it"))
        else:
            raise KeyError(s)
    return out
