"""Is a run a sound test of the switch under study? One guard, read by ``ecnlab run`` (the
``soundness`` key of ``summary.json``), by the catalog (claims resting on an unsound run are
marked) and by ``ecnlab advise`` (an unsound run is never ranked).

A comparison of marking schemes assumes its runs exercise the switch's marking: the flows'
bottleneck is a switch queue, the scheduler serves each queue what it owes it, every flow
finishes, loss recovery does not dominate, a lossless class loses nothing and holds no queue
that outlasts the senders' timers, and the run is at the load its set-up states. Each rule
below checks one of these on the run's own files (``summary.json``, ``flows.csv``,
``timeseries.csv``, the scenario as the core resolves it) and returns a ``Flag`` per
finding: which rule, where in the run (a NIC, a queue, a flow, the run), the numbers, and a
line that says it. Each rule's threshold is a field written once, with the reason in its
docstring; ``RULES`` is the guard.

>>> from ecnlab import soundness
>>> verdict = soundness.assess(soundness.Run.from_dir("out/tcn-static"))   # doctest: +SKIP
>>> verdict.sound, [f.rule for f in verdict.flags]                         # doctest: +SKIP

What a rule cannot judge on a run (a run without busy time, traffic without a stated load)
it leaves alone: a flag is a measured fact, never a guess."""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Iterable

from .inputs import read_csv, read_json

__all__ = ["Flag", "Run", "Rule", "Soundness", "RULES", "RULE_NAMES", "assess", "described", "from_summary"]


@dataclass(frozen=True)
class Flag:
    """One finding: ``rule`` (its name), ``at`` (what of the run: ``"NIC h1->s0"``, ``"queue
    s0->h0:1"``, ``"flows"``, ``"run"``), the ``numbers`` it rests on, and ``text``, one line
    with them."""

    rule: str
    at: str
    text: str
    numbers: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"rule": self.rule, "at": self.at, "text": self.text, "numbers": dict(self.numbers)}

    @staticmethod
    def of(d: dict[str, Any]) -> "Flag":
        return Flag(d["rule"], d["at"], d["text"], dict(d.get("numbers") or {}))


@dataclass
class Soundness:
    """The guard's verdict on one run: sound when no rule flagged it."""

    flags: list[Flag]
    rules: tuple[str, ...]

    @property
    def sound(self) -> bool:
        return not self.flags

    def as_dict(self) -> dict[str, Any]:
        """``summary.json``'s ``soundness``: ``sound``, the ``rules`` checked, the ``flags``."""
        return {"sound": self.sound, "rules": list(self.rules), "flags": [f.as_dict() for f in self.flags]}

    def without(self, rules: Iterable[str]) -> "Soundness":
        """The verdict with the flags of ``rules`` set aside (what an experiment measures, such
        as an incast's timeouts, is no flaw of its runs)."""
        skip = set(rules)
        return Soundness([f for f in self.flags if f.rule not in skip], tuple(r for r in self.rules if r not in skip))


def from_summary(summary: dict[str, Any]) -> Soundness | None:
    """The verdict ``ecnlab run`` wrote into a ``summary.json`` (None: written before it)."""
    s = summary.get("soundness")
    if not isinstance(s, dict):
        return None
    return Soundness([Flag.of(f) for f in s.get("flags", [])], tuple(s.get("rules", [])))


# --------------------------------------------------------------------------------------
# A run, as the rules read it


# A port to host N; "#2" names a second cable to it (a topology file's parallel links).
_HOST_PORT = re.compile(r"->h(\d+)(?:#\d+)?$")
# Drops of admission (no room in the buffer, the queue's limit or its pool), as against an
# AQM's deliberate drops of non-ECT packets (the dual AQM's classic RED, CoDel in drop mode).
OVERFLOW_REASONS = ("buffer_full", "queue_limit", "pool_full")
# Transports specified for a lossless (PFC) fabric: RoCEv2's DCQCN (DCQCN paper §2).
LOSSLESS_CC = ("dcqcn",)


