"""``ecnlab emulate``: a scenario on real Linux TCP through the emulated switch.

The TCN paper evaluated its schemes on a server-emulated switch carrying real TCP (TCN §5,
§6.1). This module does the same on one machine:

- a network namespace per host and one for the switch (names ``ecnlab-<pid>x<start>-<n>-*``
  so that parallel runs never collide and a later run can tell a crashed run's leftovers
  from a live one's), veth pairs between them, addresses in 10.77.0.0/24 on those veths
  only, static ARP entries, offloads off on both ends (TSO/GSO/GRO and checksum: the
  switch must see real, MTU-sized frames with real checksums, TCN §6.1), IPv6 off;
- ``ecnlab-switch`` (crates/ecnlab-emu) in the switch namespace, with the scenario's
  ``[switch]`` and ``[marking]`` tables: the simulator's own port, marking and scheduling
  code, shaped per port at 99.5 % of the (scaled) line rate as the TCN prototype;
- link propagation delays inside the switch (a delay line per direction and port; netem
  is not built into every kernel, e.g. this VM's), and the host's link rate with tbf on
  the host's side;
- a small traffic agent per host (this module, ``--agent``): long-lived, rate-limited
  (kernel-paced) and sized TCP flows with DSCP set per socket (IP_TOS) and congestion
  control per socket (TCP_CONGESTION); ``[[traffic]]`` messages (the simulator's own flow
  arrivals, from ``ecnlab-workload``) over persistent connections, DSCP set per message,
  FCT per message; ICMP echo probes with the probe's DSCP, timed with the kernel's receive
  timestamp; application-layer byte counts sampled over time;
- DCTCP in the kernel: ecnlab's own BPF struct_ops congestion controls
  (crates/ecnlab-emu/bpf: ``ecnlab_dctcp``, RFC 8257; ``ecnlab_dctcp_dq``, the dual-AQM
  paper's), registered by ``ecnlab-cc-loader`` for the run and unregistered by the kernel
  when that process dies; a refusal stops the run unless ``--allow-fallback``;
- a reaper process that deletes the namespaces of a run killed with SIGKILL;
- ``summary.json`` with the same keys as ``ecnlab run``, plus ``emulation`` details.

Rates and scaling (``--rate``). This machine cannot carry 1 Gbit/s for many flows through
a userspace switch. ``--rate R`` runs the scenario with host links at R instead of the
scenario's ``topology.link_rate`` (factor s = link_rate / R), in one of two ways:

- ``--scale dilate`` (default): time dilation. Every rate is divided by s and every time
  (link delays, TCN's threshold, CoDel's target and interval, RTO_min, flow start times,
  the duration, probe intervals...) multiplied by s; sizes (buffers, queue-length
  thresholds, MSS) stay. Bandwidth-delay products, queue thresholds and windows are then
  the same *in packets* as in the original scenario, so TCP and the marking schemes see
  the same dynamics, s times slower. Measured times (probe RTTs, sojourn) are s times the
  original's; the summary gives both (``emulation.unscaled``).
- ``--scale rate``: only rates are divided by s; times stay. Then BDPs shrink by s, and so
  must queue-length thresholds: ``marking.*.k``, ``k_per_queue``, ``min_th``, ``max_th``
  and ``dq_thresh`` are divided by s, while time thresholds (TCN's T, CoDel's target) do
  not change (T = RTT x lambda does not depend on the rate; K = C x RTT x lambda does).
  Buffers are not scaled. With small s this keeps the base RTT; with large s the
  thresholds fall to a packet or two and the emulation says little.

Measured here: one TCP flow through the switch sustains about 300 Mbit/s on this 2-core
VM (the switch's thread also carries the kernel's veth delivery work); ``--rate auto``
picks 100 Mbit/s for faster scenarios.

Python API: :func:`emulate`. Command line: :func:`main` (``ecnlab emulate``).
"""

from __future__ import annotations

import argparse
import ctypes
import errno
import fcntl
import json
import math
import os
import platform
import re
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Iterable

ERROR_PREFIX = "ecnlab: error: "
NEEDS = "emulation needs root and network namespaces"

# Addresses and ports, private to the namespaces this module creates.
SUBNET = "10.77.0"
TCP_PORT = 5001
# Before each message on a connection: flow id, size (0 = long-lived), and 0 for a
# [[flows]] flow or 1 + its DSCP for a [[traffic]] message (whose bytes the receiver counts
# per class, not per flow: thousands of flows would bloat every sample).
HEADER = struct.Struct("!IQB")
SIOCOUTQNSD = 0x894B  # bytes in a TCP socket's send queue not yet sent (sockios.h)
SOCKET_BUFFER = 4 << 20

# Linux constants not in the socket module of every Python.
SO_TIMESTAMPNS = 35
SO_MAX_PACING_RATE = getattr(socket, "SO_MAX_PACING_RATE", 47)
TCP_CONGESTION = getattr(socket, "TCP_CONGESTION", 13)
TCP_INFO = getattr(socket, "TCP_INFO", 11)
CLONE_NEWNET = 0x40000000
PR_SET_PDEATHSIG = 1
SIOCETHTOOL = 0x8946
# ethtool legacy "set" commands (include/uapi/linux/ethtool.h).
ETHTOOL_SRXCSUM, ETHTOOL_STXCSUM, ETHTOOL_SSG = 0x15, 0x17, 0x19
ETHTOOL_STSO, ETHTOOL_SGSO, ETHTOOL_SGRO = 0x1F, 0x24, 0x2C


class EmulationError(RuntimeError):
    """Something the user can fix (environment, scenario outside what emulation supports).
    The message is one line."""


class _Terminated(BaseException):
    """SIGTERM/SIGHUP during a run: unwinds like KeyboardInterrupt so cleanup runs."""


# ----------------------------------------------------------------------------------------
# Units and scenario scaling
# ----------------------------------------------------------------------------------------

_NUM = r"\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*"
_TIME = re.compile(f"^{_NUM}(ns|us|µs|ms|s)\\s*$")
_RATE = re.compile(f"^{_NUM}(bps|Kbps|kbps|Mbps|Gbps|Tbps|bit|Kbit|kbit|Mbit|Gbit|Tbit)\\s*$")
_SIZE = re.compile(f"^{_NUM}(B|KB|kB|MB|GB|KiB|MiB|GiB)\\s*$")
_TIME_MULT = {"ns": 1, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9}
_RATE_MULT = {"bps": 1, "bit": 1, "Kbps": 1e3, "kbps": 1e3, "Kbit": 1e3, "kbit": 1e3, "Mbps": 1e6, "Mbit": 1e6,
              "Gbps": 1e9, "Gbit": 1e9, "Tbps": 1e12, "Tbit": 1e12}
_SIZE_MULT = {"B": 1, "KB": 1e3, "kB": 1e3, "MB": 1e6, "GB": 1e9, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3}


def _unit_of(v: Any) -> str | None:
    if isinstance(v, str):
        if _TIME.match(v):
            return "time"
        if _RATE.match(v):
            return "rate"
        if _SIZE.match(v):
            return "size"
    return None


def parse_time_ns(v: Any) -> int:
    """A scenario duration (``"256us"`` or a number of ns) in ns."""
    if isinstance(v, (int, float)):
        return int(round(v))
    m = _TIME.match(str(v))
    if not m:
        raise EmulationError(f"`{v}` is not a duration (use ns, us, ms or s)")
    return int(round(float(m.group(1)) * _TIME_MULT[m.group(2)]))


def parse_rate_bps(v: Any) -> int:
    """A rate (``"1Gbps"``, ``"100Mbit"`` or a number of bit/s) in bit/s."""
    if isinstance(v, (int, float)):
        return int(round(v))
    m = _RATE.match(str(v))
    if not m:
        raise EmulationError(f"`{v}` is not a rate (e.g. 100Mbps or 100Mbit)")
    return int(round(float(m.group(1)) * _RATE_MULT[m.group(2)]))


