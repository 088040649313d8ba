"""The operator's network as ``advise`` simulates it: a scenario, from ``--scenario FILE``
(any topology the core runs: star, dumbbell, leaf-spine) or built from the flags (a star of
``--senders`` hosts sending to one receiver), with the flags overriding what they name. The
core checks it (``_core.validate_json``); its one-line error is shown with the flag (or the
file) that put the value there. What advise needs to know of it (queues, strict and weighted
ones, weights, which queues carry ECN, the DSCP map, the port rate and RTTs the papers'
rules take, the buffer) is read back from the scenario as the core resolves it
(``_core.resolve_json``), so units and defaults exist once, in Rust.

Sound by construction: a validation run must exercise the switch, not the senders' own NICs
(issue 31: 97 % of the drops of the old check were at the senders' 4 MB NIC queues, which no
Linux sender overflows: ``tcp_small_queue_check()`` and BQL hold the socket back). Where the
core models that (the ``linux`` host profile with TCP small queues), advise relies on it;
otherwise it sets ``host.nic_marking`` (the NIC applies the switch's scheme, so a flow alone
at a line-rate bottleneck is marked where it queues). Which one is in ``Network.host_nics``;
the soundness guard checks every run after the fact either way."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

from .. import _core
from ..inputs import ScenarioError
from .options import Inputs
from . import words
from .rtt import RttProfile, from_points

ROUND_ROBIN = {"dwrr", "wrr", "sp_dwrr"}
DEFAULT_SENDERS = 8
PROBE_INTERVAL = "100us"  # a ping every 100 us in the unclassified queue: the RTT a ping sees


@dataclass
class Network:
    """The scenario to validate on and what advise reads of it."""

    doc: dict[str, Any]  # the scenario (marking set per candidate by the validation)
    source: str  # where it came from, in words
    queues: int
    scheduler: str
    strict: tuple[int, ...]
    weights: dict[int, int]  # weighted queue -> weight
    ecn_queues: tuple[int, ...]
    dscp_to_queue: list[int]  # 64 entries, index = DSCP
    default_queue: int  # where unclassified traffic goes
    rate_bps: int  # the rate of the ports the thresholds are for
    rtt: RttProfile
    buffer_bytes: int
    ports: tuple[str, ...]
    host_nics: str
    blame: dict[str, str]  # scenario field -> the flag that set it
    notes: list[str] = field(default_factory=list)
    probes: str = ""  # the probes in words ("" none)
    beyond_exact: str | None = None  # why its runs are estimated (ecnlab.estimate.beyond_exact); None: exact

    @property
    def weighted(self) -> tuple[int, ...]:
        return tuple(sorted(self.weights))

    def describe(self) -> dict[str, Any]:
        return {"source": self.source, "topology": self.doc["topology"]["kind"], "queues": self.queues,
                "scheduler": self.scheduler, "strict_queues": list(self.strict),
                "weights": {str(q): w for q, w in sorted(self.weights.items())},
                "ecn_queues": list(self.ecn_queues), "dscp_to_queue": self.dscp_to_queue,
                "unclassified_queue": self.default_queue, "port_rate_bps": self.rate_bps,
                "buffer_bytes": self.buffer_bytes, "ports": list(self.ports), "host_nics": self.host_nics,
                "probes": self.probes, "notes": self.notes}


def _error(e: Exception, blame: dict[str, str], where: str) -> ScenarioError:
    """The core's refusal, led by the flag that set the field (or the file)."""
    msg = str(e)
    path = msg.split(": ", 1)[0]
    hits = [f for k, f in blame.items() if path == k or path.startswith((k + ".", k + "["))]
    if hits:
        return ScenarioError(f"{max(hits, key=len)}: {msg}")
    return ScenarioError(f"{where}: {msg}")


def resolve(doc: dict[str, Any], blame: dict[str, str], where: str) -> dict[str, Any]:
    """The scenario as the core resolves it (every default filled in), or its one line."""
    try:
        _core.validate_json(json.dumps(doc))
        return json.loads(_core.resolve_json(json.dumps(doc)))
    except ValueError as e:
        raise _error(e, blame, where) from None