@dataclass
class Run:
    """One run's files: ``summary``, ``scenario`` (as it ran), ``flows`` (a pandas DataFrame,
    read when a rule first asks) and the time series (``series_columns``)."""

    summary: dict[str, Any]
    scenario: dict[str, Any]
    flows_source: Any = None
    timeseries_source: Any = None

    @classmethod
    def from_dir(cls, run_dir: str | Path) -> "Run":
        """A run directory (``ecnlab run --out``, a sweep's ``runs/<key>/``); a damaged file is
        one line naming it (ScenarioError)."""
        d = Path(run_dir)
        scen = read_json(d / "scenario.json") if (d / "scenario.json").exists() else {}
        return cls(read_json(d / "summary.json"), scen, d / "flows.csv", d / "timeseries.csv")

    @classmethod
    def from_result(cls, summary: dict[str, Any], scenario: dict[str, Any], flows: list[dict[str, Any]],
                    timeseries: dict[str, list]) -> "Run":
        """A run just made (``api.run``), before its files are written."""
        return cls(summary, scenario, flows, timeseries)

    @functools.cached_property
    def flows(self):
        return _frame(self.flows_source)

    def series_columns(self, names: tuple[str, ...]):
        """The time series' columns ``names`` as numpy arrays (None without them): only these
        are read or copied, as a fine-sampled run's series holds millions of rows."""
        import numpy as np

        src = self.timeseries_source
        if src is None:
            return None
        if isinstance(src, Path):
            if not src.is_file():
                return None
            import pandas as pd

            try:
                d = pd.read_csv(src, usecols=list(names))
            except pd.errors.EmptyDataError:
                return None
            except (pd.errors.ParserError, UnicodeDecodeError):
                read_csv(src)  # the one line that names the damaged file (ScenarioError)
                raise
            except ValueError:  # a column missing: recorded before ecnlab counted it
                return None
            return [d[n].to_numpy() for n in names]
        if not all(n in src for n in names) or not len(src[names[0]]):
            return None
        return [np.asarray(src[n], dtype=object if n == "port" else float) for n in names]

    @functools.cached_property
    def resolved(self) -> dict[str, Any]:
        """The scenario with the core's defaults (the profile's rto_min, PFC's queues, ...);
        the file as written where the core cannot resolve it (a partial document in a test)."""
        from . import _core

        try:
            return json.loads(_core.resolve_json(json.dumps(self.scenario)))
        except (ValueError, TypeError):
            return self.scenario

    @property
    def end_s(self) -> float:
        return float(self.summary.get("sim_time_s", 0.0))

    @property
    def window_s(self) -> float:
        return max(self.end_s - float(self.summary.get("measure_from_s", 0.0)), 0.0)

    def rto_s(self) -> float:
        """The senders' least retransmission timeout, in seconds: DCQCN's go-back-N timer under
        DCQCN, else ``transport.rto_min`` (0 when the scenario does not say)."""
        tr = self.resolved.get("transport", {})
        value = (tr.get("dcqcn") or {}).get("rto") if tr.get("cc") in LOSSLESS_CC else tr.get("rto_min")
        return _seconds(value)

    def port_rates(self) -> dict[str, float]:
        return {p["port"]: float(p["rate_bps"]) for p in self.summary.get("ports") or [] if p.get("rate_bps")}

    def lossless_queues(self) -> tuple[int, ...] | None:
        """The switch queues of a lossless class: those PFC pauses with ``switch.pfc`` on, every
        queue under a transport specified for a lossless fabric; None: no lossless class."""
        sw = self.resolved.get("switch", {})
        pfc = sw.get("pfc") or {}
        n = int(sw.get("queues", 1))
        if pfc.get("enabled"):
            return tuple(int(q) for q in (pfc.get("queues") or range(n)))
        if self.resolved.get("transport", {}).get("cc") in LOSSLESS_CC:
            return tuple(range(n))
        return None

    def queue_of_class(self, cls: int) -> int:
        """The switch queue of a flow class, as the port classifies it (``ecnlab_core::port``
        ``classify``: ``switch.dscp_to_queue``, else the DSCP itself capped at the last queue)."""
        sw = self.resolved.get("switch", {})
        table = sw.get("dscp_to_queue") or []
        if table:
            return int(table[cls & 63])
        return min(cls & 63, int(sw.get("queues", 1)) - 1)


