"""What makes a catalog run an unsound baseline (issue 17), read from the run's own files.

A claim compares schemes on runs that are meant to exercise the switch under study. A run
can silently stop doing that; the guard lists, per run, each of these facts:

- **NIC-bound**: a host's own uplink queue dropped packets, or, without
  ``host.nic_marking``, held a standing queue of at least ``NIC_STANDING_BYTES`` on average
  over the measurement window (``summary.json`` ``nics``, written by the simulator). A
  sender's NIC that only serializes its flows holds a packet or two (ACK-clocked windows
  leave at line rate); ten full-size packets on average means the NIC limits the flow, in
  an unmarked queue that the scheme under study never sees, where it loses packets
  (ecnsharp-sched's TCN baseline before ``host.nic_marking``: 2,819 drops, 273 KB average).
  With ``host.nic_marking`` the NIC applies the scenario's scheme, so a flow alone at a
  line-rate bottleneck queues (and is marked) there as it would at the switch: sound.
- **scheduler shares**: at a switch port with a weighted scheduler (WFQ, DWRR, WRR, or their
  SP variants), a weighted queue got less than ``1 - SHARE_TOLERANCE`` of what the scheduler
  owes it while it is backlogged. WFQ and DWRR owe a backlogged queue at least its weight's
  share (among the weighted queues that carry traffic at the port) of what the strict queues
  leave of the link: per sample period, ``share x (rate x busy - strict goodput)``, where
  ``busy`` is the share of the period in which the queue held a packet (the time series'
  ``busy_fraction``, counted by the port). Summed over the run that is a lower bound on its
  service, whatever the other queues do, so bursty traffic that leaves queues idle part of
  the time is judged as fairly as long-lived flows; a queue backlogged for less than
  ``SHARE_MIN_SAMPLES`` sample periods in all is not judged. A queue that gets more than its
  share takes it from one that gets less, which is flagged. Goodput counts payload (97 % of
  a full-size packet's bytes); the tolerance covers it. Ports of a PFC fabric are not judged
  (a paused queue is backlogged and owed nothing), nor runs recorded before ecnlab counted
  backlogged time (no ``busy_fraction``). The scheduler is the fixed point of every
  per-queue comparison; if marking undoes it (tcn-static's ideal ECN/RED before the oracle
  fix: 97 vs 376 Mbps for equal weights), the run no longer tests marking over that
  scheduler. (The rule before busy time was counted, the shares of the goodput over the
  sample periods in which every queue's *average* length was a packet or more, flagged
  tcn-isolation's TCN, CoDel and per-queue runs alike, 13-15 each: bursts, not the
  scheduler.)
- **cut by duration**: flows with a size that started in the measurement window and did
  not finish (``summary.json`` ``flows.unfinished``). FCT statistics then leave out the
  slowest flows, and the scheme that leaves more of them unfinished looks faster.
- **RTO storm**: retransmission timeouts whose minimum stall (``timeouts x rto_min``) is at
  least ``RTO_STORM_FRACTION`` of the flows' total time in the run (``flows.csv``: finish -
  start, or end of run - start for flows that did not finish). An RTO stalls a flow for at
  least ``rto_min`` (5-10 ms in the catalog against FCTs of 0.1-10 ms), so from a tenth of
  the flows' time spent stalled on, FCT and goodput comparisons measure loss recovery, not
  marking. The bound counts every timeout at ``rto_min`` (no backoff), so it errs on the
  side of not flagging.
- **lossy fabric**: a run of a transport that is specified for a lossless fabric (DCQCN:
  RoCEv2 over PFC, DCQCN paper §2; ECN# §5.4.4 follows DCQCN's simulator) dropped packets.
  Without PFC (``switch.pfc``) the switch drops where the paper's fabric pauses the upstream
  link, and DCQCN, whose rate ignores loss, recovers by go-back-N, so FCTs measure loss
  recovery: at paper scale (20,000 web-search flows at 90 % load, before ecnlab had PFC)
  this collapsed, 2.13 G of 4.92 G packet-hops dropped, 13.6 M go-back-N timeouts, 13 s
  simulated for ~0.2 s of arrivals. With PFC a drop means the buffer the XOFF threshold
  leaves free did not hold what was in flight. Any drop is listed, with the counts, since
  the paper's runs have none.

An experiment whose claims *are* about one of these (an incast's drops and timeouts) names
it in ``Experiment.guard_expected`` and the guard does not list it there."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..outdir import read_csv, read_json

NIC_STANDING_BYTES = 15_000
SHARE_TOLERANCE = 0.10
SHARE_MIN_SAMPLES = 10
RTO_STORM_FRACTION = 0.10

KINDS = ("nic", "shares", "unfinished", "rto", "lossless")

_WEIGHTED = {"wfq", "dwrr", "wrr", "sp_wfq", "sp_dwrr"}

# Transports specified for a lossless (PFC) fabric.
LOSSLESS_CC = {"dcqcn"}


def rto_min_s(scenario: dict[str, Any]) -> float:
    """The run's rto_min in seconds, as the core resolves it for the scenario's host profile
    (200 ms under linux, 5 ms under textbook, where the file gives none)."""
    from .. import _core

    try:
        transport = json.loads(_core.resolve_json(json.dumps(scenario)))["transport"]
    except ValueError:  # a partial scenario (tests): its own value, if any
        transport = scenario.get("transport", {})
    try:
        return _core.parse_unit("time", str(transport["rto_min"])) / 1e9
    except (ValueError, KeyError):
        return 0.0


def nic_facts(summary: dict[str, Any], nic_marking: bool = False) -> list[str]:
    out = []
    for n in summary.get("nics", []):
        if n["drops"] > 0 or (not nic_marking and n["avg_qlen_bytes"] >= NIC_STANDING_BYTES):
            out.append(f"NIC-bound: {n['port']} dropped {n['drops']} packets, average queue "
                       f"{n['avg_qlen_bytes'] / 1e3:.1f} KB (max {n['max_qlen_bytes'] / 1e3:.0f} KB)")
    return out


def share_facts(scenario: dict[str, Any], ts, rates: dict[str, float]) -> list[str]:
    """Each weighted queue's goodput against what its scheduler owes it while it is
    backlogged, at each switch port (``rates``: port -> link rate, bps)."""
    import numpy as np

    sw = scenario.get("switch", {})
    sch = sw.get("scheduler", {}) or {}
    kind = sch.get("kind", "sp")
    if (kind not in _WEIGHTED or ts is None or not len(ts) or "busy_fraction" not in ts
            or (sw.get("pfc") or {}).get("enabled", False)):
        return []
    n_queues = int(sw.get("queues", 1))
    strict = int(sch.get("strict", 0)) if kind.startswith("sp_") else 0
    weights = list(sch.get("weights") or [])
    weights = [float(w) for w in weights] + [1.0] * (n_queues - strict - len(weights))
    out = []
    for port, d in ts.groupby("port"):
        rate = rates.get(port)
        used = sorted(q for q, g in d[d["queue"] >= strict].groupby("queue") if g["goodput_bps"].sum() > 0)
        if not rate or len(used) < 2:
            continue
        wide = d.pivot_table(index="t_s", columns="queue", values=["goodput_bps", "busy_fraction"], aggfunc="sum")
        t = wide.index.to_numpy(dtype=float)
        dt = np.diff(t, prepend=t[0] - (t[1] - t[0] if len(t) > 1 else t[0]))  # each row: the period before it
        good = wide["goodput_bps"]
        strict_bps = good[[q for q in good.columns if q < strict]].sum(axis=1).to_numpy()
        total_w = sum(weights[q - strict] for q in used)
        for q in used:
            busy = wide["busy_fraction"][q].to_numpy() * dt
            if busy.sum() < SHARE_MIN_SAMPLES * float(np.median(dt)):
                continue
            share = weights[q - strict] / total_w
            owed = share * np.clip(rate * busy - strict_bps * dt, 0, None)
            got = good[q].to_numpy() * dt
            if got.sum() < (1 - SHARE_TOLERANCE) * owed.sum():
                out.append(f"scheduler shares: at {port} queue {q} got {got.sum() / busy.sum() / 1e6:.4g} Mbps while "
                           f"backlogged ({busy.sum() * 1e3:.0f} ms), owed at least {owed.sum() / busy.sum() / 1e6:.4g} "
                           f"Mbps ({share:.1%} of what the strict queues left of {rate / 1e9:g} Gbps)")
    return out


def unfinished_facts(summary: dict[str, Any]) -> list[str]:
    f = summary.get("flows", {})
    if f.get("unfinished", 0) > 0:
        return [f"cut by duration: {f['unfinished']} flows unfinished at {summary.get('sim_time_s', 0):g} s "
                f"({f.get('completed', 0)} completed)"]
    return []


def rto_facts(summary: dict[str, Any], scenario: dict[str, Any], flows) -> list[str]:
    n = summary.get("flows", {}).get("timeouts", 0)
    rto = rto_min_s(scenario)
    if n == 0 or rto == 0 or flows is None or not len(flows):
        return []
    end = float(summary.get("sim_time_s", 0))
    finish = flows["finish_s"].astype(float).fillna(end)
    flow_time = float((finish - flows["start_s"].astype(float)).clip(lower=0).sum())
    if flow_time > 0 and n * rto >= RTO_STORM_FRACTION * flow_time:
        return [f"RTO storm: {n} timeouts x rto_min {rto * 1e3:g} ms = {n * rto / flow_time:.0%} of the flows' "
                f"{flow_time:.3g} s"]
    return []


def lossless_facts(summary: dict[str, Any], scenario: dict[str, Any]) -> list[str]:
    cc = scenario.get("transport", {}).get("cc")
    drops = summary.get("drops", 0)
    if cc not in LOSSLESS_CC or not drops:
        return []
    hops = summary.get("packet_hops", 0)
    pfc = scenario.get("switch", {}).get("pfc", {}).get("enabled", False)
    why = "despite PFC (the buffer it leaves free overflowed)" if pfc else "with PFC off (switch.pfc.enabled)"
    return [f"lossy fabric: {cc} expects a lossless one; {drops} packets dropped {why} in the measurement "
            f"window, {hops} packet-hops in the run, {summary.get('flows', {}).get('timeouts', 0)} go-back-N timeouts"]


def run_facts(run_dir: Path, skip: tuple[str, ...] = ()) -> dict[str, list[str]]:
    """The guard's facts about one run, by kind (only kinds with something to say)."""
    summary = read_json(run_dir / "summary.json")
    scenario = read_json(run_dir / "scenario.json") if (run_dir / "scenario.json").exists() else {}
    facts = {}
    if "nic" not in skip:
        facts["nic"] = nic_facts(summary, bool(scenario.get("host", {}).get("nic_marking", False)))
    if "unfinished" not in skip:
        facts["unfinished"] = unfinished_facts(summary)
    if "shares" not in skip:
        rates = {p["port"]: float(p["rate_bps"]) for p in summary.get("ports", []) if p.get("rate_bps")}
        facts["shares"] = share_facts(scenario, read_csv(run_dir / "timeseries.csv"), rates)
    if "rto" not in skip and summary.get("flows", {}).get("timeouts", 0):
        facts["rto"] = rto_facts(summary, scenario, read_csv(run_dir / "flows.csv"))
    if "lossless" not in skip:
        facts["lossless"] = lossless_facts(summary, scenario)
    return {k: v for k, v in facts.items() if v}
