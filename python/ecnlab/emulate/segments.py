"""TCP segments as a switch's ingress sees them, from either engine, and what
``ecnlab validate`` measures of them: the trains a sender puts on the wire, the SYNs of a
connection, the retransmission of a lost segment.

Read first: RFC 9293 §3.1 (the TCP header), libpcap's savefile format. The two sources:

- the emulated switch's ingress capture (``switch-stats.json``'s ``ingress_tcp``,
  crates/ecnlab-emu/src/capture.rs): each TCP frame the hosts' kernels sent, with its
  kernel receive timestamp at the switch (CLOCK_REALTIME);
- the simulator's capture of a host's NIC (``ecnlab run --pcap h1->s0``,
  crates/ecnlab-sim/src/pcap.rs): each packet at the simulated time its transmission
  starts; the switch receives it one propagation delay and one transmission later, the same
  for every packet, so gaps and trains are the switch's.

A **train** is a run of a flow's data segments each following the one before within
``TRAIN_GAP`` serialization times of a full-sized frame at the host's rate: back to back
on the wire (TSO/GSO skbs, ACK-clocked bursts), as a switch's buffer receives them.
"""

from __future__ import annotations

import statistics
import struct
from dataclasses import dataclass
from typing import Any, Iterable

SYN, ACK = 0x02, 0x10
# A full-sized frame on the wire (1500-byte IP packet and its Ethernet header).
FULL_FRAME_BYTES = 1514
# Gaps up to this many full-frame serialization times keep a train going: a back-to-back
# frame follows in one (the kernel's tbf releases some sooner, out of its bucket), and a
# sender that paused for an ACK leaves at least two.
TRAIN_GAP = 1.75


@dataclass(frozen=True)
class Seg:
    """One TCP segment at the switch's ingress."""

    t_ns: int
    src: int  # host index
    dst: int
    sport: int
    dport: int
    seq: int
    ack: int
    flags: int
    payload: int

    @property
    def flow(self) -> tuple[int, int, int, int]:
        return (self.src, self.dst, self.sport, self.dport)

    @property
    def syn(self) -> bool:
        return self.flags & (SYN | ACK) == SYN

    @property
    def syn_ack(self) -> bool:
        return self.flags & (SYN | ACK) == SYN | ACK


def from_emulation(stats: dict[str, Any]) -> list[Seg]:
    """The emulated switch's ingress capture (its report's ``ingress_tcp``); hosts are
    numbered by the last byte of their address (``SUBNET.(i + 1)``)."""
    cap = stats.get("ingress_tcp") or {}
    cols = {c: i for i, c in enumerate(cap.get("columns", []))}
    out = []
    for r in cap.get("frames", []):
        g = lambda k: r[cols[k]]  # noqa: E731
        out.append(Seg(g("t_ns"), (g("src_ip") & 0xFF) - 1, (g("dst_ip") & 0xFF) - 1, g("sport"), g("dport"),
                       g("seq"), g("ack"), g("flags"), g("payload")))
    return sorted(out, key=lambda s: s.t_ns)


def from_pcap(data: bytes) -> list[Seg]:
    """The TCP segments of a simulator capture (nanosecond pcap, Ethernet; hosts are
    10.0.x.y for host x * 256 + y)."""
    magic = struct.unpack_from("<I", data, 0)[0]
    if magic != 0xA1B23C4D:
        raise ValueError(f"not a nanosecond pcap (magic {magic:#x})")
    out, off = [], 24
    while off + 16 <= len(data):
        sec, nsec, incl, _orig = struct.unpack_from("<IIII", data, off)
        f = data[off + 16:off + 16 + incl]
        off += 16 + incl
        if len(f) < 54 or f[12:14] != b"\x08\x00" or f[23] != 6:
            continue
        ihl = (f[14] & 0x0F) * 4
        total = struct.unpack_from("!H", f, 16)[0]
        src, dst = f[26:30], f[30:34]
        t = 14 + ihl
        sport, dport, seq, ack = struct.unpack_from("!HHII", f, t)
        doff = (f[t + 12] >> 4) * 4
        out.append(Seg(sec * 1_000_000_000 + nsec, src[2] * 256 + src[3], dst[2] * 256 + dst[3], sport, dport,
                       seq, ack, f[t + 13], total - ihl - doff))
    return out