def _frame(source: Any):
    import pandas as pd

    if source is None:
        return pd.DataFrame()
    if isinstance(source, Path):
        return read_csv(source)
    return pd.DataFrame(source)


def _seconds(value: Any) -> float:
    from . import _core

    if value is None:
        return 0.0
    try:
        return _core.parse_unit("time", str(value)) / 1e9
    except ValueError:
        return 0.0


# --------------------------------------------------------------------------------------
# The rules


class Rule:
    """One soundness rule: ``check(run)`` returns its flags (none: the run passes it)."""

    name: ClassVar[str]

    @property
    def phrase(self) -> str:
        """What the rule flags, in a few words with its threshold (REPRODUCTION.md, the pages)."""
        raise NotImplementedError

    def check(self, run: Run) -> list[Flag]:  # pragma: no cover - every rule overrides it
        raise NotImplementedError

    def flag(self, at: str, text: str, **numbers: Any) -> Flag:
        return Flag(self.name, at, text, numbers)


@dataclass(frozen=True)
class NicBound(Rule):
    """A sender bound by its own NIC: a host uplink that held a standing queue of at least
    ``standing_bytes`` on average over the window, without ``host.nic_marking``. A NIC that only
    serializes ACK-clocked windows holds a packet or two; ten full-size packets on average mean
    the NIC limits the flow, in an unmarked queue the scheme under study never sees
    (ecnsharp-sched's TCN baseline before ``host.nic_marking``: 273 KB on average, < 1 Gbps of
    9.6). With ``host.nic_marking`` the NIC applies the scenario's scheme, so a flow alone at a
    line-rate bottleneck queues, and is marked, there as at a switch: sound.

    Under segmentation offload (``host.tso``, on by default in the linux profile) TCP hands
    its NIC skbs of up to that size, which the NIC serializes back to back: one skb in the NIC
    is the sender working as designed, not a standing queue. The rule counts the standing
    queue beyond one skb (advise's 25 Gbps star with TSO at 64 KiB: 18-19 KB on average at
    the busiest senders, none dropped).

    With TCP Small Queues (``transport.small_queues``, linux profile) the NIC's queue is what a
    Linux sender's qdisc holds: each socket at most about a millisecond of its pacing rate
    (``tcp_small_queue_check``), so a flow alone at a line-rate NIC keeps up to that much
    there, as on a real host (advise's leaf-spine at 25 Gbps: 0.1-3.8 MB on average at the
    senders of large flows, none dropped). That is the host working as built, not a model's
    artefact, and the rule leaves it alone; drops at a NIC are still flagged (``nic_drops``)."""

    name: ClassVar[str] = "nic_bound"
    standing_bytes: int = 15_000

    @property
    def phrase(self) -> str:
        return (f"a sender bound by its own NIC (a standing queue of {self.standing_bytes / 1e3:g} KB or more, "
                "beyond one segmentation-offload skb)")

    @staticmethod
    def small_queues(run: Run) -> bool:
        """The senders are linux hosts whose TCP Small Queues bound what each socket leaves in
        its NIC (DCQCN's RDMA NICs hold a packet per queue pair and are judged as before)."""
        t = run.resolved.get("transport", {})
        return t.get("profile") == "linux" and t.get("small_queues") is True and t.get("cc") not in LOSSLESS_CC

    @staticmethod
    def skb_bytes(run: Run) -> int:
        """The largest skb a sender hands its NIC (``host.tso`` as resolved; 0 without TSO)."""
        from . import _core

        tso = run.resolved.get("host", {}).get("tso")
        if tso in (None, False, "off"):
            return 0
        try:
            return _core.parse_unit("size", str(tso))
        except ValueError:
            return 0

    def check(self, run: Run) -> list[Flag]:
        if run.resolved.get("host", {}).get("nic_marking", False) or self.small_queues(run):
            return []
        limit = self.standing_bytes + self.skb_bytes(run)
        return [self.flag(f"NIC {n['port']}", f"NIC-bound: {n['port']} held {n['avg_qlen_bytes'] / 1e3:.1f} KB on "
                          f"average (max {n['max_qlen_bytes'] / 1e3:.0f} KB), at least {limit / 1e3:g} KB: "
                          "its flows queue in the sender's unmarked NIC, not at the switch",
                          avg_qlen_bytes=n["avg_qlen_bytes"], max_qlen_bytes=n["max_qlen_bytes"], limit_bytes=limit)
                for n in run.summary.get("nics") or [] if n["avg_qlen_bytes"] >= limit]


