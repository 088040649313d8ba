"""An emulation's results in the files of ``ecnlab run``: ``summary.json`` built by the
core's code that builds the simulator's (``_core.summary_from_measurements``) from what the
switch measured, typed (``crates/ecnlab-emu/src/report.rs``: its queues as the summary
lists them, their counts by reason), and what the hosts measured (the flows' goodput and
FCTs, the probes' RTTs, the kernel's counters); flow and probe records; the time series
from the switch's samples."""

from __future__ import annotations

import json
import math
import platform
import sys
from pathlib import Path
from typing import Any


def _percentile(sorted_v: list[float], q: float) -> float:
    """Nearest rank, ``sorted[floor(q n)]``, as ecnlab run (summary.rs)."""
    return sorted_v[min(int(q * len(sorted_v)), len(sorted_v) - 1)]


def _finite(x: Any) -> Any:
    """``x`` with non-finite floats as None (JSON has no NaN; the core writes them as null)."""
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_finite(v) for v in x]
    return x


def _interp(ts: list[float], vs: list[int], t: float) -> float:
    """Bytes received by time t, interpolated between samples."""
    if not ts:
        return 0.0
    if t <= ts[0]:
        return float(vs[0])
    for i in range(1, len(ts)):
        if ts[i] >= t:
            a, b = ts[i - 1], ts[i]
            f = (t - a) / (b - a) if b > a else 1.0
            return vs[i - 1] + f * (vs[i] - vs[i - 1])
    return float(vs[-1])