def parse_size_bytes(v: Any) -> int:
    if isinstance(v, (int, float)):
        return int(round(v))
    m = _SIZE.match(str(v))
    if not m:
        raise EmulationError(f"`{v}` is not a size (e.g. 96KB)")
    return int(round(float(m.group(1)) * _SIZE_MULT[m.group(2)]))


# Scenario-level fields whose bare numbers carry a unit (the Rust types: Duration, Rate,
# ByteSize). Keys under [marking], [switch], [transport], [metrics], [host] get their units
# from the core's defaults (``_core.defaults_json``), where every such value is a string
# with its unit.
_SCENARIO_UNITS = {
    "duration": "time",
    "topology.link_rate": "rate", "topology.link_delay": "time",
    "topology.host_link_rate.*": "rate", "topology.host_link_delay.*": "time",
    "flows.*.start": "time", "flows.*.stop": "time", "flows.*.rate": "rate", "flows.*.size": "size",
    "probes.*.interval": "time", "probes.*.start": "time", "probes.*.stop": "time", "probes.*.size": "size",
    "metrics.warmup": "time", "metrics.sample_interval": "time",
    "traffic.*.start": "time", "traffic.*.interval": "time",
}

# Queue-length thresholds, scaled with the rate in ``--scale rate`` mode.
_QLEN_KEYS = {"k", "k_per_queue", "min_th", "max_th", "dq_thresh"}


def _default_units() -> dict[str, str]:
    out: dict[str, str] = {}
    try:
        from . import _core

        defaults = json.loads(_core.defaults_json())
    except Exception:  # noqa: BLE001 - without the extension only strings with units scale
        return out

    def walk(prefix: str, v: Any) -> None:
        if isinstance(v, dict):
            for k, x in v.items():
                walk(f"{prefix}.{k}" if prefix else k, x)
        elif isinstance(v, list):
            for x in v:
                walk(f"{prefix}.*", x)
        else:
            u = _unit_of(v)
            if u:
                out[prefix] = u

    walk("", defaults)
    return out


def scale_scenario(doc: dict[str, Any], factor: float, mode: str = "dilate") -> dict[str, Any]:
    """The scenario run at 1/factor of its rates (see the module doc for the two modes).
    Values are written back in base units (ns, bps, B) so that no rounding to a display
    unit happens."""
    import copy

    if factor == 1.0:
        return copy.deepcopy(doc)
    if mode not in ("dilate", "rate"):
        raise EmulationError(f"--scale {mode}: use dilate or rate")
    units = dict(_default_units())
    units.update(_SCENARIO_UNITS)

    def scaled(path: str, key: str, v: Any) -> Any:
        if isinstance(v, bool):
            return v
        unit = _unit_of(v)
        if unit is None and isinstance(v, (int, float)):
            unit = units.get(path)
        if unit == "rate":
            return f"{max(1, round(parse_rate_bps(v) / factor))}bps"
        if unit == "time" and mode == "dilate":
            return f"{round(parse_time_ns(v) * factor)}ns"
        if unit == "size" and mode == "rate" and path.startswith("marking.") and key in _QLEN_KEYS:
            return f"{max(1, round(parse_size_bytes(v) / factor))}B"
        return v

    def walk(prefix: str, key: str, v: Any) -> Any:
        if prefix in ("name", "description", "claim", "seed"):
            return v
        if isinstance(v, dict):
            return {k: walk(f"{prefix}.{k}" if prefix else k, k, x) for k, x in v.items()}
        if isinstance(v, list):
            return [walk(f"{prefix}.*", key, x) for x in v]
        return scaled(prefix, key, v)

    return walk("", "", doc)


# ----------------------------------------------------------------------------------------
# The environment: root, namespaces, the switch binary
# ----------------------------------------------------------------------------------------

def _run(cmd: list[str], *, input: str | None = None, check: bool = True, timeout: float = 30) -> subprocess.CompletedProcess:
    p = subprocess.run(cmd, input=input, capture_output=True, text=True, timeout=timeout)
    if check and p.returncode != 0:
        msg = (p.stderr or p.stdout).strip().splitlines()
        raise EmulationError(f"`{' '.join(cmd[:6])}{' ...' if len(cmd) > 6 else ''}` failed: {msg[0] if msg else p.returncode}")
    return p


def check_environment() -> None:
    """Raise EmulationError (the one-line message of the contract) unless this process can
    create network namespaces."""
    if os.name != "posix" or platform.system() != "Linux":
        raise EmulationError(f"{NEEDS} (this is not Linux)")
    if os.geteuid() != 0:
        raise EmulationError(f"{NEEDS} (not running as root)")
    for tool in ("ip", "tc"):
        if shutil.which(tool) is None:
            raise EmulationError(f"{NEEDS} (`{tool}` not found: install iproute2)")
    p = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
    if p.returncode != 0:
        raise EmulationError(f"{NEEDS} (`ip netns` failed: {p.stderr.strip()})")


def _repo_root() -> Path | None:
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "Cargo.toml").exists() and (parent / "crates" / "ecnlab-emu").exists():
            return parent
    return None


def switch_binary(build: bool = True) -> Path:
    """Path of ``ecnlab-switch``: $ECNLAB_SWITCH, then the workspace's release build
    (built with cargo if missing and ``build``), then $PATH."""
    env = os.environ.get("ECNLAB_SWITCH")
    if env:
        if not os.access(env, os.X_OK):
            raise EmulationError(f"ECNLAB_SWITCH={env}: not an executable")
        return Path(env)
    root = _repo_root()
    if root is not None:
        target = Path(os.environ.get("CARGO_TARGET_DIR", root / "target"))
        if not target.is_absolute():
            target = root / target
        exe = target / "release" / "ecnlab-switch"
        if exe.exists() and not _stale(exe, root):
            return exe
        if build and shutil.which("cargo"):
            sys.stderr.write("ecnlab: building the emulated switch (cargo build --release -p ecnlab-emu)...\n")
            p = subprocess.run(["cargo", "build", "--release", "-q", "-p", "ecnlab-emu"], cwd=root,
                               capture_output=True, text=True)
            if p.returncode != 0:
                last = (p.stderr.strip().splitlines() or ["?"])[-1]
                raise EmulationError(f"cannot build ecnlab-switch: {last}")
            if exe.exists():
                return exe
    found = shutil.which("ecnlab-switch")
    if found:
        return Path(found)
    raise EmulationError("ecnlab-switch not found: run `cargo build --release -p ecnlab-emu` or set ECNLAB_SWITCH")


def _stale(exe: Path, root: Path) -> bool:
    """Whether a source file of the switch (or of the core it links) is newer than it."""
    t = exe.stat().st_mtime
    for d in ("crates/ecnlab-emu", "crates/ecnlab-core"):
        for f in (root / d).rglob("*"):
            if f.suffix in (".rs", ".toml") and f.stat().st_mtime > t:
                return True
    return False


def _proc_start_ticks(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # Field 22 (starttime), counted after the parenthesised command name.
    return int(stat[stat.rindex(")") + 2:].split()[19])


_PREFIX_RE = re.compile(r"^ecnlab-(\d+)x(\d+)-(\d+)-")
_run_counter = 0


def _new_prefix() -> str:
    global _run_counter
    _run_counter += 1
    pid = os.getpid()
    return f"ecnlab-{pid}x{_proc_start_ticks(pid)}-{_run_counter}"


def _namespaces() -> list[str]:
    p = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
    return [line.split()[0] for line in p.stdout.splitlines() if line.strip()]


def _kill_netns_processes(ns: str) -> None:
    p = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True)
    for tok in p.stdout.split():
        try:
            os.kill(int(tok), signal.SIGKILL)
        except (ValueError, ProcessLookupError, PermissionError):
            pass