@dataclass(frozen=True)
class NicDrops(Rule):
    """Drops at a host NIC: a sender lost packets in its own uplink queue, before any switch.
    Real senders do not (Linux's TCP small queues and BQL hold the socket back); the loss and
    its recovery are outside the switch under study (issue 31: 97 % of advise's validation
    drops were in the senders' 4 MB NIC queues). Any drop counts: none is the sender's due."""

    name: ClassVar[str] = "nic_drops"

    @property
    def phrase(self) -> str:
        return "drops at a host NIC"

    def check(self, run: Run) -> list[Flag]:
        return [self.flag(f"NIC {n['port']}", f"drops at a host NIC: {n['port']} dropped {n['drops']} packets in the "
                          f"window (average queue {n['avg_qlen_bytes'] / 1e3:.1f} KB, max "
                          f"{n['max_qlen_bytes'] / 1e3:.0f} KB)", drops=n["drops"], max_qlen_bytes=n["max_qlen_bytes"])
                for n in run.summary.get("nics") or [] if n["drops"] > 0]


@dataclass(frozen=True)
class CutByDuration(Rule):
    """Flows cut by the duration: flows with a size that started in the measurement window
    and did not finish (``summary.json`` ``flows.unfinished``). FCT statistics then leave out
    the slowest flows, and the scheme that leaves more of them unfinished looks faster; any
    one is a bias."""

    name: ClassVar[str] = "cut_by_duration"

    @property
    def phrase(self) -> str:
        return "flows cut by the run's duration"

    def check(self, run: Run) -> list[Flag]:
        f = run.summary.get("flows", {})
        n = int(f.get("unfinished", 0) or 0)
        if not n:
            return []
        return [self.flag("flows", f"cut by duration: {n} flows unfinished at {run.end_s:g} s "
                          f"({f.get('completed', 0)} completed)", unfinished=n, completed=f.get("completed", 0))]


@dataclass(frozen=True)
class RtoStall(Rule):
    """RTO storms, judged per flow: a flow stalled by retransmission timeouts for more than
    ``fraction`` of its life (timeouts x the least RTO, a lower bound: no backoff counted;
    life: start to finish, or to the run's end). From a tenth of its life stalled on, the flow's
    goodput and FCT measure loss recovery, not marking; pooled over all flows such a flow
    hides (dualq-nflows: the lone Reno flow's 1,065 timeouts x 200 ms are 35 % of its 600 s,
    5.9 % of all flows' time). Judged on the flows that live at least ``1 / fraction`` RTOs,
    the shortest life in which one timeout does not pass the bound by itself: for a shorter
    flow a single timeout is a tail event, which FCT percentiles and the papers measure
    (TCN §6.2: per-queue ECN's 589 small-flow timeouts at 90 % load), not a storm."""

    name: ClassVar[str] = "rto_stall"
    fraction: float = 0.10

    @property
    def phrase(self) -> str:
        return f"a flow stalled by timeouts for more than {self.fraction:.0%} of its life"

    def check(self, run: Run) -> list[Flag]:
        import pandas as pd

        rto = run.rto_s()
        f = run.flows
        if rto <= 0 or not len(f) or "timeouts" not in f or not int(run.summary.get("flows", {}).get("timeouts", 0)):
            return []
        f = f[f["start_s"].astype(float) < run.end_s]
        life = (f["finish_s"].astype(float).fillna(run.end_s) - f["start_s"].astype(float)).clip(lower=0)
        judged = life >= rto / self.fraction
        stalled_share = f["timeouts"].fillna(0).astype(float) * rto / life.where(life > 0)
        hit = judged & (stalled_share > self.fraction)
        if not hit.any():
            return []
        worst = stalled_share[hit].idxmax()
        w = f.loc[worst]
        what = "long-lived" if pd.isna(w.get("size")) else f"{float(w['size']) / 1e3:.0f} KB"
        return [self.flag("flows", f"RTO stall: {int(hit.sum())} of {int(judged.sum())} flows living >= "
                          f"{rto / self.fraction * 1e3:g} ms were stalled by timeouts for more than "
                          f"{self.fraction:.0%} of their life; worst: flow {int(w['id'])} (h{int(w['src'])}->h"
                          f"{int(w['dst'])}, {what}), {int(w['timeouts'])} timeouts x {rto * 1e3:g} ms = "
                          f"{stalled_share[worst]:.0%} of its {life[worst]:.3g} s",
                          flows_stalled=int(hit.sum()), flows_judged=int(judged.sum()), worst_flow=int(w["id"]),
                          worst_timeouts=int(w["timeouts"]), worst_share=float(stalled_share[worst]),
                          worst_life_s=float(life[worst]), rto_s=rto)]


