"""The traffic agent, one or two per host, inside the host's namespace
(``python -m ecnlab.emulate --agent SPEC``): flows, messages, probes, byte counts."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import socket
import struct
import sys
import threading
import time
from pathlib import Path
from typing import Any

from .common import (HEADER, SIOCOUTQNSD, SOCKET_BUFFER, SO_MAX_PACING_RATE, SO_TIMESTAMPNS, TCP_CONGESTION,
                     TCP_INFO, TCP_PORT)


def _sleep_until(t: float) -> None:
    while True:
        d = t - time.time()
        if d <= 0:
            return
        time.sleep(min(d, 0.05))


def _netstat() -> dict[str, int]:
    """TcpExt, IpExt and Tcp counters of this namespace (/proc/net/netstat and snmp are
    per netns)."""
    out: dict[str, int] = {}
    for f in ("netstat", "snmp"):
        try:
            lines = Path(f"/proc/net/{f}").read_text().splitlines()
        except OSError:
            continue
        for head, vals in zip(lines[0::2], lines[1::2]):
            names = head.split()
            nums = vals.split()
            for n, v in zip(names[1:], nums[1:]):
                try:
                    out[names[0].rstrip(":") + n] = int(v)
                except ValueError:
                    pass
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
                        # From the connection request, as the simulator's linux hosts
                        # (transport.handshake) count it: a lost SYN is in the FCT.
                        rec["fct_us"] = (time.time() - t_conn) * 1e6
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
                "IpExtInCEPkts", "IpExtInECT0Pkts", "IpExtInECT1Pkts", "IpExtInNoECTPkts", "TcpExtTCPECNRehash",
                # How the receivers ACKed: delayed-ACK timer expiries (also while the socket
                # was held by the application) and ACKs sent at once.
                "TcpExtDelayedACKs", "TcpExtDelayedACKLocked", "TcpExtTCPHPAcks", "TcpExtTCPPureAcks",
                "TcpOutSegs", "TcpInSegs")
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