def _star(inp: Inputs) -> dict[str, Any]:
    """The star advise builds from the flags (the rest comes from the overrides)."""
    senders = inp.senders or DEFAULT_SENDERS
    base = inp.rtt.min_us
    return {"name": "advise", "duration": "30s", "seed": 1,
            "topology": {"kind": "star", "hosts": senders + 1, "link_rate": inp.link_rate,
                         "link_delay": f"{base / 4 * 1000:.0f}ns"},
            "switch": {"queues": 8, "scheduler": {"kind": "sp_dwrr", "quantum": "1.5KB", "strict": 1}},
            "marking": {"scheme": "none"},
            # 5 ms: the papers' datacenter RTO (TCN §6, ECN# §5); Linux's own minimum is 200 ms.
            "transport": {"profile": "linux", "cc": "dctcp", "rto_min": "5ms", "rto_init": "5ms"},
            "host": {"persistent_connections": True},
            "metrics": {"sample_interval": "1ms"}}


def base_rtt_us(resolved: dict[str, Any]) -> tuple[float, str]:
    """The propagation RTT of the scenario's longest host-to-host path, in us (the rules'
    RTT floor), and which path that is: the core's, on the routes the simulator takes, for
    every topology it runs (``_core.longest_rtt_us``)."""
    rtt, src, dst, _ = _core.longest_rtt_us(json.dumps(resolved))
    return rtt, f"{src} to {dst} and back"


def _delay_points(delay: dict[str, Any]) -> list[tuple[float, float]]:
    """An rtt_variation distribution as (extra us, cumulative probability) points."""
    us = lambda v: _core.parse_unit("time", str(v)) / 1e3  # noqa: E731
    kind = delay["dist"]
    if kind == "fixed":
        return [(us(delay["value"]), 0.0), (us(delay["value"]), 1.0)]
    if kind == "uniform":
        return [(us(delay["min"]), 0.0), (us(delay["max"]), 1.0)]
    if kind == "choice":
        v = sorted(us(x) for x in delay["values"])
        return [(v[0], 0.0)] + [(x, (i + 1) / len(v)) for i, x in enumerate(v)]
    return [(us(d), float(q)) for d, q in delay["points"]]


def scenario_rtt(resolved: dict[str, Any], source: str) -> RttProfile:
    """The RTTs a scenario's flows see: its propagation RTT plus its rtt_variation."""
    base, path = base_rtt_us(resolved)
    var = resolved.get("rtt_variation")
    pts = _delay_points(var["delay"]) if var else [(0.0, 0.0), (0.0, 1.0)]
    return from_points([(base + d, q) for d, q in pts],
                       f"{source}: propagation {base:.3g} us ({path}) + rtt_variation")


def _variation(rtt: RttProfile, base_us: float, notes: list[str]) -> dict[str, Any]:
    """``rtt_variation`` that makes the scenario's RTTs ``rtt``: the extra delay over its
    propagation RTT (``base_us``), per flow."""
    pts = rtt.points or [(rtt.min_us, 0.0), (rtt.p99_us, 1.0)]
    if pts[0][0] < base_us - 1e-9:
        notes.append(f"RTTs below the scenario's propagation RTT ({base_us:.3g} us) are raised to it "
                     f"(the RTT input's minimum is {pts[0][0]:.3g} us)")
    extra = [[f"{max(r - base_us, 0.0) * 1000:.0f}ns", q] for r, q in pts]
    extra[0][1] = 0.0
    extra[-1][1] = 1.0
    return {"mode": "per_flow", "delay": {"dist": "empirical", "points": extra}}


def _overrides(inp: Inputs, doc: dict[str, Any], blame: dict[str, str]) -> None:
    """The flags, applied to the scenario document (``blame``: field -> flag)."""
    def put(path: str, value: Any, flag: str) -> None:
        node = doc
        parts = path.split(".")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = value
        blame[path] = flag

    g = inp.given
    if inp.link_rate is not None:
        put("topology.link_rate", inp.link_rate, f"--link-rate {g.get('link_rate', inp.link_rate)}")
    if inp.senders is not None:
        if doc["topology"].get("kind") != "star":
            raise ScenarioError(f"--senders: the scenario's topology is a {doc['topology'].get('kind')}, not a star")
        put("topology.hosts", inp.senders + 1, f"--senders {inp.senders}")
    for name, path in (("queues", "switch.queues"), ("buffer", "switch.buffer"), ("strict", "switch.scheduler.strict"),
                       ("scheduler", "switch.scheduler.kind"), ("transport", "transport.cc")):
        v = getattr(inp, name)
        if v is not None:
            put(path, v, f"--{name} {g.get(name, v)}")
    if inp.weights is not None:
        put("switch.scheduler.weights", list(inp.weights), f"--weights {g.get('weights', '')}")