_WEIGHTED = ("wfq", "dwrr", "wrr", "sp_wfq", "sp_dwrr")


@dataclass(frozen=True)
class SchedulerShare(Rule):
    """A weighted queue below its due: at a switch port with a weighted scheduler (WFQ, DWRR,
    WRR, or their SP variants), a weighted queue got less than ``1 - tolerance`` of what the
    scheduler owes it while backlogged. WFQ and DWRR owe a backlogged queue at least its
    weight's share (among the weighted queues carrying traffic at the port) of what the
    strict queues leave: per sample period, ``share x (rate x busy - strict goodput)``, with
    ``busy`` the share of the period the queue held a packet (``busy_fraction``). Summed over
    the run that is a lower bound on its service whatever the other queues do, so bursty
    traffic is judged as fairly as long-lived flows. The tolerance covers goodput's payload
    accounting (97 % of a full-size packet); a queue backlogged for under ``min_samples``
    periods is not judged. The scheduler is the fixed point of every per-queue comparison: if
    marking undoes it (tcn-static's ideal ECN/RED before the oracle fix: 97 vs 376 Mbps for
    equal weights), the run no longer tests marking over that scheduler. PFC fabrics are not
    judged (a paused queue is backlogged and owed nothing), nor runs without busy time."""

    name: ClassVar[str] = "scheduler_share"
    tolerance: float = 0.10
    min_samples: int = 10

    @property
    def phrase(self) -> str:
        return f"a weighted queue served more than {self.tolerance:.0%} below what its scheduler owes it while backlogged"

    def check(self, run: Run) -> list[Flag]:
        import numpy as np

        sw = run.resolved.get("switch", {})
        sch = sw.get("scheduler", {}) or {}
        kind = sch.get("kind", "sp")
        if kind not in _WEIGHTED or (sw.get("pfc") or {}).get("enabled", False):
            return []
        cols = run.series_columns(("t_s", "port", "queue", "goodput_bps", "busy_fraction"))
        if cols is None:
            return []
        t_all, port_all, q_all, g_all, b_all = cols
        n_queues = int(sw.get("queues", 1))
        strict = int(sch.get("strict", 0)) if kind.startswith("sp_") else 0
        weights = [float(w) for w in (sch.get("weights") or [])]
        weights += [1.0] * (n_queues - strict - len(weights))
        rates = run.port_rates()
        out = []
        for port in np.unique(port_all):
            rate = rates.get(str(port))
            m = port_all == port
            t, q, g, b = t_all[m], q_all[m], g_all[m], b_all[m]
            used = [int(x) for x in np.unique(q[q >= strict]) if g[q == x].sum() > 0]
            if not rate or len(used) < 2:
                continue
            times = np.unique(t)
            dt = np.diff(times, prepend=times[0] - (times[1] - times[0] if len(times) > 1 else times[0]))
            row = np.searchsorted(times, t)  # each sample's period (the one before its time)
            strict_bps = np.zeros(len(times))
            np.add.at(strict_bps, row[q < strict], g[q < strict])
            total_w = sum(weights[x - strict] for x in used)
            for x in used:
                good, busy = np.zeros(len(times)), np.zeros(len(times))
                sel = q == x
                np.add.at(good, row[sel], g[sel])
                np.add.at(busy, row[sel], np.nan_to_num(b[sel]))
                busy *= dt
                if busy.sum() < self.min_samples * float(np.median(dt)):
                    continue
                share = weights[x - strict] / total_w
                owed = float((share * np.clip(rate * busy - strict_bps * dt, 0, None)).sum())
                got = float((good * dt).sum())
                if got < (1 - self.tolerance) * owed:
                    bs = float(busy.sum())
                    out.append(self.flag(
                        f"queue {port}:{x}", f"a weighted queue below its due: at {port} queue {x} got "
                        f"{got / bs / 1e6:.4g} Mbps while backlogged ({bs * 1e3:.0f} ms), owed at least "
                        f"{owed / bs / 1e6:.4g} Mbps ({share:.1%} of what the strict queues left of {rate / 1e9:g} Gbps)",
                        got_bps=got / bs, owed_bps=owed / bs, backlogged_s=bs, share=share))
        return out


