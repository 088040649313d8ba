"""One emulation: namespaces and processes owned and always removed (``_Emulation``), the
run itself (``emulate``) and its results in the files of ``ecnlab run``."""

from __future__ import annotations

import json
import math
import os
import platform
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

from .common import EmulationError, SUBNET, _Terminated
from .units import parse_rate_bps, parse_size_bytes, parse_time_ns, resolve_scenario, scale_scenario
from .namespaces import (_child_setup, _delete_namespaces, _in_netns, _new_prefix, _offloads_off, _run,
                         _write_sysctls, available_congestion_controls, check_environment, cleanup_stale,
                         switch_binary)
from .kernel_cc import BPF_CC, _kernel_refusal, bpf_dir, bpf_params


def _mac(i: int) -> str:
    return f"02:ec:77:00:{(i >> 8) & 0xFF:02x}:{i & 0xFF:02x}"


def _ip(i: int) -> str:
    return f"{SUBNET}.{i + 1}"


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


def classify(doc: dict[str, Any], dscp: int) -> int:
    """The queue a flow of this class (DSCP) takes at the switch, as the core classifies."""
    sw = doc["switch"]
    n = int(sw["queues"])
    m = sw["dscp_to_queue"]
    return int(m[dscp]) if dscp < len(m) else min(dscp, n - 1)