def _dscp_map(inp: Inputs, resolved: dict[str, Any], weighted: list[int], strict: list[int],
              notes: list[str]) -> tuple[list[int], int]:
    """The full DSCP -> queue map (64 entries) and the unclassified queue."""
    n = int(resolved["switch"]["queues"])
    first_weighted = weighted[0] if weighted else n - 1
    if inp.dscp_map is not None:
        bad = next(((d, q) for d, q in inp.dscp_map.items() if q >= n), None)
        if bad:
            raise ScenarioError(f"--dscp-map: DSCP {bad[0]} to queue {bad[1]}, but the switch has {n} queues (0-{n - 1})")
        # Unlisted DSCPs are unclassified traffic: DSCP 0's queue (best effort) if that is a
        # weighted one, else the first weighted queue.
        zero = inp.dscp_map.get(0)
        default = zero if zero is not None and zero not in strict else first_weighted
        return [inp.dscp_map.get(d, default) for d in range(64)], default
    given = [int(q) for q in resolved["switch"]["dscp_to_queue"]]
    if given:
        full = given + [min(d, n - 1) for d in range(len(given), 64)]
    elif inp.scenario is None:
        # advise's own star: DSCP q to queue q for the other queues, DSCP 0 (unclassified)
        # and the rest to the first weighted queue, never to a strict one by default.
        full = [d if 0 < d < n and d not in strict else first_weighted for d in range(64)]
    else:
        full = [min(d, n - 1) for d in range(64)]  # the core's default map
    default = full[0] if full[0] not in strict else first_weighted
    if full[0] in strict:
        notes.append(f"DSCP 0 (unclassified traffic) goes to strict queue {full[0]} in the scenario's map; "
                     f"give --dscp-map to send it to a weighted queue")
    return full, default


def _traffic(inp: Inputs, doc: dict[str, Any], net_classes: list[int], blame: dict[str, str]) -> None:
    """``--traffic`` (or ``--workload``/``--load`` for the flags' star) as ``[[traffic]]``,
    between the endpoints of the scenario's first traffic entry (a star: senders -> host 0)."""
    first = next((t for t in doc.get("traffic", []) if t.get("kind", "poisson") == "poisson"), None)
    ends = ({k: first[k] for k in ("senders", "receivers", "pattern") if k in first} if first else
            {"senders": list(range(1, doc["topology"]["hosts"])), "receivers": [0]}
            if doc["topology"]["kind"] == "star" else {})
    if inp.traffic is not None:
        entries = [(t.workload, t.load, [t.dscp], f"--traffic {t.text()}") for t in inp.traffic]
    elif inp.scenario is None:
        entries = [(inp.workload, inp.load, net_classes, f"--workload {inp.workload} / --load {inp.load}")]
    else:
        return
    doc["traffic"] = [{"kind": "poisson", "cdf": w, "load": _load_value(load), "flows": 1, "classes": cls, **ends}
                      for w, load, cls, _ in entries]
    for i, (*_, flag) in enumerate(entries):
        blame[f"traffic[{i}]"] = flag


def _load_value(text: str) -> Any:
    """A load as the scenario takes it: a number, or a string with its unit (``60%``)."""
    try:
        return float(text)
    except ValueError:
        return text


def scale_flows(doc: dict[str, Any], total: int) -> None:
    """Give the Poisson traffic ``total`` flows per run, shared in proportion to each entry's
    load (an incast's queries and a trace's rows are the scenario's own)."""
    poisson = [t for t in doc.get("traffic", []) if t.get("kind", "poisson") == "poisson"]
    if not poisson:
        return
    resolved = json.loads(_core.resolve_json(json.dumps(doc)))["traffic"]
    loads = [float(r["load"]) for r, t in zip(resolved, doc["traffic"]) if t.get("kind", "poisson") == "poisson"]
    s = sum(loads) or 1.0
    for t, load in zip(poisson, loads):
        t["flows"] = max(1, round(total * load / s))


def _queues(resolved: dict[str, Any]) -> tuple[str, list[int], dict[int, int]]:
    sw = resolved["switch"]
    n = int(sw["queues"])
    kind = sw["scheduler"]["kind"]
    nstrict = n if kind == "sp" else int(sw["scheduler"]["strict"]) if kind.startswith("sp_") else 0
    strict = list(range(min(nstrict, n)))
    w = [int(x) for x in sw["scheduler"]["weights"]]
    weighted = list(range(len(strict), n))
    return kind, strict, {q: (w[i] if i < len(w) else 1) for i, q in enumerate(weighted)}