@dataclass(frozen=True)
class LosslessDrops(Rule):
    """Drops in a lossless class: a queue that PFC pauses (``switch.pfc.queues``), or any
    queue under a transport specified for a lossless fabric (DCQCN: RoCEv2 over PFC, DCQCN
    paper §2), dropped packets. DCQCN's rate ignores loss and recovers by go-back-N, so its
    FCTs then measure loss recovery (before ecnlab had PFC, one paper-scale run dropped 2.13 G
    of 4.92 G packet-hops); with PFC a drop means the buffer the XOFF threshold leaves free did
    not hold what was in flight. Any drop counts: the papers' lossless runs have none."""

    name: ClassVar[str] = "lossless_drops"

    @property
    def phrase(self) -> str:
        return "drops in a lossless class"

    def check(self, run: Run) -> list[Flag]:
        lossless = run.lossless_queues()
        if lossless is None:
            return []
        pfc = bool((run.resolved.get("switch", {}).get("pfc") or {}).get("enabled"))
        why = "despite PFC (the buffer it leaves free overflowed)" if pfc else "with PFC off (switch.pfc.enabled)"
        return [self.flag(f"queue {q['port']}:{q['queue']}", f"drops in a lossless class: {q['port']} queue "
                          f"{q['queue']} dropped {q['drops']} packets {why}", drops=q["drops"])
                for q in run.summary.get("queues") or [] if q["drops"] and int(q["queue"]) in lossless]


@dataclass(frozen=True)
class LosslessTimeouts(Rule):
    """Spurious timeouts in a lossless class: the flows of a lossless class timed out at
    least once per ``per_flow`` flows while the class dropped nothing, so every timeout fired
    on a packet still queued or paused (DCQCN at 60-90 % load: 750-860 per 20,000-flow run,
    with no drop). Each stalls its flow for an RTO (DCQCN's go-back-N: 5 ms, against FCTs of
    0.1-10 ms) and resends its window; from one flow in a hundred on, the 99th-percentile FCT
    the claims read is made of them."""

    name: ClassVar[str] = "lossless_timeouts"
    per_flow: float = 0.01

    @property
    def phrase(self) -> str:
        return f"spurious timeouts in a lossless class (one per {1 / self.per_flow:.0f} flows or more)"

    def check(self, run: Run) -> list[Flag]:
        lossless = run.lossless_queues()
        f = run.flows
        if lossless is None or not len(f) or "timeouts" not in f:
            return []
        f = f[f["size"].notna() & (f["start_s"].astype(float) < run.end_s)]
        mine = f[f["class"].map(lambda c: run.queue_of_class(int(c)) in lossless).astype(bool)]
        n = int(mine["timeouts"].fillna(0).sum())
        if not len(mine) or n < self.per_flow * len(mine):
            return []
        drops = sum(int(q["drops"]) for q in run.summary.get("queues") or [] if int(q["queue"]) in lossless)
        kind = "spurious (the class dropped nothing)" if drops == 0 else f"with {drops} drops in the class"
        return [self.flag("flows", f"spurious timeouts in a lossless class: {n} timeouts over {len(mine)} flows "
                          f"({n / len(mine):.1%}, at least {self.per_flow:.0%}), {kind}",
                          timeouts=n, flows=len(mine), drops=drops)]


