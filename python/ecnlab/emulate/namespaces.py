"""The environment: root, network namespaces (created, entered, deleted, reaped after a
SIGKILLed run), sysctls and offloads inside them, the switch binary."""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import platform
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterable

from .common import (CLONE_NEWNET, ETHTOOL_SGRO, ETHTOOL_SGSO, ETHTOOL_SSG, ETHTOOL_STSO, ETHTOOL_STXCSUM,
                     EmulationError, NEEDS, SIOCETHTOOL)
from ..parent_death import die_with_parent


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


def _die_with_run() -> None:
    """Before exec of a child of the run (the switch, an agent, tcpdump): die when the run
    does, however it dies, so that a SIGKILLed run leaves no process behind (its reaper
    deletes the namespaces). SIGTERM, the signal that ends them at the end of a run too:
    the switch writes its report, an agent exits at once (143)."""
    die_with_parent(signal.SIGTERM)


def _child_setup() -> None:
    """Before exec of an agent: die with the run, and run ahead of ordinary processes
    (nice -10): on a shared machine a sender that waits for a CPU is not backlogged, and
    the scheduler shares would measure the machine's load instead of the switch."""
    _die_with_run()
    try:
        os.setpriority(os.PRIO_PROCESS, 0, -10)
    except OSError:
        pass


def available_congestion_controls() -> list[str]:
    try:
        return Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()
    except OSError:
        return []


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