def fill_ideal_fct(doc: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    """Ideal FCT and slowdown of each finite flow, by the simulator's definition to the ACK
    of the last byte (an emulated FCT ends at the receiver's one-byte reply), for the
    scenario that ran (the scaled one: its FCTs are in the same time base)."""
    from .. import _core

    sized = [r for r in rows if r["size"] is not None]
    if not sized:
        return
    try:
        ideals = _core.ideal_fct_us(json.dumps(doc), [(r["src"], r["dst"], r["size"]) for r in sized])
    except ValueError as e:  # never lose a finished emulation over a derived column
        sys.stderr.write(f"ecnlab: warning: no ideal FCT: {str(e).splitlines()[0] if str(e) else e}\n")
        return
    for r, ideal in zip(sized, ideals):
        r["ideal_fct_us"] = ideal
        r["slowdown"] = r["fct_us"] / ideal if r["fct_us"] is not None and ideal > 0 else None


def _goodputs(plan: dict, results: dict, duration: float) -> tuple[dict[int, float], dict[tuple[int, int], float]]:
    """What the hosts received over the window, as rates: per listed flow (by id), and the
    ``[[traffic]]`` payload per (receiver, queue)."""
    warmup = plan["warmup_s"]
    window = max(duration - warmup, 1e-9)
    rate = lambda ts, vs: (_interp(ts, vs, duration) - _interp(ts, vs, warmup)) * 8 / window  # noqa: E731
    per_queue: dict[tuple[int, int], float] = {}
    for h, r in results.items():
        keys = {k for smp in r.get("samples", []) for k in smp if k.startswith("t")}
        for key in keys:
            q = plan["class_queue"][int(key[1:]) & 63]
            vs = [smp.get(key, 0) for smp in r["samples"]]
            per_queue[(h, q)] = per_queue.get((h, q), 0.0) + rate(r.get("samples_t", []), vs)
    per_flow: dict[int, float] = {}
    for f in plan["flows"]:
        r = results.get(f["dst"])
        if r:
            per_flow[f["id"]] = rate(r["samples_t"], [s.get(str(f["id"]), 0) for s in r["samples"]])
    return per_flow, per_queue


def _queues(plan: dict, sw: dict, per_flow: dict, per_queue: dict) -> tuple[list, list]:
    """The switch's queues as the summary lists them and every queue's counts by reason,
    as the switch measured them (the core's types); the hosts' goodput replaces the
    switch's: the application bytes the queue's flows received (the switch's own payload
    count stays as ``switch_goodput_bps``)."""
    queues, counters = [], []
    for p in sw["window"]["ports"]:
        h = int(p["name"].split("->h")[1])
        counters += p["by_reason"]
        for q in p["summary"]:
            app = sum(g for fid, g in per_flow.items()
                      if plan["flows"][fid]["dst"] == h and plan["flows"][fid]["queue"] == q["queue"])
            app += per_queue.get((h, q["queue"]), 0.0)
            queues.append({**q, "goodput_bps": app, "switch_goodput_bps": q["goodput_bps"]})
    return queues, counters


def _flow_rows(plan: dict, results: dict) -> tuple[list, list[float], int]:
    """flows.csv's rows (listed flows, then the messages that started), the messages' start
    delays, and how many started."""
    rows, late = [], []
    for f in plan["flows"]:
        rec = results.get(f["src"], {}).get("flows", {}).get(str(f["id"]), {})
        rows.append({
            "id": f["id"], "spec": f["spec"], "src": f["src"], "dst": f["dst"], "class": f["class"],
            "size": f["size"], "start_s": f["start_s"], "finish_s": rec.get("finish_s"), "fct_us": rec.get("fct_us"),
            "ideal_fct_us": None, "slowdown": None, "acked_bytes": rec.get("bytes_acked"),
            "timeouts": None, "retransmits": rec.get("total_retrans"),
        })
    for m in plan["messages"]:
        rec = results.get(m["src"], {}).get("messages", {}).get(str(m["id"]))
        if rec is None:
            continue  # arrives after the run ended: not a flow of this run (as ecnlab run)
        late.append(rec.get("late_us") or 0.0)
        rows.append({
            "id": m["id"], "spec": m["spec"], "src": m["src"], "dst": m["dst"], "class": m["class"],
            "size": m["size"], "start_s": m["start_s"], "finish_s": rec.get("finish_s"), "fct_us": rec.get("fct_us"),
            "ideal_fct_us": None, "slowdown": None, "acked_bytes": None, "timeouts": None, "retransmits": None,
        })
    return rows, sorted(late), len(late)


def _emulation_block(plan: dict, results: dict, sw: dict, run: dict, per_flow: dict) -> dict[str, Any]:
    """``summary.json``'s ``emulation``: what only an emulation has (the switch's frames,
    the kernel's counters, the congestion controls that ran, the warnings)."""
    flow_rec = lambda f: results.get(f["src"], {}).get("flows", {}).get(str(f["id"]), {})  # noqa: E731
    port_keys = ("name", "rate_bps", "shaper_rate_bps", "shaper_burst_bytes", "rx_frames", "tx_frames", "ce_set",
                 "tx_errors", "socket_drops", "pool_exhausted")
    return {
        "kernel": platform.release(),
        "switch": {
            "frames_forwarded": sw["frames_forwarded"], "frames_received": sw["frames_received"],
            "socket_drops": sw["socket_drops"], "frame_pool": sw["frame_pool"],
            # Frames the switch dropped before any queue (runts, malformed IPv4, bad
            # checksums, bridge-local, filtered, pool exhausted) and what it forwarded by
            # kind (IPv4 ECT / not-ECT / with options, ARP, IPv6, other EtherTypes).
            "ingress_drops_by_reason": sw["ingress_drops_by_reason"],
            "ingress_by_kind": sw["ingress_by_kind"], "fib_full": sw["fib_full"],
            "window_s": sw["window"]["duration_s"],
            # How late the switch's loop ran in the window (run.py, STALLED_FRACTION).
            "stalls": sw["window"]["stalls"],
            "ports": [{k: p[k] for k in port_keys} for p in sw["total"]["ports"]],
        },
        "socket_drops": sw["socket_drops"],
        "scale": {**plan["scale"], "shaper_rate_fraction": sw["shaper_rate_fraction"]},
        "cc": run["cc_map"],
        # What the hosts' TCP was set to from the scenario, and what the kernel does its way.
        "host_stack": {k: run["stack"][k] for k in ("route", "sysctls", "fixed")},
        "flows": [{"id": f["id"], "src": f["src"], "dst": f["dst"], "class": f["class"],
                   "goodput_bps": per_flow.get(f["id"]), "retransmits": flow_rec(f).get("total_retrans"),
                   "delivered_ce": flow_rec(f).get("delivered_ce"), "error": flow_rec(f).get("error")}
                  for f in plan["flows"]],
        "hosts": {str(h): r.get("netstat", {}) for h, r in sorted(results.items())},
        "receiver_ce_packets": sum(r.get("netstat", {}).get("IpExtInCEPkts", 0) for r in results.values()),
        "agent_errors": {str(h): r["errors"] for h, r in results.items() if r.get("errors")},
        "warnings": run["warnings"],
        # Other processes' CPU during the run, in cores (run.py, CONTENDED_CORES).
        "others_cpu_cores": run.get("others_cpu_cores"),
        # The CPU the hypervisor took during the run (steal time), in cores (run.py, STOLEN_CORES).
        "stolen_cpu_cores": run.get("stolen_cpu_cores"),
    }


def summarize(plan: dict, results: dict, sw: dict, run: dict) -> tuple[dict, list, list, dict]:
    """summary.json (the keys of ecnlab run), flow records, probe records, time series.
    ``run``: what the run itself decided (``duration``: the traffic's, shorter when it
    stopped when done; ``t0``, ``cc_map``, ``stack``, ``warnings``, ``work``)."""
    from .. import _core

    duration, warmup = run["duration"], plan["warmup_s"]
    per_flow, per_queue = _goodputs(plan, results, duration)
    queues, counters = _queues(plan, sw, per_flow, per_queue)
    flow_rows, late, started = _flow_rows(plan, results)
    fill_ideal_fct(plan["scenario"], flow_rows)
    probe_rows = []
    for p in plan["probes"]:
        r = results.get(p["src"], {}).get("probes", {}).get(str(p["id"]), {"sent": 0, "samples": []})
        probe_rows.append({"id": p["id"], "src": p["src"], "dst": p["dst"], "class": p["class"], "sent": r["sent"],
                           "rtt_us": [rtt for (t, rtt) in r["samples"] if t >= warmup]})
    emulation = _emulation_block(plan, results, sw, run, per_flow)
    if plan["messages"]:
        emulation["traffic"] = {
            "generated": len(plan["messages"]), "started": started,
            "connections": sum(r.get("connections", 0) for r in results.values()),
            # How late the agents started messages (a loaded machine delays them; the
            # delay counts in the FCT, as it would for a real application).
            "start_late_us": {"p50": _percentile(late, 0.5), "p99": _percentile(late, 0.99)} if late else None,
        }
    # The summary, built by the core's code that builds ecnlab run's (summary.rs): FCT by
    # size class of the sized flows (every [[flows]] entry and every message that started)
    # that started in the window, the totals by reason, the probes' RTTs. What the emulator
    # does not measure (fct_by_class, ports, nics, long_flows, counting) stays out. Every
    # float comes back with its bits (the core reads JSON with float_roundtrip); the free-form
    # `emulation` block is added here, as the core has no type for it.
    measurements = {
        "scenario": plan["scenario"]["name"], "seed": plan["seed"], "sim_time_s": duration, "measure_from_s": warmup,
        "events": 0, "packet_hops": sw["frames_forwarded"],
        "flows": [{k: r.get(k) for k in ("class", "size", "start_s", "fct_us", "slowdown")} for r in flow_rows],
        "timeouts": sum(r.get("netstat", {}).get("TcpExtTCPTimeouts", 0) for r in results.values()),
        "counters": counters, "queues": queues,
        "probes": [{k: r[k] for k in ("id", "src", "dst", "class", "rtt_us")} for r in probe_rows],
    }
    summary = json.loads(_core.summary_from_measurements(json.dumps(_finite(measurements))))
    summary["emulation"] = emulation
    factor = plan["scale"]["factor"]
    if plan["scale"]["mode"] == "dilate" and factor != 1:
        summary["emulation"]["unscaled"] = {
            "note": "times / factor and rates x factor: the original scenario's time base",
            "probe_rtt": {k: (v / factor if isinstance(v, float) and k != "count" else v)
                          for k, v in summary["probe_rtt"].items()},
            "queues": [{"port": q["port"], "queue": q["queue"], "goodput_bps": q["goodput_bps"] * factor}
                       for q in summary["queues"]],
        }
    return summary, flow_rows, probe_rows, timeseries(run["work"] / "switch-timeseries.jsonl", run["t0"])


def timeseries(path: Path, t0: float) -> dict[str, list]:
    """timeseries.csv from the switch's samples: each line holds one sample's rows, computed
    by the core's code that computes `ecnlab run`'s (`ecnlab_core::measure::TimeSeries`), with
    the switch's clock as `t_s`; here only the rows from the traffic's start `t0` on, timed
    from it."""
    cols = ["t_s", "port", "queue", "goodput_bps", "qlen_bytes", "avg_qlen_bytes", "sojourn_us", "busy_fraction",
            "marks", "drops", "est_rate_bps"]
    ts: dict[str, list] = {c: [] for c in cols}
    try:
        samples = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    except (OSError, ValueError):
        return ts
    for sample in samples:
        for i, t in enumerate(sample["t_s"]):
            if t < t0:
                continue
            for c in cols:
                ts[c].append(t - t0 if c == "t_s" else sample[c][i])
    return ts