@dataclass(frozen=True)
class LosslessDeepQueue(Rule):
    """Deep queues in a lossless class: a lossless queue whose peak held at least
    ``rto_share`` of the senders' least RTO of delay at its port's rate. PFC keeps a lossless
    fabric from dropping by pausing, so its queues can grow past what marking would allow; a
    packet that waits half the retransmission timer at one hop fires it with the next one on
    its path, with nothing lost (DCQCN's 6 MB at 10 Gbps: 4.8 ms against its 5 ms timer)."""

    name: ClassVar[str] = "lossless_deep_queue"
    rto_share: float = 0.5

    @property
    def phrase(self) -> str:
        return f"a lossless queue holding {self.rto_share:g} of the senders' RTO or more"

    def check(self, run: Run) -> list[Flag]:
        lossless, rto = run.lossless_queues(), run.rto_s()
        if lossless is None or rto <= 0:
            return []
        rates, out = run.port_rates(), []
        for q in run.summary.get("queues") or []:
            rate = rates.get(q["port"])
            if int(q["queue"]) not in lossless or not rate:
                continue
            delay = q["max_qlen_bytes"] * 8 / rate
            if delay >= self.rto_share * rto:
                out.append(self.flag(f"queue {q['port']}:{q['queue']}", f"a deep queue in a lossless class: "
                                     f"{q['port']} queue {q['queue']} peaked at {q['max_qlen_bytes'] / 1e6:.2f} MB, "
                                     f"{delay * 1e3:.2f} ms at {rate / 1e9:g} Gbps, at least {self.rto_share:g} of the "
                                     f"{rto * 1e3:g} ms RTO", max_qlen_bytes=q["max_qlen_bytes"], delay_s=delay,
                                     rto_s=rto))
        return out


def _poisson_load(run: Run) -> tuple[float, list[int]] | None:
    """The total stated load of a run whose traffic is Poisson entries alone, all between the
    same hosts (the load of one edge), and their indexes; None for any other traffic."""
    doc = run.resolved
    traffic = doc.get("traffic") or []
    if not traffic or doc.get("flows") or any(t.get("kind") != "poisson" for t in traffic):
        return None
    ends = {(tuple(t.get("senders") or ()), tuple(t.get("receivers") or ()), t.get("pattern")) for t in traffic}
    if len(ends) != 1:
        return None
    return sum(float(t["load"]) for t in traffic), list(range(len(traffic)))


@dataclass(frozen=True)
class LightLoadLoss(Rule):
    """A drop rate far from what the set-up should give: at a stated load of at most
    ``light_load``, the switches' overflow drops (no room in the buffer, the queue's limit or
    its pool; an AQM's drops of non-ECT packets are its signal and do not count) exceed
    ``rate`` of the packets the hosts sent. The papers' baselines lose at high load (TCN
    §6.1.2: "when networks run at high loads, per-queue ECN with standard threshold suffers
    from frequent packet drops"); at light load a run that loses one packet in a thousand
    loses for a reason of its own set-up (a priority level that fills, a buffer split into
    limits), not the congestion the comparison is about. The bound is ten times what the
    catalog's light-load Tail and ECN# runs lose on the ECN# leaf-spine (1.7e-4 and 2.7e-4 at
    10 %); PIAS's baseline there loses 4.4e-3, all in its lowest priority."""

    name: ClassVar[str] = "light_load_loss"
    light_load: float = 0.3
    rate: float = 1e-3

    @property
    def phrase(self) -> str:
        return f"more than {self.rate:g} of the packets dropped for want of room at {self.light_load:.0%} load or less"

    def check(self, run: Run) -> list[Flag]:
        got = _poisson_load(run)
        sent = int((run.summary.get("counting") or {}).get("sent", 0))
        if got is None or got[0] > self.light_load or not sent:
            return []
        reasons = run.summary.get("drops_by_reason") or {}
        nic = sum(int(n["drops"]) for n in run.summary.get("nics") or [])
        drops = sum(int(reasons.get(r, 0)) for r in OVERFLOW_REASONS) - nic
        if drops <= self.rate * sent:
            return []
        return [self.flag("run", f"a drop rate far from the set-up's: at {got[0]:.0%} load the switches dropped "
                          f"{drops} packets for want of room, {drops / sent:.2e} of the {sent} sent (light load, at "
                          f"most {self.light_load:.0%}: at most {self.rate:g})", load=got[0], drops=drops, sent=sent)]


