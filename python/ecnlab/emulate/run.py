"""One emulation: the plan (built by the core, ``plan.py``), then namespaces, the switch,
the agents, and what they measured (``collect.py``); namespaces and processes owned and
always removed (``_Emulation``); results in the files of ``ecnlab run``."""

from __future__ import annotations

import json
import math
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Iterable

from .collect import fill_ideal_fct as _fill_ideal_fct, summarize
from .. import _core
from .common import HEADER, EmulationError, SUBNET, _Terminated
from .kernel_cc import BPF_CC, _kernel_refusal, bpf_dir, bpf_params
from .namespaces import (_child_setup, _delete_namespaces, _in_netns, _new_prefix, _offloads_off, _run,
                         _write_sysctls, available_congestion_controls, check_environment, cleanup_stale,
                         switch_binary)
from .plan import classify, emulation_plan, expand_flows  # noqa: F401 (the package's names)
from .units import parse_time_ns, resolve_scenario

# Other processes' CPU during a run, in cores, above which the run's timing measured the
# machine: the hosts' tbf timers, senders and softirqs wait for a CPU. Measured: two busy
# loops beside a run took the kernel's TSO trains to 3.0 segments (4.6-4.7 idle), and nice-19
# work on both cores put the probe RTT's p99 at 2.25x the simulator's (within 1.0-1.2x idle):
# niced processes count too. Half a core: the emulation itself needs about one here.
CONTENDED_CORES = 0.5
# The CPU the hypervisor took from this virtual machine during a run (steal time), in cores,
# above which the same holds. Measured over eight runs of the DCTCP test (100 Mbps): 0.002
# stolen carried 96 Mbps, 0.09-0.11 carried 86-87, 0.19-0.31 carried 57-86.
STOLEN_CORES = 0.1
# The share of the measurement window in which the switch's own loop ran over a millisecond
# late (ecnlab-emu's stall.rs), above which the same holds: every frame in the switch waited
# as long. The two means above miss short bursts of contention or steal, which move a p99
# without moving a mean. Measured on this 2-core VM with validate's CI scenario: quiet runs
# 0-0.15 %; 20 ms real-time bursts every 400 ms on both cores 4.8 %, the probe p99 at 4.7x the
# simulator's with the CPU and steal means at 0.004 and 0.002 cores.
STALLED_FRACTION = 0.002


def _cpu_seconds() -> tuple[float, float, float]:
    """(everyone's CPU seconds, this process's and its reaped children's, the CPU seconds the
    hypervisor stole from this machine): /proc/stat's ``user``, ``nice`` and ``system``,
    ``os.times``, and /proc/stat's ``steal``."""
    with open("/proc/stat") as f:
        fields = f.readline().split()  # "cpu user nice system idle iowait irq softirq steal ..." in ticks
    tick = os.sysconf("SC_CLK_TCK")
    everyone = (int(fields[1]) + int(fields[2]) + int(fields[3])) / tick
    stolen = int(fields[8]) / tick if len(fields) > 8 else 0.0
    t = os.times()
    return everyone, t.user + t.system + t.children_user + t.children_system, stolen


# The package root, the agents' and the reaper's working directory.
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])


def _ip(i: int) -> str:
    return f"{SUBNET}.{i + 1}"