def _host_nics(doc: dict[str, Any], resolved: dict[str, Any]) -> str:
    """Keep the senders' NICs from dropping (module doc); returns what was done, in words."""
    t = resolved["transport"]
    if t["cc"] == "dcqcn":
        return "DCQCN hosts are RDMA NICs: a queue pair hands the NIC one packet at a time (no NIC queue builds)"
    if t["profile"] == "linux" and t.get("small_queues") is True:
        lob = words.size(_core.parse_unit("size", str(t["limit_output_bytes"])))
        said = (f"TCP small queues (transport.small_queues, linux profile): a sender holds a socket back once "
                f"{lob} of it wait below TCP, instead of queueing in (and dropping at) its own NIC")
        if "nic_buffer" in doc.get("host", {}):
            return said
        # TSQ bounds each socket, not the host: the linux profile's NIC queue holds what a
        # Linux host's default qdisc does (host.nic_buffer's default, fq_codel's memory_limit).
        nic = words.size(_core.parse_unit("size", str(resolved["host"]["nic_buffer"])))
        return (f"{said}; the NIC queue holds what a Linux host's default qdisc does (fq_codel's memory_limit, "
                f"{nic}: host.nic_buffer's linux default), since TCP small queues bound each socket, not the host")
    if resolved["host"]["nic_marking"]:
        return "host.nic_marking (the scenario's): the NICs mark with the switch's scheme"
    doc.setdefault("host", {})["nic_marking"] = True
    return ("host.nic_marking: the senders' NICs mark with the switch's scheme (this core has no TCP small "
            "queues), so a sender alone at a line-rate bottleneck is marked where it queues; the guard checks "
            "every run for drops at a NIC")


