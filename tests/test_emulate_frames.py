"""The emulated switch under bad input and load, live: raw frames injected into its ports
from host namespaces with AF_PACKET.

- Every kind of odd frame (0 and 1 byte, runts, ARP, IPv6, unknown EtherTypes, LLDP and
  pause frames, IPv4 cut short, with a bad version, a bad checksum, a total length beyond the
  frame, options, not-ECT) reaches the switch through a real veth, is counted under its own
  name in the switch's report, and the switch keeps forwarding (and marking) good frames.
- A flood (ECNLAB_FLOOD_SECONDS, default 60 s) of such frames mixed with valid ones and
  ever-new source MACs, as fast as two sender processes can write them: the switch's RSS
  stays flat over the second half, it forwards afterwards, and it reports what it dropped.

Needs root and network namespaces (CI has both); skipped with the reason otherwise. The
rig's namespaces carry the prefix of ``ecnlab emulate``'s, so a run killed in the middle is
cleaned up by the next emulation.
"""

from __future__ import annotations

import ctypes
import json
import os
import random
import signal
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ecnlab import emulate as emu

from test_emulate import WHY_NOT, needs_netns, processes_mentioning

# Measures real time on this machine: run alone, not beside other tests (Makefile, `make test`).
pytestmark = pytest.mark.realtime

HOSTS = 3
ETH_P_ALL = 0x0003
FLOOD_SECONDS = float(os.environ.get("ECNLAB_FLOOD_SECONDS", "60"))


def mac(i: int) -> bytes:
    return bytes([0x02, 0xEC, 0x77, 0x00, 0x00, i])


def checksum(b: bytes) -> int:
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def ipv4_frame(dst: bytes, src: bytes, tos: int, payload: int = 100, options: int = 0, ttl: int = 64,
               total: int | None = None, version: int = 4, bad_checksum: bool = False) -> bytes:
    """Ethernet + IPv4 (+ ``options`` words of NOPs) + a 20-byte TCP header + payload."""
    ihl = 5 + options
    tcp = struct.pack("!HHIIBBHHH", 5001, 40000, 1, 0, 5 << 4, 0x10, 65535, 0, 0)
    body = tcp + b"\xab" * payload
    tl = total if total is not None else ihl * 4 + len(body)
    hdr = struct.pack("!BBHHHBBH4s4s", (version << 4) | ihl, tos, tl, 0x1234, 0x4000, ttl, 6, 0,
                      bytes([10, 77, 0, 2]), bytes([10, 77, 0, 1])) + b"\x01" * (options * 4)
    c = checksum(hdr)
    if bad_checksum:
        c ^= 0x0101
    hdr = hdr[:10] + struct.pack("!H", c) + hdr[12:]
    return dst + src + b"\x08\x00" + hdr + body


def ether(dst: bytes, src: bytes, ethertype: int, length: int) -> bytes:
    f = dst + src + struct.pack("!H", ethertype)
    return f + b"\x5a" * max(0, length - len(f))


def odd_frames() -> dict[str, list[bytes]]:
    """Frames from host 1 to host 0, grouped by the counter each must land in."""
    d, s = mac(0), mac(1)
    ect = (3 << 2) | 0b10
    good = ipv4_frame(d, s, ect)
    v6 = bytearray(ether(d, s, 0x86DD, 80))
    v6[14] = 0x6B  # traffic-class bits that would read as ECT if misparsed
    return {
        "runt": [b"", b"\xff", good[:13]],
        "ipv4_malformed": [good[:20], good[:33], ipv4_frame(d, s, ect, version=5),
                           ipv4_frame(d, s, ect, total=1500), ipv4_frame(d, s, ect, total=19)],
        "ipv4_bad_checksum": [ipv4_frame(d, s, ect, bad_checksum=True)],
        "link_local": [ether(b"\x01\x80\xc2\x00\x00\x0e", s, 0x88CC, 60), ether(b"\x01\x80\xc2\x00\x00\x01", s, 0x8808, 60)],
        "arp": [ether(d, s, 0x0806, 42)],
        "ipv6": [bytes(v6)],
        "other_ethertype": [ether(d, s, 0x1234, 60), ether(d, s, 0x0040, 60)],
        "ipv4_not_ect": [ipv4_frame(d, s, 3 << 2)],
        "ipv4_options": [ipv4_frame(d, s, ect, options=3)],
    }