@dataclass(frozen=True)
class LoadFarFromStated(Rule):
    """A utilization far from what the set-up should give: the receivers' links carried, over
    the span of the flows' arrivals, a load more than ``step`` away from the stated one (the
    load counts payload over the limiting edge, ecnlab_sim::workload; measured: the receiving
    ports' utilization over the window, scaled to the arrivals' span and to payload by the
    MSS's share of a packet). A step is that of the papers' load axes (10 % to 90 % by 10 %):
    off by more, the run sits at another point of the figure than the one it is read at (a
    few heavy-tailed flows draw more or less than the load, a stalled fabric carries less).
    Judged where the receivers' links limit (their capacity at most the senders'), on traffic
    of Poisson entries alone."""

    name: ClassVar[str] = "load_far_from_stated"
    step: float = 0.10

    @property
    def phrase(self) -> str:
        return f"the receivers' links carrying a load more than {self.step:.0%} from the stated one"

    def check(self, run: Run) -> list[Flag]:
        got = _poisson_load(run)
        f = run.flows
        if got is None or not len(f) or run.window_s <= 0:
            return []
        load, entries = got
        t = run.resolved["traffic"][0]
        by_host: dict[int, dict[str, float]] = {}
        for p in run.summary.get("ports") or []:
            if m := _HOST_PORT.search(p["port"]):  # a host's cables summed (a file may lay two to one host)
                h = by_host.setdefault(int(m.group(1)), {"rate_bps": 0.0, "carried_bps": 0.0})
                h["rate_bps"] += float(p["rate_bps"])
                h["carried_bps"] += float(p["utilization"]) * float(p["rate_bps"])
        receivers = [h for h in (t.get("receivers") or by_host) if h in by_host]
        senders = [h for h in (t.get("senders") or by_host) if h in by_host]
        cap_r = sum(float(by_host[h]["rate_bps"]) for h in receivers)
        cap_s = sum(float(by_host[h]["rate_bps"]) for h in senders)
        if not receivers or cap_r > cap_s:
            return []
        starts = f[f["spec"].isin(entries)]["start_s"].astype(float)
        lo, hi = max(float(run.summary.get("measure_from_s", 0.0)), float(starts.min())), min(run.end_s, float(starts.max()))
        if hi <= lo:
            return []
        mss = float(run.resolved.get("transport", {}).get("mss", 1460))
        carried = sum(by_host[h]["carried_bps"] for h in receivers) / cap_r
        measured = carried * run.window_s / (hi - lo) * mss / (mss + 40)
        if abs(measured - load) <= self.step:
            return []
        return [self.flag("run", f"a utilization far from the set-up's: the receivers' links carried {measured:.0%} "
                          f"of their capacity in payload over the arrivals' {hi - lo:.3g} s (utilization {carried:.3f} "
                          f"over the {run.window_s:.3g} s window), the set-up states {load:.0%} (more than "
                          f"{self.step:.0%} off)", stated=load, measured=measured, utilization=carried,
                          span_s=hi - lo)]


RULES: tuple[Rule, ...] = (NicBound(), NicDrops(), CutByDuration(), RtoStall(), SchedulerShare(), LosslessDrops(),
                           LosslessTimeouts(), LosslessDeepQueue(), LightLoadLoss(), LoadFarFromStated())
RULE_NAMES = tuple(r.name for r in RULES)


def described(skip: Iterable[str] = ()) -> str:
    """The rules in words, joined: "a sender bound by its own NIC (...), drops at a host NIC, ..."."""
    return ", ".join(r.phrase for r in RULES if r.name not in set(skip))


def assess(run: Run, rules: Iterable[Rule] = RULES, skip: Iterable[str] = ()) -> Soundness:
    """Every rule's flags on ``run`` (but those of ``skip``, by name)."""
    skip = set(skip)
    unknown = skip - set(RULE_NAMES)
    if unknown:
        raise ValueError(f"no soundness rule {sorted(unknown)[0]!r}; the rules: {', '.join(RULE_NAMES)}")
    chosen = [r for r in rules if r.name not in skip]
    return Soundness([f for r in chosen for f in r.check(run)], tuple(r.name for r in chosen))