class _Emulation:
    """One run: owns namespaces and processes, and always removes them."""

    def __init__(self, doc: dict[str, Any], out: Path, seed: int, opts: dict[str, Any]):
        self.doc = doc
        self.out = out
        self.seed = seed
        self.opts = opts
        self.prefix = _new_prefix()
        self.work = out / "emulation"
        self.namespaces: list[str] = []
        self.procs: list[subprocess.Popen] = []
        self.warnings: list[str] = []
        topo = doc["topology"]
        self.n = int(topo["hosts"])
        self.sw_ns = f"{self.prefix}-sw"
        self.host_ns = [f"{self.prefix}-h{i}" for i in range(self.n)]

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
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
            cwd=str(Path(__file__).resolve().parents[2]))

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

    # -- topology --
    def build(self, link_rates: list[int], link_delays: list[int], flows: list[dict], cc_ecn: dict) -> None:
        names = [self.sw_ns, *self.host_ns]
        for ns in names:
            _run(["ip", "netns", "add", ns])
            self.namespaces.append(ns)
        off6 = {"net.ipv6.conf.all.disable_ipv6": "1", "net.ipv6.conf.default.disable_ipv6": "1"}
        _in_netns(self.sw_ns, _write_sysctls, off6)
        stack = self.stack
        route_opts = " ".join(f"{k} {v}" for k, v in stack["route"].items())
        ack_dscp = self.doc["host"]["ack_dscp"]
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
        for i, ns in enumerate(self.host_ns):
            b = [
                f"link set h{i} address {_mac(i)}",
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
                    b.append(f"neigh replace {_ip(j)} lladdr {_mac(j)} dev h{i} nud permanent")
            _run(["ip", "-n", ns, "-batch", "-"], input="\n".join(b) + "\n")
        _run(["ip", "-n", self.sw_ns, "-batch", "-"],
             input="".join(f"link set s{i} up\n" for i in range(self.n)))
        _in_netns(self.sw_ns, _offloads_off, [f"s{i}" for i in range(self.n)])
        for i, ns in enumerate(self.host_ns):
            _in_netns(ns, _offloads_off, [f"h{i}"])
        # The host's NIC: its line rate, with a FIFO of host.nic_buffer (tbf; the switch
        # side is shaped by the switch). Propagation delays are applied by the switch.
        if self.opts.get("host_shaping", True):
            nic = parse_size_bytes(self.doc["host"]["nic_buffer"])
            for i in range(self.n):
                burst = max(2 * 1514, int(link_rates[i] * 50e-6 / 8))
                p = _run(["tc", "-n", self.host_ns[i], "qdisc", "replace", "dev", f"h{i}", "root", "tbf",
                          "rate", f"{link_rates[i]}bit", "burst", str(burst), "limit", str(max(nic, 3 * burst))],
                         check=False)
                if p.returncode != 0:
                    self.warn(f"cannot shape hosts to their link rate (tc tbf: {p.stderr.strip()}); "
                              "hosts send at memory speed")
                    break

    def start_switch(self, exe: Path, link_rates: list[int], link_delays: list[int]) -> subprocess.Popen:
        sw = dict(self.doc["switch"])
        rate = min(link_rates)
        burst = self.opts.get("burst")
        burst_b = parse_size_bytes(burst) if burst not in (None, "auto") else max(2500, rate * 100e-6 / 8)
        cfg = {
            "ports": [{"ifname": f"s{i}", "name": f"s0->h{i}", "rate": f"{link_rates[i]}bps",
                       "delay": f"{link_delays[i] if self.opts.get('link_delay', True) else 0}ns"}
                      for i in range(self.n)],
            "switch": sw,
            "marking": self.doc["marking"],
            # The shaper's rate fraction is the switch's own default (config.rs; the report
            # says which ran); the bucket is the emulation's rule above.
            "shaper": {"burst": f"{int(burst_b)}B"},
            "static_macs": [{"mac": _mac(i), "port": i} for i in range(self.n)],
            "seed": self.seed,
            "stats_interval": f"{self.opts['sample_ns']}ns",
        }
        if self.opts.get("realtime", True):
            cfg["realtime_priority"] = 50
        (self.work / "switch.json").write_text(json.dumps(cfg, indent=2) + "\n")
        p = self.popen(self.sw_ns, [str(exe), "--config", str(self.work / "switch.json"),
                                    "--stats", str(self.work / "switch-stats.json"),
                                    "--timeseries", str(self.work / "switch-timeseries.jsonl")],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = _readline(p.stdout, 10.0)
        if line.strip() != "ready":
            raise EmulationError(f"ecnlab-switch did not start: {_why(p, line)}")
        return p


# What the kernel does where the scenario's [transport] has no per-namespace knob: the
# value a host runs whatever the scenario says (include/net/tcp.h, tcp_input.c).
_KERNEL_FIXED = {
    "rto_init": "1s (TCP_TIMEOUT_INIT)",
    "rto_max": "120s (TCP_RTO_MAX; net.ipv4.tcp_rto_max_ms is left alone)",
    "delayed_ack_timeout": "40ms, adapting up to 200ms (TCP_ATO_MIN, TCP_DELACK_MAX)",
}


# tcp_cubic's module parameters (beta 717/1024, bic_scale 41, fast_convergence,
# hystart): global to the machine, so never changed for a run.
_KERNEL_CUBIC = {"cubic_beta": 0.7, "cubic_c": 0.4, "cubic_fast_convergence": True, "cubic_hystart": True}


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


def expand_flows(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """One record per flow, ids in the order of ``[[flows]]`` and ``count`` (as ecnlab run)."""
    flows = []
    for si, f in enumerate(doc["flows"]):
        for _ in range(int(f["count"])):
            flows.append({
                "id": len(flows), "spec": si, "src": int(f["src"]), "dst": int(f["dst"]),
                "class": int(f["class"]),
                "start_s": parse_time_ns(f["start"]) / 1e9,
                "stop_s": parse_time_ns(f["stop"]) / 1e9 if f.get("stop") is not None else None,
                "size": parse_size_bytes(f["size"]) if f.get("size") is not None else None,
                "rate_bps": parse_rate_bps(f["rate"]) if f.get("rate") is not None else None,
                "cc_name": f["cc"] or doc["transport"]["cc"],
            })
    return flows


_UNSUPPORTED = ("rtt_variation",)


def workload_binary(switch_exe: Path) -> Path:
    """``ecnlab-workload``, built beside ``ecnlab-switch`` (same crate)."""
    exe = switch_exe.parent / "ecnlab-workload"
    if exe.exists():
        return exe
    found = shutil.which("ecnlab-workload")
    if found:
        return Path(found)
    raise EmulationError("ecnlab-workload not found: run `cargo build --release -p ecnlab-emu`")


def generate_messages(doc: dict[str, Any], seed: int, first_id: int, work: Path, exe: Path) -> list[dict[str, Any]]:
    """The ``[[traffic]]`` flow arrivals of the (scaled) scenario, from the simulator's own
    generator (``ecnlab-workload``: same code, same seed derivation, so the same flows as
    ``ecnlab run`` with this seed). Ids follow the ``[[flows]]`` ones, as in ``ecnlab run``."""
    path = work / "scenario-emulated.json"
    path.write_text(json.dumps(doc))
    p = subprocess.run([str(workload_binary(exe)), str(path), "--seed", str(seed)], capture_output=True, text=True,
                       timeout=120)
    if p.returncode != 0:
        msg = (p.stderr.strip().splitlines() or ["?"])[-1].removeprefix("ecnlab-workload: error: ")
        raise EmulationError(f"traffic: {msg}")
    n_specs = len(doc["flows"])
    cc = doc["transport"]["cc"]
    out = []
    for line in p.stdout.splitlines():
        a = json.loads(line)
        out.append({"id": first_id + len(out), "spec": n_specs + a["source"], "src": a["src"], "dst": a["dst"],
                     "class": a["class"], "size": a["size"], "start_s": a["start_ns"] / 1e9, "stop_s": None,
                     "rate_bps": None, "cc_name": cc, "traffic": True})
    return out


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
) -> dict[str, Any]:
    """Run a scenario on the emulated switch and write its results into ``out_dir``
    (``summary.json`` last, as ``ecnlab run``). Returns the summary.

    ``rate``: host link rate to run at (``"100Mbit"``), ``"auto"`` (100 Mbit/s when the
    scenario is faster) or None (the scenario's own rate); ``scale``: ``"dilate"`` or
    ``"rate"`` (module doc). ``pcap_port``: host index (or ``"s0->h3"``) whose switch port
    is captured to ``port-<name>.pcap``. ``cc = "dctcp"`` and ``"dctcp_dualq"`` run
    ecnlab's own BPF congestion controls (``BPF_CC``), registered in the kernel for the
    run; where the kernel refuses them the run stops (EmulationError) unless
    ``allow_fallback``, and then such flows run ``dctcp_fallback`` (``"cubic"``, default,
    or ``"reno"``) with RFC 3168 ECN, and ``emulation.cc`` says ``fallback: true``.
    Raises EmulationError (environment, unsupported scenario) or ScenarioError.
    """
    from ..api import RunResult, validate
    from ..scenario import ScenarioError

    check_environment()
    doc0 = validate(scenario, overrides)  # errors name the scenario
    # From here on the scenario as the core reads it: every default the simulator would
    # use (the host profile's included), every unit canonical.
    doc0 = resolve_scenario(doc0)
    for key in _UNSUPPORTED:
        if doc0.get(key):
            raise EmulationError(f"emulate does not support `{key}` yet (use [[flows]] and [[probes]])")
    if doc0.get("switch", {}).get("pfc", {}).get("enabled"):
        # The emulated switch does not pause its hosts' NICs (802.1Qbb frames on the veths).
        raise EmulationError("emulate does not support `switch.pfc` (PFC): the simulator does")
    topo = doc0.get("topology", {})
    if topo.get("kind") != "star":
        raise EmulationError(f"emulate supports star topologies only (this one is `{topo.get('kind')}`)")
    if seed is not None and not (0 <= int(seed) < 2**64):
        raise ScenarioError(f"seed: {seed} is not in 0..2^64")
    run_seed = int(seed) if seed is not None else int(doc0["seed"])

    # Scaling.
    orig_rate = parse_rate_bps(topo["link_rate"])
    if rate in (None, "none", "off"):
        target = orig_rate
    elif rate == "auto":
        target = min(orig_rate, 100_000_000)
    else:
        target = parse_rate_bps(rate)
    if target <= 0:
        raise EmulationError("--rate must be larger than 0")
    factor = orig_rate / target
    doc = scale_scenario(doc0, factor, scale)
    topo = doc["topology"]
    n = int(topo["hosts"])
    # Per-host link rate and delay where the scenario lists them, else the common one.
    own_rates, own_delays = topo["host_link_rate"], topo["host_link_delay"]
    link_rates = [parse_rate_bps(own_rates[i] if i < len(own_rates) else topo["link_rate"]) for i in range(n)]
    link_delays = [parse_time_ns(own_delays[i] if i < len(own_delays) else topo["link_delay"]) for i in range(n)]
    duration = parse_time_ns(doc["duration"]) / 1e9
    metrics = doc["metrics"]
    warmup = parse_time_ns(metrics["warmup"]) / 1e9
    sample_ns = max(parse_time_ns(metrics["sample_interval"]), 10_000_000)

    # Absolute: the agents and the switch start in other working directories.
    out = Path(out_dir).resolve()  # a new directory of its own (emulate)
    opts = {"burst": burst, "link_delay": link_delay, "host_shaping": host_shaping, "quiet": quiet,
            "sample_ns": sample_ns, "orig_rate": orig_rate, "target_rate": target}
    em = _Emulation(doc, out, run_seed, opts)
    em.work.mkdir(parents=True, exist_ok=True)
    for old in em.work.glob("*"):
        if old.is_file():
            old.unlink()

    # Congestion control per flow.
    flows = expand_flows(doc)
    exe = switch_binary()
    messages = generate_messages(doc, run_seed, len(flows), em.work, exe) if doc.get("traffic") else []
    stop_when_done = bool(messages) and all(f["size"] is not None for f in flows) and \
        bool(metrics["stop_when_done"])
    pias = [parse_size_bytes(t) for t in doc["host"]["pias_thresholds"]]
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
                            "params": bpf_params(name, doc)}
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
    # ECN per sending host: the sysctl when all its flows agree, else per-destination routes.
    cc_ecn: dict[int, dict[str, Any]] = {}
    for h in range(n):
        mine = [f for f in flows if f["src"] == h] + [m for m in messages if m["src"] == h]
        wants = {f["dst"]: set() for f in mine}
        for f in mine:
            wants[f["dst"]].add(cc_map[f["cc_name"]]["ecn"])
        if mine and all(cc_map[f["cc_name"]]["ecn"] for f in mine):
            cc_ecn[h] = {"sysctl": "1", "routes": set()}
        else:
            routes = set()
            for d, w in wants.items():
                if True in w:
                    routes.add(d)
                    if False in w:
                        em.warn(f"host {h} -> {d}: flows with and without ECN; Linux enables ECN per "
                                f"destination, so all of them use ECN")
            cc_ecn[h] = {"sysctl": "2", "routes": routes}
    # The hosts' TCP: the resolved [transport] (rto_min, initcwnd, delayed ACKs...).
    em.stack = host_stack(doc["transport"], cubic="cubic" in cc_map)
    for w in em.stack["warnings"]:
        em.warn(w)
    # The agents start each listed flow at its start: the simulator's seeded jitter is not drawn here.
    jittered = [i for i, f in enumerate(doc.get("flows", [])) if parse_time_ns(f.get("start_jitter") or "0s") > 0]
    if jittered:
        em.warn(f"flows[{jittered[0]}].start_jitter{' and others' if len(jittered) > 1 else ''}: not applied "
                f"(the emulator starts each listed flow at its start)")

    mss = int(doc["transport"]["mss"])
    pcap_idx = None
    if pcap_port is not None:
        s = str(pcap_port)
        m = re.fullmatch(r"(?:s0->)?h?(\d+)", s)
        if not m or int(m.group(1)) >= n:
            raise EmulationError(f"--pcap {pcap_port}: not a port (use a host index 0..{n - 1} or s0->hN)")
        pcap_idx = int(m.group(1))
        if shutil.which("tcpdump") is None:
            raise EmulationError("--pcap needs tcpdump (apt-get install tcpdump)")

    t_wall = time.perf_counter()
    old_handlers = {}

    def on_term(signum, frame):
        raise _Terminated(signum)

    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGHUP):
            old_handlers[sig] = signal.signal(sig, on_term)
    results: dict[int, dict[str, Any]] = {}
    switch_stats: dict[str, Any] = {}
    t0 = 0.0
    try:
        em.start_reaper()
        cleanup_stale()
        if bpf_objs:
            em.load_congestion_controls(bpf_objs, cc_map, allow_fallback, dctcp_fallback)
        em.build(link_rates, link_delays, flows, cc_ecn)
        sw = em.start_switch(exe, link_rates, link_delays)
        tcpdump = None
        if pcap_idx is not None:
            pcap_path = out / f"port-s0-h{pcap_idx}.pcap"
            tcpdump = em.popen(em.sw_ns, ["tcpdump", "-i", f"s{pcap_idx}", "-w", str(pcap_path), "-s", "128",
                                          "-U", "-n", "-q", "-Z", "root"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True)
            if "listening" not in _readline(tcpdump.stderr, 10.0):
                raise EmulationError("tcpdump did not start")
        # Agents.
        agents: dict[int, subprocess.Popen] = {}
        probes = []
        for pi, p in enumerate(doc["probes"]):
            probes.append({
                "id": pi, "src": int(p["src"]), "dst": int(p["dst"]), "class": int(p["class"]),
                "interval_s": parse_time_ns(p["interval"]) / 1e9, "start_s": parse_time_ns(p["start"]) / 1e9,
                "stop_s": parse_time_ns(p["stop"]) / 1e9 if p.get("stop") is not None else None,
                "size": parse_size_bytes(p["size"]), "dst_ip": _ip(int(p["dst"])),
            })
        ack_dscp = doc["host"]["ack_dscp"]
        # Two agents per host at most: TCP (flows in and out) and probes. Probes get a
        # process of their own so that their send timestamps never wait for the GIL of busy
        # sender threads.
        for h in range(n):
            out_flows = [{**f, "dst_ip": _ip(f["dst"]), "cc": cc_map[f["cc_name"]]["kernel"],
                          "mss": mss if mss < 1460 else None} for f in flows if f["src"] == h]
            in_flows = [f for f in flows if f["dst"] == h]
            my_probes = [p for p in probes if p["src"] == h]
            out_msgs = [{"id": m["id"], "dst": m["dst"], "dst_ip": _ip(m["dst"]), "size": m["size"], "class": m["class"],
                         "start_s": m["start_s"], "cc": cc_map[m["cc_name"]]["kernel"]}
                        for m in messages if m["src"] == h]
            in_msgs_list = [m for m in messages if m["dst"] == h]
            in_msgs = bool(in_msgs_list)
            roles = (["tcp"] if out_flows or in_flows or out_msgs or in_msgs else []) + (["probes"] if my_probes else [])
            for role in roles:
                spec = {
                    "host": h, "role": role, "ip": _ip(h), "duration_s": duration,
                    "sample_interval_s": sample_ns / 1e9,
                    "listen": bool(in_flows or in_msgs) and role == "tcp",
                    "messages": out_msgs if role == "tcp" else [],
                    "persistent": bool(doc["host"]["persistent_connections"]),
                    "pias": pias,
                    "mss": mss if mss < 1460 else None,
                    "traffic_rx_cc": cc_map[messages[0]["cc_name"]]["kernel"] if messages else None,
                    # The receiver's half of DCTCP (RFC 8257 §3.2, its CE echo) lives in
                    # the algorithm: accepted sockets inherit it from the listener.
                    "listen_cc": next((cc_map[f["cc_name"]]["kernel"] for f in in_flows + in_msgs_list
                                       if f["cc_name"] in BPF_CC), None),
                    "rx_cc": {str(f["id"]): cc_map[f["cc_name"]]["kernel"] for f in in_flows},
                    "ack_tos": (int(ack_dscp) << 2) if ack_dscp is not None else None,
                    "flows": out_flows if role == "tcp" else [],
                    "probes": my_probes if role == "probes" else [],
                    "results": str(em.work / f"agent-h{h}-{role}.json"),
                }
                sp = em.work / f"agent-h{h}-{role}-spec.json"
                sp.write_text(json.dumps(spec, indent=1))
                agents[(h, role)] = em.popen(
                    em.host_ns[h], [sys.executable, "-m", "ecnlab.emulate", "--agent", str(sp)],
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                    cwd=str(Path(__file__).resolve().parents[2]))
        for (h, role), p in agents.items():
            line = _readline(p.stdout, 30.0)
            if line.strip() != "ready":
                raise EmulationError(f"traffic agent ({role}) of host {h} did not start: {_why(p, line)}")
        t0 = time.time() + 0.3
        for p in agents.values():
            p.stdin.write(f"{t0!r}\n")
            p.stdin.flush()
        if not quiet:
            sys.stderr.write(f"ecnlab: emulating {duration:.2f} s (rates / {factor:g}, {scale})...\n")
        senders = {k: p for k, p in agents.items() if k[1] == "tcp" and any(m["src"] == k[0] for m in messages)}
        done: dict[tuple[int, str], float] = {}

        def all_done() -> bool:
            """Whether every traffic sender has said ``done`` (stop_when_done)."""
            if not stop_when_done:
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
        for (h, role), p in agents.items():
            try:
                p.wait(timeout=max(5.0, t0 + duration + 10 - time.time()))
            except subprocess.TimeoutExpired:
                em.warn(f"traffic agent ({role}) of host {h} did not finish; its results are missing")
                p.kill()
            rp = em.work / f"agent-h{h}-{role}.json"
            if rp.exists():
                r = json.loads(rp.read_text())
                merged = results.setdefault(h, {"samples_t": [], "samples": [], "flows": {}, "probes": {},
                                                "netstat": {}, "errors": []})
                if role == "tcp":
                    for k in ("samples_t", "samples", "flows", "netstat", "rx_done", "messages", "connections"):
                        merged[k] = r.get(k, merged.get(k))
                else:
                    merged["probes"] = r["probes"]
                merged["errors"] += r.get("errors", [])
            else:
                err = (p.stderr.read() or "").strip().splitlines()
                em.warn(f"traffic agent ({role}) of host {h} wrote no results: {err[-1] if err else p.returncode}")
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
        sp = em.work / "switch-stats.json"
        if not sp.exists():
            err = (sw.stderr.read() or "").strip().splitlines()
            raise EmulationError(f"ecnlab-switch wrote no report: {err[-1] if err else sw.returncode}")
        switch_stats = json.loads(sp.read_text())
    finally:
        ign = {}
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                ign[sig] = signal.signal(sig, signal.SIG_IGN)
        try:
            left = em.cleanup()
            if not left:
                em.release_reaper()
        finally:
            if threading.current_thread() is threading.main_thread():
                for sig, h in ign.items():
                    signal.signal(sig, old_handlers.get(sig, h))
        if left:
            sys.stderr.write(f"ecnlab: warning: could not delete namespaces {', '.join(left)}\n")
    wall = time.perf_counter() - t_wall

    # A machine that stalls (memory pressure, a CPU hog at real-time priority) delays the
    # run's own signals: the switch's measurement window then differs from the planned one,
    # and every figure of the run is suspect. Say so rather than report them silently.
    window = (switch_stats.get("window") or {}).get("duration_s")
    planned = duration - warmup
    if window is not None and planned > 0 and abs(window - planned) > 0.1 * planned:
        em.warn(f"the machine stalled during the run: the measurement window lasted {window:.2f} s of "
                f"{planned:.2f} s planned; its figures are not comparable")
    summary, flow_rows, probe_rows, ts = _summarize(
        doc, run_seed, flows, probes, results, switch_stats, t0, duration, warmup, factor, scale, cc_map, em, messages)
    summary["wall_time_s"] = wall
    order = ["scenario", "seed", "sim_time_s", "wall_time_s", "events", "packet_hops"]
    summary = ({k: summary[k] for k in order} | {k: v for k, v in summary.items() if k not in order + ["emulation"]}
               | {"emulation": summary["emulation"]})
    RunResult(doc, summary, flow_rows, probe_rows, ts).write_files(out)
    return summary


def _fill_ideal_fct(doc: dict[str, Any], rows: list[dict[str, Any]]) -> None:
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


def _summarize(doc, seed, flows, probes, results, sw, t0, duration, warmup, factor, scale, cc_map, em, messages=()):
    """summary.json (the keys of ecnlab run), flow records, probe records, time series."""
    window = max(duration - warmup, 1e-9)
    # [[traffic]] payload received per (receiver, queue) over the window.
    tgood: dict[tuple[int, int], float] = {}
    for h, r in results.items():
        ts_ = r.get("samples_t", [])
        keys = {k for smp in r.get("samples", []) for k in smp if k.startswith("t")}
        for key in keys:
            vs = [smp.get(key, 0) for smp in r["samples"]]
            q = classify(doc, int(key[1:]))
            tgood[(h, q)] = tgood.get((h, q), 0.0) + (_interp(ts_, vs, duration) - _interp(ts_, vs, warmup)) * 8 / window
    # Application-layer bytes per flow over the window.
    fgood: dict[int, float] = {}
    for f in flows:
        r = results.get(f["dst"])
        if not r:
            continue
        key = str(f["id"])
        ts = r["samples_t"]
        vs = [s.get(key, 0) for s in r["samples"]]
        fgood[f["id"]] = (_interp(ts, vs, duration) - _interp(ts, vs, warmup)) * 8 / window
    win_ports = {p["name"]: p for p in sw.get("window", {}).get("ports", [])}
    tot_ports = {p["name"]: p for p in sw.get("total", {}).get("ports", [])}
    queues = []
    counters = []  # every queue's window counters by reason: the summary's totals
    for name, p in win_ports.items():
        tot = tot_ports.get(name, p)
        h = int(name.split("->h")[1])
        for q in p["queues"]:
            counters.append({k: q[k] for k in ("marks_by_reason", "drops_by_reason", "unmarkable_by_reason")})
            tq = tot["queues"][q["queue"]]
            app = sum(g for fid, g in fgood.items()
                      if flows[fid]["dst"] == h and classify(doc, flows[fid]["class"]) == q["queue"])
            app += tgood.get((h, q["queue"]), 0.0)
            if tq["enq_pkts"] == 0 and tq["drops"] == 0 and app == 0:
                continue
            queues.append({
                "port": name, "queue": q["queue"], "goodput_bps": app,
                "avg_qlen_bytes": q["avg_qlen_bytes"], "max_qlen_bytes": q["max_qlen_bytes"],
                "avg_sojourn_us": q["avg_sojourn_us"], "marks": q["marks"], "drops": q["drops"],
                "marks_by_reason": q["marks_by_reason"], "drops_by_reason": q["drops_by_reason"],
                "switch_goodput_bps": q["goodput_bps"],
            })
    # Flow records.
    flow_rows = []
    timeouts = sum(r.get("netstat", {}).get("TcpExtTCPTimeouts", 0) for r in results.values())
    for f in flows:
        rec = results.get(f["src"], {}).get("flows", {}).get(str(f["id"]), {})
        fct = rec.get("fct_us")
        flow_rows.append({
            "id": f["id"], "spec": f["spec"], "src": f["src"], "dst": f["dst"], "class": f["class"],
            "size": f["size"], "start_s": f["start_s"], "finish_s": rec.get("finish_s"), "fct_us": fct,
            "ideal_fct_us": None, "slowdown": None, "acked_bytes": rec.get("bytes_acked"),
            "timeouts": None, "retransmits": rec.get("total_retrans"),
        })
    started = 0
    late = []
    for m in messages:
        rec = results.get(m["src"], {}).get("messages", {}).get(str(m["id"]))
        if rec is None:
            continue  # arrives after the run ended: not a flow of this run (as ecnlab run)
        started += 1
        late.append(rec.get("late_us") or 0.0)
        fct = rec.get("fct_us")
        flow_rows.append({
            "id": m["id"], "spec": m["spec"], "src": m["src"], "dst": m["dst"], "class": m["class"],
            "size": m["size"], "start_s": m["start_s"], "finish_s": rec.get("finish_s"), "fct_us": fct,
            "ideal_fct_us": None, "slowdown": None, "acked_bytes": None, "timeouts": None, "retransmits": None,
        })
    _fill_ideal_fct(doc, flow_rows)
    probe_rows = []
    for p in probes:
        r = results.get(p["src"], {}).get("probes", {}).get(str(p["id"]), {"sent": 0, "samples": []})
        rtts = [rtt for (t, rtt) in r["samples"] if t >= warmup]
        probe_rows.append({"id": p["id"], "src": p["src"], "dst": p["dst"], "class": p["class"], "sent": r["sent"],
                           "rtt_us": rtts})
    # Time series from the switch's periodic counters.
    ts = _timeseries(em.work / "switch-timeseries.jsonl", t0)
    socket_drops = sw.get("socket_drops", 0)
    emulation = {
        "kernel": platform.release(),
        "switch": {
            "frames_forwarded": sw.get("frames_forwarded", 0), "frames_received": sw.get("frames_received", 0),
            "socket_drops": socket_drops, "frame_pool": sw.get("frame_pool"),
            # Frames the switch dropped before any queue (runts, malformed IPv4, bad
            # checksums, bridge-local, filtered, pool exhausted) and what it forwarded by
            # kind (IPv4 ECT / not-ECT / with options, ARP, IPv6, other EtherTypes).
            "ingress_drops_by_reason": sw.get("ingress_drops_by_reason", {}),
            "ingress_by_kind": sw.get("ingress_by_kind", {}), "fib_full": sw.get("fib_full", 0),
            "window_s": sw.get("window", {}).get("duration_s"),
            "ports": [{k: p[k] for k in ("name", "rate_bps", "shaper_rate_bps", "shaper_burst_bytes", "rx_frames",
                                         "tx_frames", "ce_set", "tx_errors", "socket_drops", "pool_exhausted")
                       if k in p}
                      for p in sw.get("total", {}).get("ports", [])],
        },
        "socket_drops": socket_drops,
        "scale": {"factor": factor, "mode": scale, "scenario_link_rate_bps": em.opts.get("orig_rate"),
                  "emulated_link_rate_bps": em.opts.get("target_rate"),
                  "shaper_rate_fraction": sw.get("shaper_rate_fraction")},
        "cc": {k: v for k, v in cc_map.items()},
        # What the hosts' TCP was set to from the scenario, and what the kernel does its way.
        "host_stack": {k: em.stack[k] for k in ("route", "sysctls", "fixed")},
        "flows": [{"id": f["id"], "src": f["src"], "dst": f["dst"], "class": f["class"],
                   "goodput_bps": fgood.get(f["id"]),
                   "retransmits": results.get(f["src"], {}).get("flows", {}).get(str(f["id"]), {}).get("total_retrans"),
                   "delivered_ce": results.get(f["src"], {}).get("flows", {}).get(str(f["id"]), {}).get("delivered_ce"),
                   "error": results.get(f["src"], {}).get("flows", {}).get(str(f["id"]), {}).get("error")}
                  for f in flows],
        "hosts": {str(h): r.get("netstat", {}) for h, r in sorted(results.items())},
        "receiver_ce_packets": sum(r.get("netstat", {}).get("IpExtInCEPkts", 0) for r in results.values()),
        "agent_errors": {str(h): r["errors"] for h, r in results.items() if r.get("errors")},
        "warnings": em.warnings,
    }
    if messages:
        late.sort()
        emulation["traffic"] = {
            "generated": len(messages), "started": started,
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
    from .. import _core

    measurements = {
        "scenario": doc["name"], "seed": seed, "sim_time_s": duration, "measure_from_s": warmup,
        "events": 0, "packet_hops": sw.get("frames_forwarded", 0),
        "flows": [{k: r[k] for k in ("class", "size", "start_s", "fct_us")} for r in flow_rows],
        "timeouts": timeouts, "counters": counters, "queues": queues,
        "probes": [{k: r[k] for k in ("id", "src", "dst", "class", "rtt_us")} for r in probe_rows],
    }
    summary = json.loads(_core.summary_from_measurements(json.dumps(_finite(measurements))))
    summary["emulation"] = emulation
    if scale == "dilate" and factor != 1:
        summary["emulation"]["unscaled"] = {
            "note": "times / factor and rates x factor: the original scenario's time base",
            "probe_rtt": {k: (v / factor if isinstance(v, float) and k != "count" else v)
                          for k, v in summary["probe_rtt"].items()},
            "queues": [{"port": q["port"], "queue": q["queue"], "goodput_bps": q["goodput_bps"] * factor}
                       for q in summary["queues"]],
        }
    return summary, flow_rows, probe_rows, ts


def _timeseries(path: Path, t0: float) -> dict[str, list]:
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