def _delete_namespaces(names: Iterable[str]) -> list[str]:
    """Kill what runs in them, delete them; returns those that could not be deleted."""
    failed = []
    for ns in names:
        _kill_netns_processes(ns)
    for ns in names:
        ok = False
        for _ in range(20):
            p = subprocess.run(["ip", "netns", "del", ns], capture_output=True, text=True)
            if p.returncode == 0 or ns not in _namespaces():
                ok = True
                break
            _kill_netns_processes(ns)
            time.sleep(0.05)
        if not ok:
            failed.append(ns)
    return failed


def cleanup_stale() -> list[str]:
    """Delete the namespaces (and their processes) of runs whose owner process is gone:
    a run killed with SIGKILL, a crashed interpreter. A namespace belongs to a live run if
    its owner pid exists *and* started at the recorded time (pids are reused)."""
    stale = []
    for ns in _namespaces():
        m = _PREFIX_RE.match(ns)
        if not m:
            continue
        pid, start = int(m.group(1)), int(m.group(2))
        if _proc_start_ticks(pid) != start:
            stale.append(ns)
    if stale:
        _delete_namespaces(stale)
    return stale


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def _in_netns(ns: str, fn, *args) -> None:
    """Run ``fn(*args)`` in network namespace ``ns``, in a forked child (so this process
    never changes namespace). Raises EmulationError with the child's message on failure."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        os.close(r)
        code = 0
        try:
            fd = os.open(f"/run/netns/{ns}", os.O_RDONLY)
            if _libc().setns(fd, CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), f"setns {ns}")
            fn(*args)
        except BaseException as e:  # noqa: BLE001 - report anything to the parent
            os.write(w, f"{type(e).__name__}: {e}".encode()[:4000])
            code = 1
        os._exit(code)
    os.close(w)
    msg = b""
    while chunk := os.read(r, 4096):
        msg += chunk
    os.close(r)
    _, status = os.waitpid(pid, 0)
    if status != 0:
        raise EmulationError(f"in namespace {ns}: {msg.decode(errors='replace') or status}")


def _write_sysctls(values: dict[str, str]) -> None:
    """In the current netns: write /proc/sys entries (per-namespace ones). Missing entries
    of optional features are skipped."""
    for key, val in values.items():
        path = "/proc/sys/" + key.replace(".", "/")
        try:
            with open(path, "w") as f:
                f.write(val)
        except FileNotFoundError:
            if not key.endswith(("tcp_reflect_tos", "disable_ipv6")):
                raise


def _offloads_off(ifnames: list[str]) -> None:
    """ethtool -K IF gro off gso off tso off tx off sg off, with the SIOCETHTOOL ioctl
    (no dependency on the ethtool program). Checksum offload must be off: a veth frame
    otherwise leaves with a partial TCP checksum the switch would forward as is."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        for name in ifnames:
            for cmd in (ETHTOOL_SGRO, ETHTOOL_SGSO, ETHTOOL_STSO, ETHTOOL_STXCSUM, ETHTOOL_SSG):
                val = ctypes.create_string_buffer(struct.pack("II", cmd, 0), 8)
                ifr = struct.pack("16sP", name.encode(), ctypes.addressof(val)).ljust(40, b"\0")
                try:
                    fcntl.ioctl(s.fileno(), SIOCETHTOOL, ifr)
                except OSError as e:
                    if e.errno not in (errno.EOPNOTSUPP, errno.EINVAL):
                        raise OSError(e.errno, f"{name}: ethtool cmd {cmd:#x}: {e.strerror}") from None
    finally:
        s.close()


def _pdeathsig() -> None:
    """In a child before exec: die with SIGTERM when the parent dies (a SIGKILLed run
    leaves no switch or agent running; the next run deletes the namespaces)."""
    _libc().prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def _child_setup() -> None:
    """Before exec of an agent: die with the parent, and run ahead of ordinary processes
    (nice -10): on a shared machine a sender that waits for a CPU is not backlogged, and
    the scheduler shares would measure the machine's load instead of the switch."""
    _pdeathsig()
    try:
        os.setpriority(os.PRIO_PROCESS, 0, -10)
    except OSError:
        pass


def available_congestion_controls() -> list[str]:
    try:
        return Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()
    except OSError:
        return []


# ----------------------------------------------------------------------------------------
# ecnlab's congestion controls in the kernel: BPF struct_ops (crates/ecnlab-emu/bpf/)
# ----------------------------------------------------------------------------------------

# Scenario `cc` -> the algorithm ecnlab registers for it (name in the kernel, BPF object
# built from crates/ecnlab-emu/bpf/ by build.sh). Registered by ecnlab-cc-loader for the
# run only: the kernel unregisters them when that process exits, however it exits.
BPF_CC = {
    "dctcp": ("ecnlab_dctcp", "ecnlab_dctcp.bpf.o"),
    "dctcp_dualq": ("ecnlab_dctcp_dq", "ecnlab_dctcp_dualq.bpf.o"),
    "dctcp_modified": ("ecnlab_dctcp_dq", "ecnlab_dctcp_dualq.bpf.o"),
}
BPF_TOOLS = "apt-get install clang libbpf-dev bpftool"


def bpf_dir(build: bool = True) -> Path:
    """Where the BPF objects and ``ecnlab-cc-loader`` are: $ECNLAB_BPF_DIR, else the
    workspace's ``target/bpf``, (re)built with ``crates/ecnlab-emu/bpf/build.sh`` when a
    source is newer. Raises EmulationError naming what is missing (clang, bpftool,
    libbpf-dev, the kernel's BTF)."""
    env = os.environ.get("ECNLAB_BPF_DIR")
    if env:
        return Path(env)
    root = _repo_root()
    if root is None:
        raise EmulationError("ecnlab's BPF congestion controls are built from the source tree "
                             "(crates/ecnlab-emu/bpf); set ECNLAB_BPF_DIR to a built copy")
    src = root / "crates" / "ecnlab-emu" / "bpf"
    out = root / "target" / "bpf"
    built = [out / "ecnlab-cc-loader", *(out / o for _, o in BPF_CC.values())]
    newest = max(f.stat().st_mtime for f in src.iterdir())
    if all(f.exists() and f.stat().st_mtime >= newest for f in built) or not build:
        return out
    p = subprocess.run(["sh", str(src / "build.sh"), str(out)], capture_output=True, text=True)
    if p.returncode != 0:
        lines = (p.stderr or p.stdout).strip().splitlines()
        if p.returncode == 3:
            raise EmulationError(lines[-1] if lines else f"cannot build the BPF congestion controls ({BPF_TOOLS})")
        raise EmulationError(f"cannot build the BPF congestion controls: {lines[-1] if lines else p.returncode}")
    return out


def bpf_params(name: str, doc: dict[str, Any]) -> dict[str, int]:
    """The parameters of the BPF algorithm for scenario cc ``name``, from the scenario's
    ``[transport]`` (its defaults are the core's): what the loader sets in the object's
    .rodata before loading. Raises EmulationError for a value it cannot carry out."""
    tr = dict(_core_defaults().get("transport", {}))
    tr.update(doc.get("transport", {}))

    def shift(key: str, most: int) -> int:
        g = float(tr[key])
        k = round(-math.log2(g)) if g > 0 else -1
        if not 0 <= k <= most or abs(g - 2.0 ** -k) > 1e-12:
            raise EmulationError(f"transport.{key} = {g:g}: the kernel's {BPF_CC[name][0]} takes g = 1/2^k "
                                 f"(k = 0..{most})")
        return k

    if BPF_CC[name][0] == "ecnlab_dctcp":
        return {"shift_g": shift("dctcp_g", 10), "alpha_init": round(float(tr["dctcp_alpha_init"]) * 1024)}
    for key, want in (("dualq_alpha_bits", 20), ("dualq_per_ack_alpha", True)):
        if tr[key] != want:
            raise EmulationError(f"transport.{key} = {tr[key]}: the kernel's ecnlab_dctcp_dq has {want} only")
    return {"shift_g": shift("dualq_g", 20), "alpha_init": round(float(tr["dctcp_alpha_init"]) * (1 << 20)),
            "progressive": int(bool(tr["dualq_progressive"])), "grow_in_cwr": int(bool(tr["dualq_grow_in_cwr"]))}