def _sending(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc``, or, if it sends nothing yet (the flags' star before its traffic, which is
    built from the switch's resolved queues), a copy with one probe, which the core requires."""
    if doc.get("traffic") or doc.get("flows") or doc.get("probes"):
        return doc
    return {**doc, "probes": [{"src": 1, "dst": 0, "interval": PROBE_INTERVAL}]}


def build(inp: Inputs) -> Network:
    """The operator's network, checked by the core (ScenarioError: one line)."""
    notes: list[str] = []
    blame: dict[str, str] = {}
    if inp.scenario is not None:
        from ..api import resolve as _load

        doc = copy.deepcopy(_load(inp.scenario))
        where = str(inp.scenario)
        source = f"--scenario {inp.scenario}"
    else:
        doc, where = _star(inp), "the scenario built from the flags"
        source = "the flags: a star, every sender to host 0"
    _overrides(inp, doc, blame)
    resolved = resolve(_sending(doc), blame, where)
    kind, strict, weights = _queues(resolved)
    if inp.weights is not None and len(inp.weights) != len(weights):
        given = inp.given.get("weights", ",".join(map(str, inp.weights)))
        raise ScenarioError(f"--weights {given}: {len(inp.weights)} weights, but the {kind} scheduler of {where} has "
                            + (f"{len(weights)} weighted queues ({words.queues(tuple(weights))})" if weights
                               else f"no weighted queue (all {len(strict)} strict)"))
    if inp.rtt is not None and inp.scenario is not None:
        doc["rtt_variation"] = _variation(inp.rtt, base_rtt_us(resolved)[0], notes)
        blame["rtt_variation"] = "--rtt" if inp.rtt.samples is None else "--rtt-file"
    elif inp.rtt is not None:
        doc["rtt_variation"] = _variation(inp.rtt, inp.rtt.min_us, notes)
        blame["rtt_variation"] = "--rtt" if inp.rtt.samples is None else "--rtt-file"
    dscp, default_q = _dscp_map(inp, resolved, list(weights), strict, notes)
    if inp.dscp_map is not None or inp.scenario is None:
        doc["switch"]["dscp_to_queue"] = dscp
        blame["switch.dscp_to_queue"] = f"--dscp-map {inp.given.get('dscp_map', '')}".strip()
    classes = sorted({min(d for d in range(64) if dscp[d] == q) for q in (weights or range(len(dscp)))
                      if q in dscp})
    _traffic(inp, doc, classes, blame)
    probes = "the scenario's [[probes]]" if doc.get("probes") else ""
    if inp.scenario is None and not doc.get("probes"):
        d0 = next(d for d in range(64) if dscp[d] == default_q)
        doc["probes"] = [{"src": 1, "dst": 0, "class": d0, "interval": PROBE_INTERVAL}]
        probes = f"a ping every {PROBE_INTERVAL} from host 1 to host 0 with DSCP {d0} (queue {default_q})"
    resolved = resolve(doc, blame, where)
    host_nics = _host_nics(doc, resolved)
    ecn = tuple(inp.ecn_queues) if inp.ecn_queues is not None else tuple(weights) or tuple(range(len(strict)))
    bad = [q for q in ecn if q >= len(dscp) or q >= int(resolved["switch"]["queues"])]
    if bad:
        raise ScenarioError(f"--ecn-queues: queue {bad[0]} is not one of the switch's "
                            f"{resolved['switch']['queues']} queues")
    if kind == "sp" and inp.ecn_queues is None:
        notes.append("a strict-priority scheduler has no weighted queues: ECN on every queue (--ecn-queues)")
    rtt = inp.rtt or scenario_rtt(resolved, source)
    top = resolved["topology"]
    # The rules' C: the dumbbell's bottleneck, else a receiver's access link (the core's).
    rate = (_core.parse_unit("rate", str(top["bottleneck_rate"])) if top["kind"] == "dumbbell"
            else _core.longest_rtt_us(json.dumps(resolved))[3])
    return Network(doc=doc, source=source, queues=int(resolved["switch"]["queues"]), scheduler=kind,
                   strict=tuple(strict), weights=weights, ecn_queues=ecn, dscp_to_queue=dscp, default_queue=default_q,
                   rate_bps=rate, rtt=rtt, buffer_bytes=_core.parse_unit("size", str(resolved["switch"]["buffer"])),
                   ports=inp.ports or (), host_nics=host_nics, blame=blame, notes=notes, probes=probes)


CAP_FACTOR = 10  # the validation runs' duration cap: this many times the span of one run


def cap_duration(net: Network, doc: dict[str, Any]) -> None:
    """Bound the validation runs' ``duration`` (a cap: a run ends when its flows are done) to
    ``CAP_FACTOR`` times what one run of ``doc`` (a point of the sweep, seed 1, without time
    series) takes, if that is below the scenario's. The core sizes a run's time series by the
    cap (duration / sample interval): the 30 s cap of a run that ends after 0.1 s asked for
    1.2 GB on a leaf-spine and was refused on a loaded machine. A run cut by the new cap is
    flagged by the guard (flows cut by the duration)."""
    from ..api import run

    probe = copy.deepcopy(doc)
    probe.setdefault("metrics", {})["timeseries"] = False
    summary = run(probe, seed=1).summary
    took = summary["sim_time_s"]
    cap_ns = max(int(CAP_FACTOR * took * 1e9), 10_000_000)
    now = _core.parse_unit("time", str(json.loads(_core.resolve_json(json.dumps(net.doc)))["duration"]))
    f = summary["flows"]
    left = f.get("unfinished", 0) + f.get("not_started", 0)
    if left and took * 1e9 >= now:  # the scenario's duration cuts the run: every run will be flagged for it
        flows = net.doc.get("traffic", [{}])[0].get("flows") if net.doc.get("traffic") else None
        net.notes.append(f"one run of this scenario (seed 1) is cut by its duration ({words.time_us(now / 1e3)}) with "
                         f"{left} of {f.get('total', left)} flows unfinished or not started: the guard sets every such "
                         f"run aside; raise the scenario's duration or lower --flows"
                         + (f" (now {flows})" if flows else ""))
    if cap_ns < now:
        net.doc["duration"] = f"{-(-cap_ns // 1_000_000)}ms"
        net.notes.append(f"the runs are capped at {words.time_us(cap_ns / 1e3)} ({CAP_FACTOR} x the "
                         f"{words.time_us(took * 1e6)} one run takes; the guard flags a run the cap cuts)")


def with_buffer(net: Network, largest_bytes: int, given: bool) -> None:
    """The buffer of a star built without ``--buffer``: twice the largest queue a point of
    the sweep marks at (a threshold must be below the buffer to mark), at least 1 MB."""
    if given:
        return
    b = max(1_000_000, -(-2 * largest_bytes // 100_000) * 100_000)
    net.doc["switch"]["buffer"] = f"{b}B"
    net.buffer_bytes = b
    net.notes.append(f"no --buffer: the port buffer is taken as {b / 1e6:g} MB (twice the largest threshold "
                     f"swept); give the switch's real buffer with --buffer")