def trains(segs: Iterable[Seg], rate_bps: float, t_from: int = 0, t_to: int | None = None) -> list[int]:
    """The length (data segments) of every train of every flow whose first segment is in
    [t_from, t_to]."""
    gap = TRAIN_GAP * FULL_FRAME_BYTES * 8 / rate_bps * 1e9
    last: dict[tuple, tuple[int, int]] = {}  # flow -> (time of its last segment, index of its train)
    lengths: list[int] = []
    starts: list[int] = []
    for s in segs:
        if s.payload <= 0:
            continue
        prev = last.get(s.flow)
        if prev is not None and s.t_ns - prev[0] <= gap:
            lengths[prev[1]] += 1
            last[s.flow] = (s.t_ns, prev[1])
        else:
            lengths.append(1)
            starts.append(s.t_ns)
            last[s.flow] = (s.t_ns, len(lengths) - 1)
    return [n for n, t in zip(lengths, starts) if t >= t_from and (t_to is None or t <= t_to)]


def train_figures(lengths: list[int]) -> dict[str, float | None]:
    """Mean and 90th percentile of train lengths, and the mean train length a data
    segment finds itself in (weighted by length: what a buffer receives at once)."""
    if not lengths:
        return {"mean": None, "p90": None, "per_segment": None}
    xs = sorted(lengths)
    return {"mean": statistics.fmean(xs), "p90": float(xs[min(len(xs) - 1, int(0.9 * len(xs)))]),
            "per_segment": sum(x * x for x in xs) / sum(xs)}


def syn_timing(segs: list[Seg], src: int, dst: int) -> dict[str, Any] | None:
    """The opening of the first connection from host ``src`` to ``dst``: the times (ns,
    from its first SYN) of each SYN sent, of the SYN-ACK, and of the first data segment."""
    syns = [s for s in segs if s.syn and s.src == src and s.dst == dst]
    if not syns:
        return None
    first = syns[0]
    key = first.flow
    back = (dst, src, first.dport, first.sport)
    sent = [s.t_ns - first.t_ns for s in syns if s.flow == key]
    synack = next((s.t_ns - first.t_ns for s in segs if s.syn_ack and s.flow == back), None)
    data = next((s.t_ns - first.t_ns for s in segs if s.flow == key and s.payload > 0), None)
    return {"syns_ns": sent, "synack_ns": synack, "first_data_ns": data}


def retransmission_delay(segs: list[Seg], src: int, dst: int, byte: int) -> dict[str, Any] | None:
    """The first connection from ``src`` to ``dst`` whose data covers ``byte`` (counted from
    its first data byte): the time (ns) from the first transmission of the segment that
    carries it to the next one that carries it again (the probe, or the retransmission),
    and from the last ACK the sender received before that to it."""
    syn = next((s for s in segs if s.syn and s.src == src and s.dst == dst), None)
    if syn is None:
        return None
    key, back = syn.flow, (dst, src, syn.dport, syn.sport)
    base = (syn.seq + 1) & 0xFFFFFFFF
    sent = []
    for s in segs:
        if s.flow == key and s.payload > 0:
            off = (s.seq - base) & 0xFFFFFFFF
            if off <= byte < off + s.payload:
                sent.append(s.t_ns)
    if len(sent) < 2:
        return None
    # Any ACK before the second sending counts, also one before the first: an ACK-clocked
    # sender (kernel 6.18 here) sends the lost segment just after the ACK before it.
    acks = [s.t_ns for s in segs if s.flow == back and s.t_ns < sent[1]]
    return {"first_ns": sent[0], "again_ns": sent[1], "delay_ns": sent[1] - sent[0],
            "after_last_ack_ns": sent[1] - acks[-1] if acks else None}