def _core_defaults() -> dict[str, Any]:
    from . import _core

    return json.loads(_core.defaults_json())


def _kernel_refusal(line: str) -> str:
    """The loader's one-line reason, without its prefix."""
    return line.strip().removeprefix("error: ") or "no answer"


# ----------------------------------------------------------------------------------------
# The traffic agent (runs inside a host namespace)
# ----------------------------------------------------------------------------------------

def _sleep_until(t: float) -> None:
    while True:
        d = t - time.time()
        if d <= 0:
            return
        time.sleep(min(d, 0.05))


def _netstat() -> dict[str, int]:
    """TcpExt and IpExt counters of this namespace (/proc/net/netstat is per netns)."""
    out: dict[str, int] = {}
    try:
        lines = Path("/proc/net/netstat").read_text().splitlines()
    except OSError:
        return out
    for head, vals in zip(lines[0::2], lines[1::2]):
        names = head.split()
        nums = vals.split()
        for n, v in zip(names[1:], nums[1:]):
            out[names[0].rstrip(":") + n] = int(v)
    return out


def _tcp_info(sock: socket.socket) -> dict[str, int]:
    """A few fields of struct tcp_info (include/uapi/linux/tcp.h)."""
    try:
        b = sock.getsockopt(socket.IPPROTO_TCP, TCP_INFO, 256)
    except OSError:
        return {}
    info = {}
    if len(b) >= 104:
        info["total_retrans"] = struct.unpack_from("I", b, 100)[0]
        info["snd_cwnd"] = struct.unpack_from("I", b, 80)[0]
        info["rtt_us"] = struct.unpack_from("I", b, 68)[0]
    if len(b) >= 128:
        info["bytes_acked"] = struct.unpack_from("Q", b, 120)[0]
    if len(b) >= 200:
        info["delivered_ce"] = struct.unpack_from("I", b, 196)[0]
    return info