class _Emulation:
    """One run: owns namespaces and processes, and always removes them."""

    def __init__(self, plan: dict[str, Any], out: Path, opts: dict[str, Any]):
        self.plan = plan
        self.out = out
        self.opts = opts
        self.prefix = _new_prefix()
        self.work = out / "emulation"
        self.namespaces: list[str] = []
        self.procs: list[subprocess.Popen] = []
        self.warnings: list[str] = []
        self.n = len(plan["hosts"])
        self.sw_ns = f"{self.prefix}-sw"
        self.host_ns = [f"{self.prefix}-h{i}" for i in range(self.n)]
        for w in plan["warnings"]:
            self.warn(w)

    # -- helpers --
    def warn(self, msg: str) -> None:
        self.warnings.append(msg)
        if not self.opts.get("quiet"):
            sys.stderr.write(f"ecnlab: warning: {msg}\n")

    def popen(self, ns: str, cmd: list[str], **kw) -> subprocess.Popen:
        p = subprocess.Popen(["ip", "netns", "exec", ns, *cmd], preexec_fn=_child_setup, **kw)
        self.procs.append(p)
        return p

    def start_reaper(self) -> None:
        """Start the process that deletes this run's namespaces if the run dies without
        doing it (SIGKILL, a crash of the interpreter): it waits for EOF on a pipe that
        only this process holds, so the kernel tells it when this process is gone, however
        it went. In its own session, so that signals meant for the run's process group
        (Ctrl-C, a `timeout`) leave it to do its work."""
        self.reaper = subprocess.Popen(
            [sys.executable, "-m", "ecnlab.emulate", "--reaper", self.prefix], stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, cwd=_PACKAGE_ROOT)

    def release_reaper(self) -> None:
        """Everything is removed: tell the reaper it has nothing to do."""
        r = getattr(self, "reaper", None)
        if r is None:
            return
        try:
            r.stdin.write(b"clean\n")
            r.stdin.close()
            r.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            pass
        self.reaper = None

    def load_congestion_controls(self, objs: list[str], cc_map: dict[str, dict[str, Any]], allow_fallback: bool,
                                 fallback: str) -> None:
        """Register ecnlab's BPF congestion controls for this run (``ecnlab-cc-loader``
        holds them; the kernel unregisters them when it exits, and it exits with this
        process). If the kernel refuses them: EmulationError, or with ``allow_fallback``
        the ``fallback`` algorithm with ECN, recorded in ``cc_map``."""
        names = sorted({v["kernel"] for k, v in cc_map.items() if k in BPF_CC})
        try:
            d = bpf_dir()
            p = subprocess.Popen([str(d / "ecnlab-cc-loader"), *(str(d / o) for o in objs)], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            self.procs.append(p)
            line = _readline(p.stdout, 60.0)
            if line.strip() != "ready":
                why = _kernel_refusal(line) if line.strip() else _why(p, line)
                if "File exists" in why:
                    why += " (another ecnlab emulate is running: the names are global to the kernel)"
                raise EmulationError(f"cannot run {', '.join(names)} in the kernel: {why}")
            missing = [x for x in names if x not in available_congestion_controls()]
            if missing:
                raise EmulationError(f"cannot run {', '.join(missing)} in the kernel: registered but not listed "
                                     "in net.ipv4.tcp_available_congestion_control")
        except EmulationError as e:
            if not allow_fallback:
                raise EmulationError(f"{e}; --allow-fallback runs {fallback} with ECN instead") from None
            for k, v in cc_map.items():
                if k in BPF_CC:
                    v.update(kernel=fallback, fallback=True, why=str(e))
                    v.pop("implementation", None)
                    v.pop("params", None)
            self.warn(f"{e}; flows with cc {', '.join(k for k in cc_map if k in BPF_CC)} run {fallback} with "
                      "ECN (RFC 3168) instead (--allow-fallback)")

    def cleanup(self) -> list[str]:
        """Stop every process, delete every namespace. Safe to call twice."""
        for p in self.procs:
            if p.poll() is None:
                try:
                    p.terminate()
                except ProcessLookupError:
                    pass
        deadline = time.time() + 3
        for p in self.procs:
            try:
                p.wait(timeout=max(0.05, deadline - time.time()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        for p in self.procs:
            for f in (p.stdin, p.stdout, p.stderr):
                if f:
                    try:
                        f.close()
                    except OSError:
                        pass
        self.procs.clear()
        failed = _delete_namespaces(list(self.namespaces))
        self.namespaces = failed
        return failed

    # -- namespaces --
    def build(self, cc_ecn: dict) -> None:
        """The switch's and the hosts' namespaces, veths, addresses, routes, sysctls; the
        hosts' NICs shaped to their link rate."""
        names = [self.sw_ns, *self.host_ns]
        for ns in names:
            _run(["ip", "netns", "add", ns])
            self.namespaces.append(ns)
        off6 = {"net.ipv6.conf.all.disable_ipv6": "1", "net.ipv6.conf.default.disable_ipv6": "1"}
        _in_netns(self.sw_ns, _write_sysctls, off6)
        stack = self.stack
        route_opts = " ".join(f"{k} {v}" for k, v in stack["route"].items())
        ack_dscp = self.plan["ack_dscp"]
        for i, ns in enumerate(self.host_ns):
            ecn = cc_ecn.get(i, {"sysctl": "2", "routes": set()})
            _in_netns(ns, _write_sysctls, {
                **off6,
                **stack["sysctls"],
                "net.ipv4.tcp_ecn": ecn["sysctl"],
                "net.ipv4.tcp_no_metrics_save": "1",
                # No TCP timestamps: the simulator's segments carry no options, so 1460
                # payload bytes per 1500-byte packet; with timestamps each 1514-byte frame
                # would carry 12 bytes less payload (0.8 % of goodput).
                "net.ipv4.tcp_timestamps": "0",
                # ACKs in the class of the data they acknowledge (ecnlab run's default).
                "net.ipv4.tcp_reflect_tos": "0" if ack_dscp is not None else "1",
                # ICMP datagram sockets for probes (root is gid 0).
                "net.ipv4.ping_group_range": "0 2147483647",
            })
        # Both ends are created inside namespaces: nothing ever appears in the root one.
        batch = [f"link add s{i} type veth peer name h{i} netns {ns}" for i, ns in enumerate(self.host_ns)]
        _run(["ip", "-n", self.sw_ns, "-batch", "-"], input="\n".join(batch) + "\n")
        hosts = self.plan["hosts"]
        for i, ns in enumerate(self.host_ns):
            b = [
                f"link set h{i} address {hosts[i]['mac']}",
                f"addr add {_ip(i)}/24 dev h{i} noprefixroute",
                "link set lo up",
                f"link set h{i} up",
                f"route add {SUBNET}.0/24 dev h{i} src {_ip(i)} {route_opts}",
            ]
            ecn = cc_ecn.get(i, {"routes": set()})
            for j in sorted(ecn["routes"]):
                b.append(f"route add {_ip(j)}/32 dev h{i} src {_ip(i)} {route_opts} features ecn")
            for j in range(self.n):
                if j != i:
                    b.append(f"neigh replace {_ip(j)} lladdr {hosts[j]['mac']} dev h{i} nud permanent")
            _run(["ip", "-n", ns, "-batch", "-"], input="\n".join(b) + "\n")
        _run(["ip", "-n", self.sw_ns, "-batch", "-"],
             input="".join(f"link set s{i} up\n" for i in range(self.n)))
        _in_netns(self.sw_ns, _offloads_off, [f"s{i}" for i in range(self.n)])
        for i, ns in enumerate(self.host_ns):
            _in_netns(ns, _offloads_off, [f"h{i}"])
        # The host's NIC: its line rate, with a FIFO of host.nic_buffer (tbf; the switch
        # side is shaped by the switch). Propagation delays are applied by the switch.
        if self.opts.get("host_shaping", True):
            nic = self.plan["nic_buffer_bytes"]
            for i, h in enumerate(hosts):
                burst = max(2 * 1514, int(h["rate_bps"] * 50e-6 / 8))
                p = _run(["tc", "-n", self.host_ns[i], "qdisc", "replace", "dev", f"h{i}", "root", "tbf",
                          "rate", f"{h['rate_bps']}bit", "burst", str(burst), "limit", str(max(nic, 3 * burst))],
                         check=False)
                if p.returncode != 0:
                    self.warn(f"cannot shape hosts to their link rate (tc tbf: {p.stderr.strip()}); "
                              "hosts send at memory speed")
                    break

    # -- the switch --
    def start_switch(self, exe: Path) -> subprocess.Popen:
        """``ecnlab-switch`` in the switch's namespace, configured by the plan."""
        cfg = {**self.plan["switch"], **switch_ingress(self.plan["scenario"], self.opts.get("capture_frames", 0))}
        (self.work / "switch.json").write_text(json.dumps(cfg, indent=2) + "\n")
        p = self.popen(self.sw_ns, [str(exe), "--config", str(self.work / "switch.json"),
                                    "--stats", str(self.work / "switch-stats.json"),
                                    "--timeseries", str(self.work / "switch-timeseries.jsonl")],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = _readline(p.stdout, 10.0)
        if line.strip() != "ready":
            raise EmulationError(f"ecnlab-switch did not start: {_why(p, line)}")
        return p

    def start_capture(self, idx: int | None) -> subprocess.Popen | None:
        """tcpdump on switch port ``idx`` (``--pcap``), or nothing."""
        if idx is None:
            return None
        path = self.out / f"port-s0-h{idx}.pcap"
        p = self.popen(self.sw_ns, ["tcpdump", "-i", f"s{idx}", "-w", str(path), "-s", "128", "-U", "-n", "-q",
                                    "-Z", "root"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if "listening" not in _readline(p.stderr, 10.0):
            raise EmulationError("tcpdump did not start")
        return p

    def stop_switch(self, sw: subprocess.Popen, tcpdump: subprocess.Popen | None) -> dict[str, Any]:
        """Stop the switch and the capture; the switch's report."""
        sw.send_signal(signal.SIGTERM)
        try:
            sw.wait(timeout=10)
        except subprocess.TimeoutExpired:
            sw.kill()
        if tcpdump is not None and tcpdump.poll() is None:
            tcpdump.send_signal(signal.SIGINT)
            try:
                tcpdump.wait(timeout=5)
            except subprocess.TimeoutExpired:
                tcpdump.kill()
        sp = self.work / "switch-stats.json"
        if not sp.exists():
            err = (sw.stderr.read() or "").strip().splitlines()
            raise EmulationError(f"ecnlab-switch wrote no report: {err[-1] if err else sw.returncode}")
        return json.loads(sp.read_text())

    # -- the agents --
    def start_agents(self, cc_map: dict[str, dict[str, Any]]) -> dict[tuple[int, str], subprocess.Popen]:
        """Two agents per host at most, started and ready: TCP (flows in and out, messages)
        and probes. Probes get a process of their own so that their send timestamps never
        wait for the GIL of busy sender threads."""
        plan = self.plan
        flows, messages = plan["flows"], plan["messages"]
        mss = plan["mss"] if plan["mss"] < 1460 else None
        kernel = lambda f: cc_map[f["cc_name"]]["kernel"]  # noqa: E731
        probes = [{**p, "dst_ip": _ip(p["dst"])} for p in plan["probes"]]
        agents: dict[tuple[int, str], subprocess.Popen] = {}
        for h in range(self.n):
            out_flows = [{**f, "dst_ip": _ip(f["dst"]), "cc": kernel(f), "mss": mss} for f in flows if f["src"] == h]
            in_flows = [f for f in flows if f["dst"] == h]
            my_probes = [p for p in probes if p["src"] == h]
            out_msgs = [{"id": m["id"], "dst": m["dst"], "dst_ip": _ip(m["dst"]), "size": m["size"], "class": m["class"],
                         "start_s": m["start_s"], "cc": kernel(m)} for m in messages if m["src"] == h]
            in_msgs = [m for m in messages if m["dst"] == h]
            roles = (["tcp"] if out_flows or in_flows or out_msgs or in_msgs else []) + (["probes"] if my_probes else [])
            for role in roles:
                spec = {
                    "host": h, "role": role, "ip": _ip(h), "duration_s": plan["duration_s"],
                    "sample_interval_s": plan["sample_interval_s"],
                    "listen": bool(in_flows or in_msgs) and role == "tcp",
                    "messages": out_msgs if role == "tcp" else [],
                    "persistent": plan["persistent_connections"],
                    "pias": plan["pias_thresholds_bytes"],
                    "mss": mss,
                    "traffic_rx_cc": kernel(messages[0]) if messages else None,
                    # The receiver's half of DCTCP (RFC 8257 §3.2, its CE echo) lives in
                    # the algorithm: accepted sockets inherit it from the listener.
                    "listen_cc": next((kernel(f) for f in in_flows + in_msgs if f["cc_name"] in BPF_CC), None),
                    "rx_cc": {str(f["id"]): kernel(f) for f in in_flows},
                    "ack_tos": (int(plan["ack_dscp"]) << 2) if plan["ack_dscp"] is not None else None,
                    "flows": out_flows if role == "tcp" else [],
                    "probes": my_probes if role == "probes" else [],
                    "results": str(self.work / f"agent-h{h}-{role}.json"),
                }
                sp = self.work / f"agent-h{h}-{role}-spec.json"
                sp.write_text(json.dumps(spec, indent=1))
                agents[(h, role)] = self.popen(
                    self.host_ns[h], [sys.executable, "-m", "ecnlab.emulate", "--agent", str(sp)],
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                    cwd=_PACKAGE_ROOT)
        for (h, role), p in agents.items():
            line = _readline(p.stdout, 30.0)
            if line.strip() != "ready":
                raise EmulationError(f"traffic agent ({role}) of host {h} did not start: {_why(p, line)}")
        return agents

    def drive(self, sw: subprocess.Popen, agents: dict[tuple[int, str], subprocess.Popen]) -> tuple[float, float]:
        """The run's timeline: the agents start at ``t0``; the switch's measurement window
        opens after the warm-up and closes at the end, or when every message is done
        (``stop_when_done``). Returns ``t0`` and the traffic's duration."""
        plan = self.plan
        duration, warmup = plan["duration_s"], plan["warmup_s"]
        t0 = time.time() + 0.3
        for p in agents.values():
            p.stdin.write(f"{t0!r}\n")
            p.stdin.flush()
        if not self.opts.get("quiet"):
            s = plan["scale"]
            sys.stderr.write(f"ecnlab: emulating {duration:.2f} s (rates / {s['factor']:g}, {s['mode']})...\n")
        senders = {k: p for k, p in agents.items() if k[1] == "tcp" and any(m["src"] == k[0] for m in plan["messages"])}
        done: dict[tuple[int, str], float] = {}

        def all_done() -> bool:
            """Whether every traffic sender has said ``done`` (stop_when_done)."""
            if not plan["stop_when_done"]:
                return False
            for k, p in senders.items():
                if k not in done and select.select([p.stdout], [], [], 0)[0]:
                    line = p.stdout.readline()
                    if line.startswith("done "):
                        done[k] = float(line.split()[1])
                    elif not line:
                        done[k] = time.time()  # exited: nothing more will come
            return len(done) == len(senders)

        _watch_until(t0 + warmup, sw, all_done)
        if not all_done():
            sw.send_signal(signal.SIGUSR1)
            _watch_until(t0 + duration, sw, all_done)
        t_stop = min(time.time(), t0 + duration)
        if all_done() and t_stop < t0 + duration:
            for p in agents.values():
                try:
                    p.stdin.write("stop\n")
                    p.stdin.flush()
                except OSError:
                    pass
            duration = max(t_stop - t0, 1e-3)
        sw.send_signal(signal.SIGUSR2)
        return t0, duration

    def collect(self, agents: dict[tuple[int, str], subprocess.Popen], t_end: float) -> dict[int, dict[str, Any]]:
        """The agents' results, merged per host (waiting for them until ``t_end``)."""
        results: dict[int, dict[str, Any]] = {}
        for (h, role), p in agents.items():
            try:
                p.wait(timeout=max(5.0, t_end - time.time()))
            except subprocess.TimeoutExpired:
                self.warn(f"traffic agent ({role}) of host {h} did not finish; its results are missing")
                p.kill()
            rp = self.work / f"agent-h{h}-{role}.json"
            if not rp.exists():
                err = (p.stderr.read() or "").strip().splitlines()
                self.warn(f"traffic agent ({role}) of host {h} wrote no results: {err[-1] if err else p.returncode}")
                continue
            r = json.loads(rp.read_text())
            merged = results.setdefault(h, {"samples_t": [], "samples": [], "flows": {}, "probes": {}, "netstat": {},
                                            "errors": []})
            if role == "tcp":
                for k in ("samples_t", "samples", "flows", "netstat", "rx_done", "messages", "connections"):
                    merged[k] = r.get(k, merged.get(k))
            else:
                merged["probes"] = r["probes"]
            merged["errors"] += r.get("errors", [])
        return results


# What the kernel does where the scenario's [transport] has no per-namespace knob: the
# value a host runs whatever the scenario says (include/net/tcp.h, tcp_input.c).
_KERNEL_FIXED = {
    "rto_init": "1s (TCP_TIMEOUT_INIT)",
    "rto_syn": "1s (TCP_TIMEOUT_INIT, doubled per SYN retransmission)",
    "rto_max": "120s (TCP_RTO_MAX; net.ipv4.tcp_rto_max_ms is left alone)",
    "delayed_ack_timeout": "40ms, adapting up to 200ms (TCP_ATO_MIN, TCP_DELACK_MAX)",
}


# tcp_cubic's module parameters (beta 717/1024, bic_scale 41, fast_convergence,
# hystart): global to the machine, so never changed for a run.
_KERNEL_CUBIC = {"cubic_beta": 0.7, "cubic_c": 0.4, "cubic_fast_convergence": True, "cubic_hystart": True}


def switch_ingress(doc: dict[str, Any], capture_frames: int = 0) -> dict[str, Any]:
    """The switch's ingress keys (crates/ecnlab-emu/src/capture.rs): the capture of
    ``capture_frames`` TCP frames, and the resolved scenario's ``[faults]``, with
    ``drop_byte`` moved past the agent's header (``HEADER``, written before every message:
    the kernel's stream carries it, the simulator's does not). Pure."""
    out: dict[str, Any] = {}
    if capture_frames:
        out["capture_frames"] = int(capture_frames)
    faults = dict(doc.get("faults") or {})
    if faults.get("drop_byte") is not None:
        faults["drop_byte"] = f"{_core.parse_unit('size', faults['drop_byte']) + HEADER.size}B"
    if faults:
        out["faults"] = faults
    return out


def host_stack(transport: dict[str, Any], cubic: bool = False) -> dict[str, Any]:
    """How the kernel's hosts carry out a *resolved* ``[transport]`` (its host profile's
    defaults included, so ``rto_min`` is 200 ms under ``linux`` and 5 ms under ``textbook``
    unless the scenario sets it): ``route`` (``ip route`` metrics of every host route),
    ``sysctls`` (per host namespace), ``fixed`` (keys the kernel does its own way: the
    scenario's value and the kernel's), ``warnings`` (model choices the kernel cannot make;
    ``cubic``: whether a flow runs Cubic, whose parameters are then checked). Pure."""
    tr = transport
    route = {
        # RTAX_RTO_MIN is in ms.
        "rto_min": f"{max(1, math.ceil(parse_time_ns(tr['rto_min']) / 1e6))}ms",
        "initcwnd": str(int(tr["init_cwnd"])),
    }
    warnings = []
    # delayed_ack 1: an ACK per segment (TCP_QUICKACK held on, per route); 2: Linux's own
    # rule, an ACK once more than one full segment is unacknowledged.
    delack = int(tr["delayed_ack"])
    if delack == 1:
        route["quickack"] = "1"
    elif delack > 2:
        warnings.append(f"transport.delayed_ack = {delack}: the kernel ACKs every second segment (Linux's rule)")
    sysctls = {
        "net.ipv4.tcp_reordering": str(int(tr["dupack_thresh"])),
        "net.ipv4.tcp_slow_start_after_idle": "1" if tr["slow_start_restart"] else "0",
    }
    for key in ("syn_retries", "synack_retries"):  # linux profile: net.ipv4.tcp_syn(ack)_retries
        if key in tr:
            sysctls[f"net.ipv4.tcp_{key}"] = str(int(tr[key]))
    if "sack" in tr:  # linux profile; the textbook hosts keep the kernel's SACK
        sysctls["net.ipv4.tcp_sack"] = "1" if tr["sack"] else "0"
    for key, kernel in (("prr", True), ("limited_transmit", True)):
        if key in tr and bool(tr[key]) != kernel:
            warnings.append(f"transport.{key} = {str(tr[key]).lower()}: the kernel always does it")
    if cubic:
        for key, kernel in _KERNEL_CUBIC.items():
            if key in tr and tr[key] != kernel:
                warnings.append(f"transport.{key} = {tr[key]}: the kernel's cubic runs with {kernel} (its module "
                                "parameters are global to the machine and left alone)")
    fixed = {k: {"scenario": tr[k], "kernel": v} for k, v in _KERNEL_FIXED.items() if k in tr}
    return {"route": route, "sysctls": sysctls, "fixed": fixed, "warnings": warnings}


def _watch_until(t: float, sw: subprocess.Popen, done=None) -> None:
    """Sleep until wall time t or until ``done()`` is true, but give up at once
    (EmulationError, so cleanup runs) if the switch dies: without it, every number of the
    run would be meaningless."""
    while True:
        if done is not None and done():
            return
        if sw.poll() is not None:
            rc = sw.returncode
            how = f"killed by signal {-rc}" if rc < 0 else f"exit status {rc}"
            err = (sw.stderr.read() or "").strip().splitlines() if sw.stderr else []
            raise EmulationError(f"ecnlab-switch stopped during the run ({how}){': ' + err[-1] if err else ''}")
        d = t - time.time()
        if d <= 0:
            return
        time.sleep(min(d, 0.05))


def _why(p: subprocess.Popen, line: str) -> str:
    """The last line a child that failed to start said."""
    if p.poll() is None:
        try:
            p.wait(timeout=2)
        except subprocess.TimeoutExpired:
            return line.strip() or "no answer"
    err = (p.stderr.read() or "").strip().splitlines() if p.stderr else []
    return (err[-1] if err else line.strip()) or f"exit status {p.returncode}"


def _readline(f, timeout: float) -> str:
    r, _, _ = select.select([f], [], [], timeout)
    return f.readline() if r else ""


def _congestion_controls(plan: dict[str, Any], em: _Emulation, dctcp_fallback: str):
    """What the kernel runs for each scenario cc (``cc_map``), the BPF objects to load with
    their parameters, and ECN per sending host (``cc_ecn``: the sysctl when all its flows
    agree, else per-destination routes)."""
    flows, messages = plan["flows"], plan["messages"]
    avail = available_congestion_controls()
    cc_map: dict[str, dict[str, Any]] = {}
    for name in sorted({f["cc_name"] for f in flows + messages[:1]}):
        if name in ("newreno", "new_reno", "reno"):
            cc_map[name] = {"kernel": "reno", "ecn": False, "fallback": False}
        elif name in ("ecn_star", "ecn"):
            cc_map[name] = {"kernel": "reno", "ecn": True, "fallback": False}
        elif name == "cubic":
            # The simulator's Linux CUBIC (linux host profile) runs without ECN, as Linux's
            # default (net.ipv4.tcp_ecn = 2: never asks for it).
            cc_map[name] = {"kernel": "cubic", "ecn": False, "fallback": False}
        elif name in BPF_CC:
            kernel, obj = BPF_CC[name]
            cc_map[name] = {"kernel": kernel, "ecn": True, "fallback": False,
                            "implementation": f"BPF struct_ops, crates/ecnlab-emu/bpf/{obj.removesuffix('.o')}.c",
                            "params": bpf_params(name, plan["scenario"])}
        else:
            raise EmulationError(f"cc {name}: no kernel equivalent")
        if name not in BPF_CC and cc_map[name]["kernel"] not in avail:
            raise EmulationError(f"cc {cc_map[name]['kernel']} is not available in this kernel ({' '.join(avail)})")
    if dctcp_fallback not in ("cubic", "reno"):
        raise EmulationError(f"--dctcp-fallback {dctcp_fallback}: use cubic or reno")
    if any(name in BPF_CC for name in cc_map) and dctcp_fallback not in avail:
        raise EmulationError(f"cc {dctcp_fallback} (the fallback) is not available in this kernel ({' '.join(avail)})")
    # Each object once, with its parameters (the loader's OBJECT:NAME=VALUE,...).
    bpf_objs = sorted({BPF_CC[name][1] + ":" + ",".join(f"{k}={v}" for k, v in cc_map[name]["params"].items())
                       for name in cc_map if name in BPF_CC})
    cc_ecn: dict[int, dict[str, Any]] = {}
    for h in range(len(plan["hosts"])):
        mine = [f for f in flows + messages if f["src"] == h]
        wants = {f["dst"]: set() for f in mine}
        for f in mine:
            wants[f["dst"]].add(cc_map[f["cc_name"]]["ecn"])
        if mine and all(cc_map[f["cc_name"]]["ecn"] for f in mine):
            cc_ecn[h] = {"sysctl": "1", "routes": set()}
            continue
        routes = set()
        for d, w in wants.items():
            if True in w:
                routes.add(d)
                if False in w:
                    em.warn(f"host {h} -> {d}: flows with and without ECN; Linux enables ECN per destination, so "
                            "all of them use ECN")
        cc_ecn[h] = {"sysctl": "2", "routes": routes}
    return cc_map, bpf_objs, cc_ecn


def _pcap_index(pcap_port: int | str | None, n: int) -> int | None:
    """The host index whose switch port ``--pcap`` captures (a host index or ``s0->hN``)."""
    if pcap_port is None:
        return None
    m = re.fullmatch(r"(?:s0->)?h?(\d+)", str(pcap_port))
    if not m or int(m.group(1)) >= n:
        raise EmulationError(f"--pcap {pcap_port}: not a port (use a host index 0..{n - 1} or s0->hN)")
    if shutil.which("tcpdump") is None:
        raise EmulationError("--pcap needs tcpdump (apt-get install tcpdump)")
    return int(m.group(1))


def emulate(scenario: str | os.PathLike | dict[str, Any], out_dir: str | os.PathLike, *args: Any,
            **kwargs: Any) -> dict[str, Any]:
    """Run a scenario on the emulated switch and write its results as ``out_dir``, whole
    (``ecnlab.outdir``: the run writes into a fresh directory renamed into place at its
    end, so a refused, failed or interrupted emulation leaves the earlier result or
    nothing). The arguments and what it raises: ``_emulate``."""
    from ..outdir import result_dir

    with result_dir(out_dir) as tmp:
        return _emulate(scenario, tmp, *args, **kwargs)


def _emulate(
    scenario: str | os.PathLike | dict[str, Any],
    out_dir: str | os.PathLike,
    overrides: Iterable[str] = (),
    seed: int | None = None,
    pcap_port: int | str | None = None,
    *,
    rate: str | int | None = "auto",
    scale: str = "dilate",
    burst: str | None = None,
    link_delay: bool = True,
    host_shaping: bool = True,
    allow_fallback: bool = False,
    dctcp_fallback: str = "cubic",
    quiet: bool = True,
    capture_frames: int = 0,
) -> dict[str, Any]:
    """Run a scenario on the emulated switch and write its results into ``out_dir``
    (``summary.json`` last, as ``ecnlab run``). Returns the summary.

    ``rate``: host link rate to run at (``"100Mbit"``), ``"auto"`` (100 Mbit/s when the
    scenario is faster) or None (the scenario's own rate); ``scale``: ``"dilate"`` or
    ``"rate"`` (package doc). ``pcap_port``: host index (or ``"s0->h3"``) whose switch port
    is captured to ``port-<name>.pcap``; ``capture_frames``: TCP frames the switch records at
    its ingress (``emulation/switch-stats.json``'s ``ingress_tcp``, with each frame's kernel
    receive timestamp: what the hosts' kernels sent, ``ecnlab validate``'s trains and timers).
    ``cc = "dctcp"`` and ``"dctcp_dualq"`` run
    ecnlab's own BPF congestion controls (``BPF_CC``), registered in the kernel for the
    run; where the kernel refuses them the run stops (EmulationError) unless
    ``allow_fallback``, and then such flows run ``dctcp_fallback`` (``"cubic"``, default,
    or ``"reno"``) with RFC 3168 ECN, and ``emulation.cc`` says ``fallback: true``.
    Raises EmulationError (environment, unsupported scenario) or ScenarioError.
    """
    from ..api import RunResult, validate
    from ..scenario import ScenarioError

    check_environment()
    # The plan, from the scenario as the core reads it (every default the simulator would
    # use, the host profile's included).
    doc = resolve_scenario(validate(scenario, overrides))  # errors name the scenario
    if seed is not None and not (0 <= int(seed) < 2**64):
        raise ScenarioError(f"seed: {seed} is not in 0..2^64")
    plan = emulation_plan(doc, rate=None if rate in (None, "none", "off") else rate, scale=scale,
                          seed=None if seed is None else int(seed), burst=burst, link_delay=link_delay)
    out = Path(out_dir).resolve()  # absolute: the agents and the switch start in other directories
    em = _Emulation(plan, out, {"host_shaping": host_shaping, "quiet": quiet, "capture_frames": capture_frames})
    em.work.mkdir(parents=True, exist_ok=True)
    cc_map, bpf_objs, cc_ecn = _congestion_controls(plan, em, dctcp_fallback)
    # The hosts' TCP: the resolved [transport] (rto_min, initcwnd, delayed ACKs...).
    em.stack = host_stack(plan["scenario"]["transport"], cubic="cubic" in cc_map)
    for w in em.stack["warnings"]:
        em.warn(w)
    pcap_idx = _pcap_index(pcap_port, em.n)
    exe = switch_binary()

    t_wall = time.perf_counter()
    old_handlers = {}

    def on_term(signum, frame):
        raise _Terminated(signum)

    main_thread = threading.current_thread() is threading.main_thread()
    if main_thread:
        for sig in (signal.SIGTERM, signal.SIGHUP):
            old_handlers[sig] = signal.signal(sig, on_term)
    try:
        em.start_reaper()
        cleanup_stale()
        if bpf_objs:
            em.load_congestion_controls(bpf_objs, cc_map, allow_fallback, dctcp_fallback)
        em.build(cc_ecn)
        cpu_before, t_before = _cpu_seconds(), time.perf_counter()
        sw = em.start_switch(exe)
        tcpdump = em.start_capture(pcap_idx)
        agents = em.start_agents(cc_map)
        t0, duration = em.drive(sw, agents)
        results = em.collect(agents, t0 + duration + 10)
        switch_stats = em.stop_switch(sw, tcpdump)
        cpu_after, t_after = _cpu_seconds(), time.perf_counter()
    finally:
        ign = {}
        if main_thread:
            for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                ign[sig] = signal.signal(sig, signal.SIG_IGN)
        try:
            left = em.cleanup()
            if not left:
                em.release_reaper()
        finally:
            if main_thread:
                for sig, h in ign.items():
                    signal.signal(sig, old_handlers.get(sig, h))
        if left:
            sys.stderr.write(f"ecnlab: warning: could not delete namespaces {', '.join(left)}\n")
    wall = time.perf_counter() - t_wall

    # A machine that stalls (memory pressure, a CPU hog at real-time priority) delays the
    # run's own signals: the switch's measurement window then differs from the planned one,
    # and every figure of the run is suspect. Say so rather than report them silently.
    window, planned = switch_stats["window"]["duration_s"], duration - plan["warmup_s"]
    if planned > 0 and abs(window - planned) > 0.1 * planned:
        em.warn(f"the machine stalled during the run: the measurement window lasted {window:.2f} s of "
                f"{planned:.2f} s planned; its figures are not comparable")
    # The switch, the agents and tcpdump are this process's reaped children by now.
    others = ((cpu_after[0] - cpu_before[0]) - (cpu_after[1] - cpu_before[1])) / max(t_after - t_before, 1e-9)
    others = max(others, 0.0)
    # A virtual machine's CPUs are also taken by its host (steal time): measured in a CI
    # run, 0.25 of a core stolen during an emulation that carried 64 of its 100 Mbps.
    stolen = max((cpu_after[2] - cpu_before[2]) / max(t_after - t_before, 1e-9), 0.0)
    if others > CONTENDED_CORES:
        em.warn(f"other processes used {others:.2f} of the machine's {os.cpu_count()} cores "
                f"during the run: the hosts' timers and senders waited for a CPU, so its timing figures "
                f"measure the machine as well")
    if stolen > STOLEN_CORES:
        em.warn(f"the hypervisor took {stolen:.2f} of the machine's {os.cpu_count()} cores during the run (steal "
                f"time): the hosts' timers and senders waited for a CPU, so its timing figures measure the "
                f"machine as well")
    stalls = switch_stats["window"]["stalls"]
    if stalls["stalled_fraction"] > STALLED_FRACTION:
        em.warn(f"the switch's loop stalled {stalls['count']} times during the measurement window, "
                f"{stalls['stalled_s'] * 1e3:.1f} ms in all ({stalls['stalled_fraction']:.2%}; the longest "
                f"{stalls['max_ms']:.1f} ms): its frames waited for a CPU, so its timing figures measure the "
                f"machine as well")
    run = {"duration": duration, "t0": t0, "cc_map": cc_map, "stack": em.stack, "warnings": em.warnings,
           "others_cpu_cores": others, "stolen_cpu_cores": stolen,
           "work": em.work}
    summary, flow_rows, probe_rows, ts = summarize(plan, results, switch_stats, run)
    summary["wall_time_s"] = wall
    order = ["scenario", "seed", "sim_time_s", "wall_time_s", "events", "packet_hops"]
    summary = ({k: summary[k] for k in order} | {k: v for k, v in summary.items() if k not in order + ["emulation"]}
               | {"emulation": summary["emulation"]})
    RunResult(plan["scenario"], summary, flow_rows, probe_rows, ts).write_files(out)
    return summary