def _setns(name: str) -> None:
    fd = os.open(f"/run/netns/{name}", os.O_RDONLY)
    try:
        if ctypes.CDLL(None, use_errno=True).setns(fd, emu.CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns {name}")
    finally:
        os.close(fd)


def in_child(fn, *args):
    """Run fn(*args) in a forked child (it may change namespace); return its JSON result."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            out = json.dumps({"ok": fn(*args)})
        except BaseException as e:  # noqa: BLE001 - report anything to the parent
            out = json.dumps({"error": f"{type(e).__name__}: {e}"})
        os.write(w, out.encode())
        os._exit(0)
    os.close(w)
    data = b""
    while chunk := os.read(r, 65536):
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    res = json.loads(data)
    if "error" in res:
        raise AssertionError(res["error"])
    return res["ok"]


class Rig:
    """A switch namespace with HOSTS veth ports and one namespace per host, the switch
    running on them. Always torn down by ``close``."""

    def __init__(self, exe: Path, work: Path, rate: str = "1Gbps", marking: dict | None = None, burst: str = "2500B"):
        self.prefix = emu._new_prefix()
        self.sw_ns = f"{self.prefix}-sw"
        self.hosts = [f"{self.prefix}-h{i}" for i in range(HOSTS)]
        self.namespaces: list[str] = []
        self.proc: subprocess.Popen | None = None
        self.work = work
        try:
            for ns in (self.sw_ns, *self.hosts):
                emu._run(["ip", "netns", "add", ns])
                self.namespaces.append(ns)
                emu._in_netns(ns, emu._write_sysctls, {"net.ipv6.conf.all.disable_ipv6": "1",
                                                       "net.ipv6.conf.default.disable_ipv6": "1"})
            emu._run(["ip", "-n", self.sw_ns, "-batch", "-"], input="".join(
                f"link add s{i} type veth peer name h{i} netns {ns}\nlink set s{i} up\n" for i, ns in enumerate(self.hosts)))
            for i, ns in enumerate(self.hosts):
                emu._run(["ip", "-n", ns, "-batch", "-"], input=f"link set h{i} address {mac(i).hex(':')}\nlink set h{i} up\n")
                emu._in_netns(ns, emu._offloads_off, [f"h{i}"])
            emu._in_netns(self.sw_ns, emu._offloads_off, [f"s{i}" for i in range(HOSTS)])
            cfg = {
                "ports": [{"ifname": f"s{i}", "name": f"s0->h{i}", "rate": rate} for i in range(HOSTS)],
                "switch": {"queues": 2, "buffer": "200KB"},
                "marking": marking or {"scheme": "tcn", "tcn": {"threshold": "1ns"}},
                "static_macs": [{"mac": mac(i).hex(":"), "port": i} for i in range(HOSTS)],
                "shaper": {"burst": burst},
            }
            (work / "switch.json").write_text(json.dumps(cfg))
            self.stats = work / "switch-stats.json"
            self.proc = subprocess.Popen(["ip", "netns", "exec", self.sw_ns, str(exe), "--config", str(work / "switch.json"),
                                          "--stats", str(self.stats)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                         text=True, preexec_fn=emu._die_with_run)
            line = emu._readline(self.proc.stdout, 10.0)
            assert line.strip() == "ready", emu._why(self.proc, line)
        except BaseException:
            self.close()
            raise

    def stop(self) -> dict:
        """SIGTERM the switch; its report."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=10)
        assert self.proc.returncode == 0, self.proc.stderr.read()
        return json.loads(self.stats.read_text())

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        left = emu._delete_namespaces(self.namespaces)
        self.namespaces = []
        assert not left, left

    def send_and_capture(self, frames: list[bytes], settle: float = 0.3) -> dict:
        """Send ``frames`` from h1 (AF_PACKET on its veth) and capture what reaches h0.
        Returns {"sent": [accepted?], "errors": [...], "received": [hex frames]}."""
        def run(sw_hosts: list[str]):
            _setns(sw_hosts[0])
            rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
            rx.bind(("h0", 0))
            rx.settimeout(0.05)
            _setns(sw_hosts[1])
            tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
            tx.bind(("h1", 0))
            sent, errors = [], []
            for f in frames:
                try:
                    tx.send(f)
                    sent.append(True)
                except OSError as e:
                    sent.append(False)
                    errors.append(f"{len(f)} bytes: {e.strerror}")
            got = []
            deadline = time.time() + settle
            while time.time() < deadline:
                try:
                    got.append(rx.recv(4096).hex())
                except socket.timeout:
                    pass
            return {"sent": sent, "errors": errors, "received": got}

        return in_child(run, [self.hosts[0], self.hosts[1]])


@pytest.fixture(scope="module")
def switch_exe():
    if WHY_NOT is not None:
        pytest.skip(WHY_NOT)
    try:
        return emu.switch_binary(build=True)
    except emu.EmulationError as e:
        pytest.skip(str(e))


@needs_netns
def test_odd_frames_are_counted_and_the_switch_keeps_forwarding(tmp_path, switch_exe):
    rig = Rig(switch_exe, tmp_path)
    try:
        groups = odd_frames()
        frames = [f for fs in groups.values() for f in fs]
        res = rig.send_and_capture(frames)
        accepted = dict(zip(map(bytes.hex, frames), res["sent"]))
        # Then good ECT frames: all arrive, CE-marked (TCN at 1 ns), checksum still valid.
        good = [ipv4_frame(mac(0), mac(1), (3 << 2) | 0b10, payload=i) for i in range(20, 40)]
        after = rig.send_and_capture(good)
        report = rig.stop()
    finally:
        rig.close()
    assert all(after["sent"])
    got = [bytes.fromhex(h) for h in after["received"]]
    ours = [f for f in got if f[6:12] == mac(1) and f[12:14] == b"\x08\x00"]
    assert len(ours) == len(good), (len(ours), len(good))
    for f in ours:
        assert f[15] & 3 == 3, "marked"
        assert checksum(f[14:34]) == 0, "valid IPv4 checksum after the CE rewrite"
    # Every frame the kernel let onto the wire is counted under its name. The veth refuses
    # frames shorter than an Ethernet header (dev_validate_header), so runts may never
    # reach the switch: then the kernel must have refused exactly those.
    p1 = next(p for p in report["total"]["ports"] if p["name"] == "s0->h1")
    counter = {"runt": "runts"}
    for kind, fs in groups.items():
        n = sum(accepted[f.hex()] for f in fs)
        if kind == "runt" and n == 0:
            assert all(not accepted[f.hex()] for f in fs)
            continue
        assert p1[counter.get(kind, kind)] == n, (kind, p1)
    for kind, fs in groups.items():
        if kind not in ("runt",):
            assert all(accepted[f.hex()] for f in fs), (kind, res["errors"])
    drops = report["ingress_drops_by_reason"]
    assert drops["ipv4_malformed"] == len(groups["ipv4_malformed"])
    assert drops["ipv4_bad_checksum"] == 1 and drops["link_local"] == 2
    # Forwarded kinds reached h0 unchanged (not IPv4: never marked).
    rx0 = {bytes.fromhex(h) for h in res["received"]}
    for kind in ("arp", "ipv6", "other_ethertype"):
        for f in groups[kind]:
            assert f in rx0 or (f + b"\0" * (60 - len(f))) in rx0 or any(r.startswith(f) for r in rx0), kind
    # Not-ECT IPv4 is forwarded but never marked.
    ne = groups["ipv4_not_ect"][0]
    assert any(r[6:12] == mac(1) and r[14 + 1] == ne[15] and r[34:] == ne[34:] for r in rx0)
    assert report["total"]["ports"][0]["tx_errors"] == 0


FLOOD_SENDER = r"""
import os, random, socket, struct, sys, time, json
frames = [bytes.fromhex(h) for h in json.loads(sys.stdin.read())]
ifname, seconds, seed = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
s.bind((ifname, 0))
s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 22)
rnd = random.Random(seed)
# Ever-new source MACs: the learned table must stay bounded.
macs = [bytes([2, 0xaa, seed, rnd.randrange(256), rnd.randrange(256), rnd.randrange(256)]) for _ in range(16384)]
n = errs = 0
end = time.time() + seconds
send = s.send
while True:
    for i, f in enumerate(frames):
        try:
            if i % 8 == 0 and len(f) >= 12:
                f = f[:6] + macs[(n >> 3) % 16384] + f[12:]
            send(f)
            n += 1
        except OSError:
            errs += 1
    if time.time() >= end:
        break
print(json.dumps({"sent": n, "errors": errs}))
"""


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _switch_pid(rig: Rig) -> int:
    # `ip netns exec` execs the switch: the Popen pid is the switch.
    return rig.proc.pid


@needs_netns
def test_flood_keeps_memory_flat_and_the_switch_forwarding(tmp_path, switch_exe):
    """Drive the switch as hard as two Python AF_PACKET senders can for FLOOD_SECONDS,
    with odd frames, valid ones and random source MACs; sample its RSS every second."""
    # A 10 Gbit/s port with a 1 MB bucket: the shaper never limits, so what leaves is what
    # the event loop can carry (a 2.5 KB bucket would cap each loop iteration at 2.5 KB).
    rig = Rig(switch_exe, tmp_path, rate="10Gbps", burst="1MB")
    try:
        d = mac(0)
        mix = [f for fs in odd_frames().values() for f in fs if len(f) >= 14]
        mix += [ipv4_frame(d, mac(1), (i % 4) << 2 | 0b10, payload=64 + 29 * i) for i in range(24)]
        mix += [ipv4_frame(bytes([2, 0xbb, 0, 0, 0, i]), mac(1), 0b10, payload=100) for i in range(4)]  # unknown: flooded
        payload = json.dumps([f.hex() for f in mix])
        pid = _switch_pid(rig)
        rss0 = _rss_kb(pid)
        senders = []
        for h in (1, 2):
            senders.append(subprocess.Popen(
                ["ip", "netns", "exec", rig.hosts[h], sys.executable, "-c", FLOOD_SENDER, f"h{h}", str(FLOOD_SECONDS), str(h)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=emu._die_with_run))
        for p in senders:
            p.stdin.write(payload)
            p.stdin.close()
        t0 = time.time()
        rss = []
        while any(p.poll() is None for p in senders):
            rss.append((time.time() - t0, _rss_kb(pid)))
            assert rig.proc.poll() is None, "the switch died under the flood"
            time.sleep(1.0)
        wall = time.time() - t0
        outs = [json.loads(p.stdout.read()) for p in senders]
        assert all(p.returncode == 0 for p in senders), [p.stderr.read() for p in senders]
        # Still forwarding afterwards.
        good = [ipv4_frame(mac(0), mac(1), 0b10, payload=200) for _ in range(10)]
        after = rig.send_and_capture(good, settle=0.5)
        report = rig.stop()
    finally:
        rig.close()
    sent = sum(o["sent"] for o in outs)
    received = report["frames_received"]
    sock_drops = report["socket_drops"]
    half = [kb for t, kb in rss if t >= FLOOD_SECONDS / 2]
    growth_kb = (half[-1] - half[0]) if len(half) >= 2 else 0
    figures = {
        "seconds": round(wall, 1), "offered_fps": round(sent / wall), "received_fps": round(received / wall),
        "forwarded_fps": round(report["frames_forwarded"] / wall), "socket_drops": sock_drops,
        "rss_start_kb": rss0, "rss_at_half_kb": half[0] if half else None, "rss_end_kb": rss[-1][1] if rss else None,
        "max_rss_kb": max(kb for _, kb in rss) if rss else None, "second_half_growth_kb": growth_kb,
        "ingress_drops_by_reason": report["ingress_drops_by_reason"], "fib_full": report["fib_full"],
        "pool": report["frame_pool"],
    }
    (tmp_path / "flood.json").write_text(json.dumps(figures, indent=1))
    print("\nflood figures:", json.dumps(figures))
    out_dir = os.environ.get("ECNLAB_FLOOD_REPORT")
    if out_dir:
        Path(out_dir).write_text(json.dumps({**figures, "rss_series_kb": rss}, indent=1))
    ours = [bytes.fromhex(h) for h in after["received"]]
    ours = [f for f in ours if f[6:12] == mac(1) and len(f) == len(good[0])]
    assert len(ours) == len(good), "forwarding after the flood"
    # What the senders wrote either reached the switch's socket or was dropped there for
    # lack of buffer (counted), or by the veth's backlog before it (the kernel's count).
    assert received > 0 and received + sock_drops <= sent * 1.01 + 1000, figures
    assert growth_kb < 4096, figures
    assert report["fib_full"] > 0, "random source MACs hit the table's bound"
    assert report["frame_pool"]["free"] == report["frame_pool"]["slots"], "every frame slot came back"
    assert processes_mentioning(str(tmp_path / "switch.json")) == []