class _Agent:
    """Everything one host does: receive flows, send flows, send probes."""

    def __init__(self, spec: dict[str, Any]):
        self.spec = spec
        self.t0 = 0.0
        self.lock = threading.Lock()
        self.rx_bytes: dict[int, int] = {}
        self.rx_done: dict[int, float] = {}
        self.samples_t: list[float] = []
        self.samples: list[dict[int, int]] = []
        self.flows_out: dict[int, dict[str, Any]] = {}
        self.probes: dict[int, dict[str, Any]] = {}
        self.errors: list[str] = []
        self.listener: socket.socket | None = None
        self.probe_socks: dict[int, socket.socket] = {}
        self.msgs_out: dict[int, dict[str, Any]] = {}
        self.connections = 0
        self.zeros = memoryview(bytearray(1 << 20))

    # -- set-up before t0 --
    def prepare(self) -> None:
        sp = self.spec
        if sp.get("listen"):
            ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            # Large fixed buffers on both ends: an agent that waits a few ms for a CPU must
            # neither close the receive window nor let the send queue run dry, or the flow
            # is application-limited and the scheduler shares measure the machine's load.
            ls.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, SOCKET_BUFFER)
            if sp.get("listen_cc"):
                ls.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, sp["listen_cc"].encode())
            if sp.get("ack_tos") is not None:
                ls.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, sp["ack_tos"])
            ls.bind((sp["ip"], TCP_PORT))
            ls.listen(256)
            self.listener = ls
        for p in sp.get("probes", []):
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP)
            s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, p["class"] << 2)
            s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
            s.settimeout(0.2)
            self.probe_socks[p["id"]] = s
            self.probes[p["id"]] = {"sent": 0, "samples": []}

    # -- threads --
    def _accept_loop(self) -> None:
        assert self.listener is not None
        self.listener.settimeout(0.2)
        while time.time() < self.t_end:
            try:
                conn, _ = self.listener.accept()
            except socket.timeout:
                continue
            except OSError as e:
                self.errors.append(f"accept: {e}")
                return
            threading.Thread(target=self._receive, args=(conn,), daemon=True).start()

    def _receive(self, conn: socket.socket) -> None:
        """One connection: messages one after another (persistent connections), each a
        header and its bytes; a sized one is answered with one byte when complete, the
        sender's FCT ends when that byte arrives (at the time of the ACK of its last
        byte, as the simulator measures). A long-lived one runs to EOF."""
        cc_set = False
        buf = bytearray(1 << 18)
        try:
            while True:
                hdr = b""
                while len(hdr) < HEADER.size:
                    chunk = conn.recv(HEADER.size - len(hdr))
                    if not chunk:
                        return
                    hdr += chunk
                fid, size, tclass = HEADER.unpack(hdr)
                key = f"t{tclass - 1}" if tclass else fid
                cc = self.spec.get("rx_cc", {}).get(str(fid)) if not tclass else self.spec.get("traffic_rx_cc")
                if cc and not cc_set:
                    try:
                        conn.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, cc.encode())
                    except OSError:
                        pass
                    cc_set = True
                with self.lock:
                    self.rx_bytes.setdefault(key, 0)
                total = 0
                while size == 0 or total < size:
                    want = len(buf) if size == 0 else min(len(buf), size - total)
                    n = conn.recv_into(buf, want)
                    if n == 0:
                        return
                    total += n
                    with self.lock:
                        self.rx_bytes[key] += n
                if not tclass:
                    self.rx_done[fid] = time.time()
                conn.sendall(b"\x01")  # the sender's FCT ends when this arrives
        except OSError as e:
            if time.time() < self.t_end:
                self.errors.append(f"receive: {e}")
        finally:
            conn.close()

    def _sampler(self) -> None:
        dt = self.spec["sample_interval_s"]
        k = 0
        while True:
            t = self.t0 + k * dt
            if t > self.t_end + 1e-9:
                # Stopped early (every message done): one last sample at the end.
                with self.lock:
                    snap = dict(self.rx_bytes)
                self.samples_t.append(time.time() - self.t0)
                self.samples.append(snap)
                break
            _sleep_until(min(t, self.t_end))
            if time.time() < t - 1e-3:
                continue
            with self.lock:
                snap = dict(self.rx_bytes)
            self.samples_t.append(time.time() - self.t0)
            self.samples.append(snap)
            k += 1

    def _send(self, f: dict[str, Any]) -> None:
        rec: dict[str, Any] = {"start_s": f["start_s"], "finish_s": None, "fct_us": None, "error": None}
        self.flows_out[f["id"]] = rec
        start = self.t0 + f["start_s"]
        stop = self.t0 + min(f["stop_s"] if f.get("stop_s") is not None else 1e18, self.spec["duration_s"])
        _sleep_until(start)
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, f["class"] << 2)
            s.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, f["cc"].encode())
            s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SOCKET_BUFFER)
            if f.get("mss"):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, f["mss"])
            if f.get("rate_bps"):
                # The kernel paces the flow (TCP internal pacing, enabled by this option):
                # an agent that waited for a CPU then catches up at 1.1 x its rate, not in a
                # line-rate burst. Such bursts in a strict-priority queue starve the queues
                # below it for milliseconds, and a sojourn-time scheme (TCN) marks their
                # flows down to 2 packets, which the simulator's perfectly smooth
                # application never does.
                pace = int(f["rate_bps"] / 8 * 1.1)
                try:
                    s.setsockopt(socket.SOL_SOCKET, SO_MAX_PACING_RATE, min(pace, 2**32 - 2))
                except OSError:
                    pass
            s.settimeout(5.0)
            t_conn = time.time()
            s.connect((f["dst_ip"], TCP_PORT))
            rec["connect_us"] = (time.time() - t_conn) * 1e6
            s.sendall(HEADER.pack(f["id"], f.get("size") or 0, 0))
            s.settimeout(0.05)
            chunk = memoryview(bytearray(1 << 16))
            sent = 0
            size = f.get("size")
            rate = f.get("rate_bps")
            t_start = time.time()
            while True:
                now = time.time()
                if now >= stop or (size is not None and sent >= size):
                    break
                want = len(chunk)
                if size is not None:
                    want = min(want, size - sent)
                if rate:
                    allowed = int(rate * (now - t_start) / 8) - sent
                    if allowed <= 0:
                        time.sleep(min(0.001, max(0.0, stop - now)))
                        continue
                    want = min(want, allowed)
                try:
                    sent += s.send(chunk[:want])
                except socket.timeout:
                    continue
            rec["sent_bytes"] = sent
            if size is not None and sent >= size:
                s.settimeout(max(0.1, stop - time.time() + 1.0))
                try:
                    if s.recv(1):
                        rec["finish_s"] = time.time() - self.t0
                        rec["fct_us"] = (time.time() - t_start) * 1e6
                except socket.timeout:
                    pass
            rec.update(_tcp_info(s))
        except OSError as e:
            rec["error"] = str(e)
            self.errors.append(f"flow {f['id']}: {e}")
        finally:
            try:
                s.close()
            except OSError:
                pass

    # -- [[traffic]]: messages over persistent connections --
    def _traffic(self) -> None:
        """Start each message at its arrival time on an idle connection to its receiver
        (persistent connections, as the simulator and the TCN testbed's TrafficGenerator),
        or on a new one; each connection is a worker thread. Prints ``done`` once every
        message has completed, so that the run can end then (``stop_when_done``)."""
        import queue

        msgs = self.spec["messages"]
        persistent = self.spec.get("persistent", True)
        idle: dict[int, list] = {}
        outstanding = [0]
        cv = threading.Condition()

        def worker(q: "queue.Queue") -> None:
            s = None
            while True:
                m = q.get()
                if m is None:
                    break
                rec = self.msgs_out[m["id"]]
                try:
                    if s is None:
                        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                        s.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, m["cc"].encode())
                        s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SOCKET_BUFFER)
                        if self.spec.get("mss"):
                            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, self.spec["mss"])
                        s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, self._msg_tos(m, 0))
                        s.settimeout(max(1.0, self.t_end - time.time() + 1.0))
                        s.connect((m["dst_ip"], TCP_PORT))
                    self._send_message(s, m)
                    if s.recv(1):
                        t = time.time()
                        rec["finish_s"] = t - self.t0
                        rec["fct_us"] = (t - self.t0 - m["start_s"]) * 1e6
                    else:
                        raise OSError("connection closed by the receiver")
                except OSError as e:
                    if time.time() < self.t_end:
                        rec["error"] = str(e)
                        self.errors.append(f"message {m['id']}: {e}")
                    if s is not None:
                        s.close()
                    s = None
                if not persistent and s is not None:
                    s.close()
                    s = None
                with cv:
                    outstanding[0] -= 1
                    idle.setdefault(m["dst"], []).append(q)
                    cv.notify_all()
            if s is not None:
                s.close()

        for m in msgs:
            start = self.t0 + m["start_s"]
            if start >= self.t_end:
                break
            _sleep_until(start)
            if time.time() >= self.t_end:
                break
            self.msgs_out[m["id"]] = {"start_s": m["start_s"], "finish_s": None, "fct_us": None, "error": None,
                                      "late_us": (time.time() - start) * 1e6}
            with cv:
                outstanding[0] += 1
                pool = idle.get(m["dst"])
                q = pool.pop() if pool else None
            if q is None:
                q = queue.Queue()
                threading.Thread(target=worker, args=(q,), daemon=True).start()
                self.connections += 1
            q.put(m)
        with cv:
            while outstanding[0] > 0 and time.time() < self.t_end:
                cv.wait(timeout=0.05)
        if outstanding[0] == 0 and len(self.msgs_out) == len(msgs):
            print(f"done {time.time()!r}", flush=True)

    def _msg_tos(self, m: dict[str, Any], offset: int) -> int:
        """TOS for the bytes of message m from ``offset`` on: PIAS levels by offset (bytes
        up to thresholds[i] carry DSCP i, as the simulator's sender), then the flow's class."""
        for level, t in enumerate(self.spec.get("pias") or []):
            if offset <= t:
                return level << 2
        return m["class"] << 2

    def _send_message(self, s: socket.socket, m: dict[str, Any]) -> None:
        """Header and ``size`` bytes; DSCP set per message with IP_TOS (the TCN testbed's
        generator does the same per flow). With PIAS, each level's bytes are written with
        its DSCP, and the next level starts only once they have all left the send queue
        (SIOCOUTQNSD = 0): the kernel stamps the TOS when it transmits a segment, not when
        the application writes it."""
        size = m["size"]
        pias = self.spec.get("pias") or []
        bounds = [t for t in pias if t < size] + [size]
        s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, self._msg_tos(m, 0))
        s.sendall(HEADER.pack(m["id"], size, m["class"] + 1))
        sent = 0
        for i, b in enumerate(bounds):
            if i > 0:
                while time.time() < self.t_end:
                    try:
                        left = struct.unpack("i", fcntl.ioctl(s.fileno(), SIOCOUTQNSD, b"\0\0\0\0"))[0]
                    except OSError:
                        break
                    if left <= 0:
                        break
                    time.sleep(0.0002)
                s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, self._msg_tos(m, sent + 1))
            while sent < b:
                n = min(len(self.zeros), b - sent)
                s.sendall(self.zeros[:n])
                sent += n

    def _probe(self, p: dict[str, Any]) -> None:
        s = self.probe_socks[p["id"]]
        rec = self.probes[p["id"]]
        start = self.t0 + p["start_s"]
        stop = self.t0 + min(p["stop_s"] if p.get("stop_s") is not None else 1e18, self.spec["duration_s"])
        pending: dict[int, int] = {}

        def receiver() -> None:
            while time.time() < min(stop, self.t_end) + 0.5:
                try:
                    data, anc, _flags, _addr = s.recvmsg(2048, 256)
                except socket.timeout:
                    continue
                except OSError:
                    return
                if len(data) < 8 + 12 or data[0] != 0:  # ICMP echo reply
                    continue
                seq = struct.unpack_from("!H", data, 6)[0]
                _, sent_ns = struct.unpack_from("!IQ", data, 8)
                rx_ns = None
                for level, typ, val in anc:
                    if level == socket.SOL_SOCKET and typ == SO_TIMESTAMPNS and len(val) >= 16:
                        sec, nsec = struct.unpack_from("qq", val)
                        rx_ns = sec * 1_000_000_000 + nsec
                if rx_ns is None:
                    rx_ns = time.time_ns()
                if pending.pop(seq, None) is not None:
                    rec["samples"].append(((sent_ns / 1e9) - self.t0, (rx_ns - sent_ns) / 1e3))

        th = threading.Thread(target=receiver, daemon=True)
        th.start()
        interval = p["interval_s"]
        pad = b"\0" * max(0, p["size"] - 20 - 8 - 12)
        k = 0
        seq = 0
        while True:
            t = start + k * interval
            if t >= min(stop, self.t_end):
                break
            _sleep_until(t)
            seq = (seq + 1) & 0xFFFF
            sent_ns = time.time_ns()
            pending[seq] = sent_ns
            msg = struct.pack("!BBHHH", 8, 0, 0, 0, seq) + struct.pack("!IQ", p["id"], sent_ns) + pad
            try:
                s.sendto(msg, (p["dst_ip"], 0))
                rec["sent"] += 1
            except OSError as e:
                self.errors.append(f"probe {p['id']}: {e}")
            k += 1
        th.join(timeout=1.0)

    def run(self, t0: float) -> dict[str, Any]:
        self.t0 = t0
        self.t_end = t0 + self.spec["duration_s"]
        net0 = _netstat()
        threads = [threading.Thread(target=self._sampler, daemon=True)] if self.spec.get("role") != "probes" else []
        if self.listener is not None:
            threads.append(threading.Thread(target=self._accept_loop, daemon=True))
        for f in self.spec.get("flows", []):
            threads.append(threading.Thread(target=self._send, args=(f,), daemon=True))
        for p in self.spec.get("probes", []):
            threads.append(threading.Thread(target=self._probe, args=(p,), daemon=True))
        if self.spec.get("messages"):
            threads.append(threading.Thread(target=self._traffic, daemon=True))
        for t in threads:
            t.start()
        # `stop` on stdin ends the run early (every message of every host is done).
        def stdin_reader() -> None:
            for line in sys.stdin:
                if line.strip() == "stop":
                    self.t_end = min(self.t_end, time.time())
                    return
        threading.Thread(target=stdin_reader, daemon=True).start()
        while any(t.is_alive() for t in threads) and time.time() < self.t_end + 3.0:
            time.sleep(0.02)
        net1 = _netstat()
        keys = ("TcpExtTCPTimeouts", "TcpExtTCPLossProbes", "TcpExtTCPSackRecovery", "TcpExtTCPRenoRecovery",
                "IpExtInCEPkts", "IpExtInECT0Pkts", "IpExtInECT1Pkts", "IpExtInNoECTPkts", "TcpExtTCPECNRehash")
        return {
            "host": self.spec["host"],
            "samples_t": self.samples_t,
            "samples": [{str(k): v for k, v in s.items()} for s in self.samples],
            "rx_done": {str(k): v - self.t0 for k, v in self.rx_done.items()},
            "flows": {str(k): v for k, v in self.flows_out.items()},
            "messages": {str(k): v for k, v in self.msgs_out.items()},
            "connections": self.connections,
            "end_s": time.time() - self.t0,
            "probes": {str(k): v for k, v in self.probes.items()},
            "netstat": {k: net1.get(k, 0) - net0.get(k, 0) for k in keys if k in net1},
            "errors": self.errors[:20],
        }


def _reaper_main(prefix: str) -> int:
    """``python -m ecnlab.emulate --reaper PREFIX`` (see ``_Emulation.start_reaper``):
    wait for EOF on stdin; unless the run said ``clean`` first, delete the namespaces
    ``PREFIX-*`` and kill what runs in them."""
    for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_IGN)
    said = sys.stdin.buffer.read()
    if said.strip() == b"clean":
        return 0
    _delete_namespaces([ns for ns in _namespaces() if ns.startswith(prefix + "-")])
    return 0


def _agent_main(spec_path: str) -> int:
    """``python -m ecnlab.emulate --agent SPEC``: prepare, print ``ready``, read t0 from
    stdin, run, write the results file."""
    signal.signal(signal.SIGTERM, lambda *_: os._exit(143))
    spec = json.loads(Path(spec_path).read_text())
    agent = _Agent(spec)
    try:
        agent.prepare()
    except OSError as e:
        print(f"error: {e}", flush=True)
        return 2
    print("ready", flush=True)
    line = sys.stdin.readline()
    if not line.strip():
        return 1
    res = agent.run(float(line))
    tmp = spec["results"] + ".tmp"
    Path(tmp).write_text(json.dumps(res))
    os.replace(tmp, spec["results"])
    return 0


# ----------------------------------------------------------------------------------------
# The orchestrator
# ----------------------------------------------------------------------------------------

def _mac(i: int) -> str:
    return f"02:ec:77:00:{(i >> 8) & 0xFF:02x}:{i & 0xFF:02x}"


def _ip(i: int) -> str:
    return f"{SUBNET}.{i + 1}"


def _percentile(sorted_v: list[float], q: float) -> float:
    """Nearest rank, ``sorted[floor(q n)]``, as ecnlab run (metrics.rs)."""
    return sorted_v[min(int(q * len(sorted_v)), len(sorted_v) - 1)]


def _stats(values: list[float]) -> dict[str, Any]:
    if not values:
        return {"count": 0, "avg_us": None, "p50_us": None, "p99_us": None}
    v = sorted(values)
    return {"count": len(v), "avg_us": sum(v) / len(v), "p50_us": _percentile(v, 0.5), "p99_us": _percentile(v, 0.99)}


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


def _classify(doc: dict[str, Any], dscp: int) -> int:
    sw = doc.get("switch", {})
    n = int(sw.get("queues", 1))
    m = sw.get("dscp_to_queue", []) or []
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
            cwd=str(Path(__file__).resolve().parents[1]))

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
        tr = self.doc.get("transport", {})
        rto_min_ms = max(1, math.ceil(parse_time_ns(tr.get("rto_min", "5ms")) / 1e6))
        init_cwnd = int(tr.get("init_cwnd", 10))
        ack_dscp = self.doc.get("host", {}).get("ack_dscp")
        for i, ns in enumerate(self.host_ns):
            ecn = cc_ecn.get(i, {"sysctl": "2", "routes": set()})
            _in_netns(ns, _write_sysctls, {
                **off6,
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
                f"route add {SUBNET}.0/24 dev h{i} src {_ip(i)} rto_min {rto_min_ms}ms initcwnd {init_cwnd} quickack 1",
            ]
            ecn = cc_ecn.get(i, {"routes": set()})
            for j in sorted(ecn["routes"]):
                b.append(f"route add {_ip(j)}/32 dev h{i} src {_ip(i)} rto_min {rto_min_ms}ms initcwnd {init_cwnd} "
                         f"quickack 1 features ecn")
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
            nic = parse_size_bytes(self.doc.get("host", {}).get("nic_buffer", "4MB"))
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
        sw = dict(self.doc.get("switch", {}))
        rate = min(link_rates)
        burst = self.opts.get("burst")
        burst_b = parse_size_bytes(burst) if burst not in (None, "auto") else max(2500, rate * 100e-6 / 8)
        cfg = {
            "ports": [{"ifname": f"s{i}", "name": f"s0->h{i}", "rate": f"{link_rates[i]}bps",
                       "delay": f"{link_delays[i] if self.opts.get('link_delay', True) else 0}ns"}
                      for i in range(self.n)],
            "switch": sw,
            "marking": self.doc.get("marking", {}),
            "shaper": {"rate_fraction": self.opts.get("shaper_fraction", 0.995), "burst": f"{int(burst_b)}B"},
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


def _expand_flows(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """One record per flow, ids in the order of ``[[flows]]`` and ``count`` (as ecnlab run)."""
    flows = []
    for si, f in enumerate(doc.get("flows", [])):
        for _ in range(int(f.get("count", 1))):
            flows.append({
                "id": len(flows), "spec": si, "src": int(f["src"]), "dst": int(f["dst"]),
                "class": int(f.get("class", 0)),
                "start_s": parse_time_ns(f.get("start", 0)) / 1e9,
                "stop_s": parse_time_ns(f["stop"]) / 1e9 if f.get("stop") is not None else None,
                "size": parse_size_bytes(f["size"]) if f.get("size") is not None else None,
                "rate_bps": parse_rate_bps(f["rate"]) if f.get("rate") is not None else None,
                "cc_name": f.get("cc") or doc.get("transport", {}).get("cc", "dctcp"),
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
    n_specs = len(doc.get("flows", []))
    cc = doc.get("transport", {}).get("cc", "dctcp")
    out = []
    for line in p.stdout.splitlines():
        a = json.loads(line)
        out.append({"id": first_id + len(out), "spec": n_specs + a["source"], "src": a["src"], "dst": a["dst"],
                     "class": a["class"], "size": a["size"], "start_s": a["start_ns"] / 1e9, "stop_s": None,
                     "rate_bps": None, "cc_name": cc, "traffic": True})
    return out


def emulate(
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
    from .api import RunResult, resolve, validate
    from .scenario import ScenarioError

    check_environment()
    doc0 = resolve(scenario, overrides)
    validate(doc0)
    for key in _UNSUPPORTED:
        if doc0.get(key):
            raise EmulationError(f"emulate does not support `{key}` yet (use [[flows]] and [[probes]])")
    topo = doc0.get("topology", {})
    if topo.get("kind") != "star":
        raise EmulationError(f"emulate supports star topologies only (this one is `{topo.get('kind')}`)")
    if seed is not None and not (0 <= int(seed) < 2**64):
        raise ScenarioError(f"seed: {seed} is not in 0..2^64")
    run_seed = int(seed) if seed is not None else int(doc0.get("seed", 1))

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
    link_rates = [parse_rate_bps((topo.get("host_link_rate") or [])[i]) if i < len(topo.get("host_link_rate") or [])
                  else parse_rate_bps(topo["link_rate"]) for i in range(n)]
    link_delays = [parse_time_ns((topo.get("host_link_delay") or [])[i]) if i < len(topo.get("host_link_delay") or [])
                   else parse_time_ns(topo.get("link_delay", 0)) for i in range(n)]
    duration = parse_time_ns(doc["duration"]) / 1e9
    metrics = doc.get("metrics", {})
    warmup = parse_time_ns(metrics.get("warmup", 0)) / 1e9
    sample_ns = max(parse_time_ns(metrics.get("sample_interval", "1ms")), 10_000_000)

    # Absolute: the agents and the switch start in other working directories.
    out = Path(out_dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    stale = out / "summary.json"
    if stale.exists():
        stale.unlink()
    opts = {"burst": burst, "link_delay": link_delay, "host_shaping": host_shaping, "quiet": quiet,
            "sample_ns": sample_ns, "orig_rate": orig_rate, "target_rate": target}
    em = _Emulation(doc, out, run_seed, opts)
    em.work.mkdir(parents=True, exist_ok=True)
    for old in em.work.glob("*"):
        if old.is_file():
            old.unlink()

    # Congestion control per flow.
    flows = _expand_flows(doc)
    exe = switch_binary()
    messages = generate_messages(doc, run_seed, len(flows), em.work, exe) if doc.get("traffic") else []
    stop_when_done = bool(messages) and all(f["size"] is not None for f in flows) and \
        bool(metrics.get("stop_when_done", True))
    pias = [parse_size_bytes(t) for t in doc.get("host", {}).get("pias_thresholds", []) or []]
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

    mss = int(doc.get("transport", {}).get("mss", 1460))
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
        for pi, p in enumerate(doc.get("probes", [])):
            probes.append({
                "id": pi, "src": int(p["src"]), "dst": int(p["dst"]), "class": int(p.get("class", 0)),
                "interval_s": parse_time_ns(p["interval"]) / 1e9, "start_s": parse_time_ns(p.get("start", 0)) / 1e9,
                "stop_s": parse_time_ns(p["stop"]) / 1e9 if p.get("stop") is not None else None,
                "size": parse_size_bytes(p.get("size", 64)), "dst_ip": _ip(int(p["dst"])),
            })
        ack_dscp = doc.get("host", {}).get("ack_dscp")
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
                    "persistent": bool(doc.get("host", {}).get("persistent_connections", True)),
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
                    cwd=str(Path(__file__).resolve().parents[1]))
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
    summary = {k: summary[k] for k in order} | {k: v for k, v in summary.items() if k not in order}
    RunResult(doc, summary, flow_rows, probe_rows, ts).write(out)
    return summary


def _fill_ideal_fct(doc: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    """Ideal FCT and slowdown of each finite flow, by the simulator's own definition for the
    scenario that ran (the scaled one: its FCTs are in the same time base)."""
    from . import _core

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
            q = _classify(doc, int(key[1:]))
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
    marks_by: dict[str, int] = {}
    drops_by: dict[str, int] = {}
    unm_by: dict[str, int] = {}
    for name, p in win_ports.items():
        tot = tot_ports.get(name, p)
        h = int(name.split("->h")[1])
        for q in p["queues"]:
            for src, dst in ((q["marks_by_reason"], marks_by), (q["drops_by_reason"], drops_by),
                             (q["unmarkable_by_reason"], unm_by)):
                for k, v in src.items():
                    dst[k] = dst.get(k, 0) + v
            tq = tot["queues"][q["queue"]]
            app = sum(g for fid, g in fgood.items()
                      if flows[fid]["dst"] == h and _classify(doc, flows[fid]["class"]) == q["queue"])
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
    fcts: list[tuple[int, float]] = []
    measured = 0
    timeouts = sum(r.get("netstat", {}).get("TcpExtTCPTimeouts", 0) for r in results.values())
    for f in flows:
        rec = results.get(f["src"], {}).get("flows", {}).get(str(f["id"]), {})
        fct = rec.get("fct_us")
        if f["size"] is not None and f["start_s"] >= warmup:
            measured += 1
            if fct is not None:
                fcts.append((f["size"], fct))
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
        if m["start_s"] >= warmup:
            measured += 1
            if fct is not None:
                fcts.append((m["size"], fct))
        flow_rows.append({
            "id": m["id"], "spec": m["spec"], "src": m["src"], "dst": m["dst"], "class": m["class"],
            "size": m["size"], "start_s": m["start_s"], "finish_s": rec.get("finish_s"), "fct_us": fct,
            "ideal_fct_us": None, "slowdown": None, "acked_bytes": None, "timeouts": None, "retransmits": None,
        })
    _fill_ideal_fct(doc, flow_rows)
    probe_rows = []
    all_rtts = []
    probe_summary = []
    for p in probes:
        r = results.get(p["src"], {}).get("probes", {}).get(str(p["id"]), {"sent": 0, "samples": []})
        rtts = [rtt for (t, rtt) in r["samples"] if t >= warmup]
        all_rtts += rtts
        s = _stats(rtts)
        probe_summary.append({"id": p["id"], "src": p["src"], "dst": p["dst"], "class": p["class"], "samples": s["count"],
                              "avg_us": s["avg_us"], "p50_us": s["p50_us"], "p99_us": s["p99_us"]})
        probe_rows.append({"id": p["id"], "src": p["src"], "dst": p["dst"], "class": p["class"], "sent": r["sent"],
                           "rtt_us": rtts})
    # Time series from the switch's periodic counters.
    ts = _timeseries(em.work / "switch-timeseries.jsonl", t0)
    by = lambda size_ok: _stats([fct for size, fct in fcts if size_ok(size)])  # noqa: E731
    socket_drops = sw.get("socket_drops", 0)
    probe_rtt = _stats(all_rtts)
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
                  "shaper_rate_fraction": em.opts.get("shaper_fraction", 0.995)},
        "cc": {k: v for k, v in cc_map.items()},
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
    if scale == "dilate" and factor != 1:
        emulation["unscaled"] = {
            "note": "times / factor and rates x factor: the original scenario's time base",
            "probe_rtt": {k: (v / factor if isinstance(v, float) and k != "count" else v) for k, v in probe_rtt.items()},
            "queues": [{"port": q["port"], "queue": q["queue"], "goodput_bps": q["goodput_bps"] * factor}
                       for q in queues],
        }
    summary = {
        "scenario": doc.get("name", "scenario"),
        "seed": seed,
        "sim_time_s": duration,
        "wall_time_s": 0.0,
        "events": 0,
        "packet_hops": sw.get("frames_forwarded", 0),
        "measure_from_s": warmup,
        "fct": {"all": by(lambda s: True), "small": by(lambda s: s <= 100_000),
                "medium": by(lambda s: 100_000 < s <= 10_000_000), "large": by(lambda s: s > 10_000_000)},
        "flows": {"total": len(flows) + started, "completed": len(fcts), "unfinished": measured - len(fcts),
                  "long_lived": sum(1 for f in flows if f["size"] is None), "timeouts": timeouts},
        "marks": sum(marks_by.values()),
        "drops": sum(drops_by.values()),
        "marks_by_reason": marks_by,
        "drops_by_reason": drops_by,
        "unmarkable_by_reason": unm_by,
        "queues": queues,
        "probes": probe_summary,
        "probe_rtt": probe_rtt,
        "emulation": emulation,
    }
    return summary, flow_rows, probe_rows, ts


def _timeseries(path: Path, t0: float) -> dict[str, list]:
    cols = ["t_s", "port", "queue", "goodput_bps", "qlen_bytes", "avg_qlen_bytes", "sojourn_us", "marks", "drops"]
    ts: dict[str, list] = {c: [] for c in cols}
    try:
        lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    except (OSError, ValueError):
        return ts
    for a, b in zip(lines, lines[1:]):
        dt = (b["t_ns"] - a["t_ns"]) / 1e9
        if dt <= 0:
            continue
        for pa, pb in zip(a["ports"], b["ports"]):
            for q, (qa, qb) in enumerate(zip(pa["q"], pb["q"])):
                deq = qb[0] - qa[0]
                if b["t_ns"] / 1e9 < t0:
                    continue
                ts["t_s"].append(b["t_ns"] / 1e9 - t0)
                ts["port"].append(pb["name"])
                ts["queue"].append(q)
                ts["goodput_bps"].append((qb[1] - qa[1]) * 8 / dt)
                ts["qlen_bytes"].append(qb[2])
                ts["avg_qlen_bytes"].append((qb[3] - qa[3]) / (dt * 1e9))
                ts["sojourn_us"].append((qb[4] - qa[4]) / deq / 1e3 if deq > 0 else None)
                ts["marks"].append(qb[5] - qa[5])
                ts["drops"].append(qb[6] - qa[6])
    return ts


# ----------------------------------------------------------------------------------------
# Command line
# ----------------------------------------------------------------------------------------

def _fmt_rate(bps: float) -> str:
    return f"{bps / 1e9:.3f} Gbps" if bps >= 1e9 else f"{bps / 1e6:.1f} Mbps"


def _print_summary(s: dict[str, Any], out: Path) -> None:
    e = s["emulation"]
    sc = e["scale"]
    print(f"{s['scenario']} (emulated, seed {s['seed']}): {s['sim_time_s']:.2f} s in {s['wall_time_s']:.1f} s wall, "
          f"{s['packet_hops']:,} frames forwarded, {e['socket_drops']} socket drops; "
          f"rates / {sc['factor']:g} ({sc['mode']}), kernel {e['kernel']}")
    for name, c in e["cc"].items():
        how = (f"{c['kernel']} with ECN (fallback: the kernel refused ecnlab's BPF algorithm)" if c.get("fallback")
               else f"{c['kernel']} ({c['implementation']})" if c.get("implementation") else c["kernel"])
        print(f"  cc {name}: {how}")
    for w in e["warnings"]:
        print(f"  note: {w}")
    if s["queues"]:
        print(f"  {'port':<10} {'queue':>5} {'goodput':>12} {'avg qlen':>10} {'max qlen':>10} {'sojourn':>10} {'marks':>8} {'drops':>7}")
        for q in s["queues"]:
            soj = f"{q['avg_sojourn_us']:.0f}us" if q["avg_sojourn_us"] is not None else "-"
            print(f"  {q['port']:<10} {q['queue']:>5} {_fmt_rate(q['goodput_bps']):>12} {q['avg_qlen_bytes'] / 1e3:>8.1f}KB "
                  f"{q['max_qlen_bytes'] / 1e3:>8.1f}KB {soj:>10} {q['marks']:>8} {q['drops']:>7}")
    f = s["fct"]["all"]
    if f["count"]:
        print(f"  FCT all: n={f['count']} avg {f['avg_us']:.1f} us, p99 {f['p99_us']:.1f} us; unfinished {s['flows']['unfinished']}")
    r = s["probe_rtt"]
    if r.get("count"):
        line = f"  probe RTT: n={r['count']} avg {r['avg_us']:.1f} us, p50 {r['p50_us']:.1f} us, p99 {r['p99_us']:.1f} us"
        u = e.get("unscaled", {}).get("probe_rtt")
        if u:
            line += f" (unscaled: avg {u['avg_us']:.1f}, p50 {u['p50_us']:.1f}, p99 {u['p99_us']:.1f} us)"
        print(line)
    print(f"  receiver CE packets {e['receiver_ce_packets']}; results in {out}/")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:
        sys.stderr.write(f"{ERROR_PREFIX}{message}\n")
        sys.exit(2)


def build_parser(prog: str = "ecnlab emulate") -> argparse.ArgumentParser:
    p = _Parser(prog=prog, description="Run a scenario on real Linux TCP through the emulated switch "
                                       "(needs root; builds network namespaces and removes them afterwards).")
    p.add_argument("scenario", nargs="?", default="tcn-static", help="built-in name or TOML file (default: tcn-static)")
    p.add_argument("--out", help="result directory (default: out/<scenario>-emu)")
    p.add_argument("--seed", type=int, help="master seed (default: the scenario's)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a scenario key (repeatable)")
    p.add_argument("--rate", default="auto",
                   help="host link rate to emulate, e.g. 100Mbit; 'auto' = 100 Mbit/s if the scenario is faster; "
                        "'none' = the scenario's rate")
    p.add_argument("--scale", choices=["dilate", "rate"], default="dilate",
                   help="dilate: times x s as rates / s (default); rate: rates and queue thresholds / s, times kept")
    p.add_argument("--pcap", metavar="PORT", help="capture switch port PORT (host index or s0->hN) to a pcap file")
    p.add_argument("--burst", help="shaper bucket (default: max(2.5KB, 100 us at the port's rate))")
    p.add_argument("--no-link-delay", action="store_true", help="do not emulate propagation delays with netem")
    p.add_argument("--no-host-shaping", action="store_true", help="do not limit hosts to their link rate")
    p.add_argument("--allow-fallback", action="store_true",
                   help="if the kernel refuses ecnlab's BPF DCTCP, run DCTCP flows with --dctcp-fallback and ECN "
                        "instead of stopping (the summary records it)")
    p.add_argument("--dctcp-fallback", choices=["reno", "cubic"], default="cubic",
                   help="the fallback of --allow-fallback (default: cubic with ECN)")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    return p


def main(argv: list[str] | None = None) -> int:
    """``ecnlab emulate ...``. Exit status: 0 ok, 2 user error (one line on stderr),
    1 internal error, 130 interrupted."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--agent"]:
        return _agent_main(argv[1])
    if argv[:1] == ["--reaper"]:
        return _reaper_main(argv[1])
    from .scenario import ScenarioError

    a = build_parser().parse_args(argv)
    try:
        out = Path(a.out) if a.out else None
        if out is None:
            from .api import resolve

            name = resolve(a.scenario, a.set).get("name", Path(a.scenario).stem)
            out = Path("out") / f"{name}-emu"
        s = emulate(a.scenario, out, a.set, a.seed, a.pcap, rate=a.rate, scale=a.scale, burst=a.burst,
                    link_delay=not a.no_link_delay, host_shaping=not a.no_host_shaping,
                    allow_fallback=a.allow_fallback, dctcp_fallback=a.dctcp_fallback, quiet=a.quiet)
        if not a.quiet:
            _print_summary(s, out)
        return 0
    except (ScenarioError, EmulationError) as e:
        sys.stderr.write(f"{ERROR_PREFIX}{e}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("ecnlab: interrupted (namespaces removed)\n")
        return 130
    except _Terminated:
        sys.stderr.write("ecnlab: terminated (namespaces removed)\n")
        return 143
    except Exception as e:  # noqa: BLE001 - one line, no traceback
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        sys.stderr.write(f"ecnlab: internal error: {type(e).__name__}: {msg}\n")
        if os.environ.get("ECNLAB_DEBUG"):
            raise
        return 1


if __name__ == "__main__":
    sys.exit(main())
