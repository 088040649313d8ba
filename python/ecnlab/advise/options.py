"""What an operator tells ``ecnlab advise``: the flags, each parsed into a value that the
scenario builder (``network.py``) turns into scenario keys, and the record of every input
for ``advice.json``.

Units are never parsed here: a rate, a size, a time or a load (``60%``) goes into the
scenario as written and the core checks it (``_core.validate_json``), so the grammar and its
errors are the scenario files' own; the flags' own syntax (``--weights 4,2,1,1``,
``--dscp-map 46=0,0-45=1``, ``--traffic 26=websearch@40%``, ``--ecn-queues 1-7``,
``--budget 200runs``) is checked here, one line naming the flag."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .. import _core
from ..inputs import ScenarioError
from .rtt import RttProfile

DEFAULT_SCHEMES = ("tcn", "ecn_sharp", "per_queue")
PLATFORMS = ("sonic", "tc", "nvue", "junos")
METRICS = {  # --metric: the ranking metric, a column of the sweep's results (lower is better)
    "small_avg": ("fct_small_avg_us", "small-flow average FCT"),
    "small_p99": ("fct_small_p99_us", "small-flow p99 FCT"),
    "all_avg": ("fct_all_avg_us", "average FCT"),
    "large_avg": ("fct_large_avg_us", "large-flow average FCT"),
}


@dataclass(frozen=True)
class Traffic:
    """One class of ``--traffic CLASS=WORKLOAD@LOAD``: a DSCP, a flow-size CDF, a load."""

    dscp: int
    workload: str
    load: str  # as given (0.4, 40%): the core parses it as traffic[i].load

    def text(self) -> str:
        return f"{self.dscp}={self.workload}@{self.load}"


@dataclass(frozen=True)
class Budget:
    """How much validation may cost: a number of runs, or wall-clock seconds."""

    runs: int | None = None
    seconds: float | None = None

    def text(self) -> str:
        return f"{self.runs} runs" if self.runs is not None else f"{self.seconds:g} s"


@dataclass
class Inputs:
    """Everything advise is told. ``None`` means "not given": the scenario file's value,
    else the default of the star advise builds (``network.py``)."""

    link_rate: str | None = None
    rtt: RttProfile | None = None
    scenario: str | None = None  # --scenario FILE (or a built-in name)
    queues: int | None = None
    scheduler: str | None = None
    weights: tuple[int, ...] | None = None
    strict: int | None = None
    dscp_map: dict[int, int] | None = None
    traffic: tuple[Traffic, ...] | None = None
    buffer: str | None = None
    ports: tuple[str, ...] | None = None
    ecn_queues: tuple[int, ...] | None = None
    transport: str | None = None
    workload: str = "websearch"
    load: str = "0.7"
    senders: int | None = None
    schemes: tuple[str, ...] = DEFAULT_SCHEMES
    platforms: tuple[str, ...] = PLATFORMS
    validate: str = "quick"
    metric: str = "small_avg"
    budget: Budget | None = None
    flows: int | None = None
    seeds: int | None = None
    jobs: int | None = None
    given: dict[str, str] = field(default_factory=dict)  # flag -> text as typed, for the record


def _int(text: str, flag: str, what: str, lo: int = 0, hi: int | None = None) -> int:
    t = text.strip()
    if not re.fullmatch(r"[0-9]+", t):
        raise ScenarioError(f"{flag}: `{t}` is not a whole number ({what})")
    v = int(t)
    if v < lo or (hi is not None and v > hi):
        raise ScenarioError(f"{flag}: {v} is not between {lo} and {hi} ({what})" if hi is not None
                            else f"{flag}: {v} must be at least {lo} ({what})")
    return v


def _items(text: str, flag: str) -> list[str]:
    items = [x.strip() for x in text.split(",")]
    if not text.strip() or any(not x for x in items):
        raise ScenarioError(f"{flag}: `{text}` has an empty item (a comma-separated list)")
    return items


def _range(text: str, flag: str, what: str, hi: int | None = None) -> list[int]:
    """``5`` or ``1-7`` as the list of integers it names."""
    a, sep, b = text.partition("-")
    lo_v = _int(a, flag, what, 0, hi)
    hi_v = _int(b, flag, what, 0, hi) if sep else lo_v
    if hi_v < lo_v:
        raise ScenarioError(f"{flag}: `{text}` is a range that ends before it starts")
    return list(range(lo_v, hi_v + 1))


def parse_weights(text: str) -> tuple[int, ...]:
    """``--weights 4,2,1,1``: one weight per weighted queue, in queue order (the scheduler's
    ``weights``: DWRR/WRR quantum multiplier, WFQ weight)."""
    return tuple(_int(x, "--weights", "a queue's weight", 1) for x in _items(text, "--weights"))


def parse_queue_set(text: str, flag: str = "--ecn-queues") -> tuple[int, ...]:
    """``1-7`` or ``1,2,5``: a set of queue numbers, sorted."""
    out: set[int] = set()
    for item in _items(text, flag):
        out.update(_range(item, flag, "a queue number", 63))
    return tuple(sorted(out))


def parse_dscp_map(text: str) -> dict[int, int]:
    """``--dscp-map 46=0,26=1,0-25=2``: DSCP (or a range) = queue. DSCPs not listed go to the
    unclassified queue (``network.py``). A DSCP given twice is refused (which was meant?)."""
    out: dict[int, int] = {}
    for item in _items(text, "--dscp-map"):
        lhs, eq, rhs = item.partition("=")
        if not eq:
            raise ScenarioError(f"--dscp-map: `{item}` is not DSCP=QUEUE (e.g. 46=0 or 0-45=1)")
        q = _int(rhs, "--dscp-map", "a queue number", 0, 63)
        for d in _range(lhs.strip(), "--dscp-map", "a DSCP, 0-63", 63):
            if d in out:
                raise ScenarioError(f"--dscp-map: DSCP {d} is given twice (queues {out[d]} and {q})")
            out[d] = q
    return out


def parse_traffic(text: str) -> tuple[Traffic, ...]:
    """``--traffic 26=websearch@40%,10=datamining@20%``: per class (a DSCP), a flow-size CDF
    (built-in name or file) and a load (of the receivers' links, as a scenario's
    ``traffic[i].load``)."""
    out = []
    for item in _items(text, "--traffic"):
        m = re.fullmatch(r"([^=@]+)=([^@]+)@(.+)", item)
        if not m:
            raise ScenarioError(f"--traffic: `{item}` is not CLASS=WORKLOAD@LOAD (e.g. 26=websearch@40%)")
        dscp = _int(m.group(1), "--traffic", "a class is a DSCP, 0-63", 0, 63)
        if any(t.dscp == dscp for t in out):
            raise ScenarioError(f"--traffic: class {dscp} is given twice")
        out.append(Traffic(dscp, m.group(2).strip(), m.group(3).strip()))
    return tuple(out)


def parse_budget(text: str) -> Budget:
    """``200runs`` (or ``200``) runs, or a time in the scenario grammar (``10min``)."""
    t = text.strip()
    m = re.fullmatch(r"([0-9]+)\s*(runs?)?", t)
    if m:
        return Budget(runs=_int(m.group(1), "--budget", "runs", 1))
    try:
        ns = _core.parse_unit("time", t)
    except ValueError as e:
        raise ScenarioError(f"--budget: `{t}` is neither a number of runs (200runs) nor a time (10min): {e}") from None
    if ns <= 0:
        raise ScenarioError(f"--budget: {t} is no time at all")
    return Budget(seconds=ns / 1e9)


def parse_ports(text: str) -> tuple[str, ...]:
    """``--ports Ethernet0,Ethernet4``: the switch's port names, as the platform names them."""
    names = _items(text, "--ports")
    bad = next((n for n in names if not re.fullmatch(r"[A-Za-z0-9][-A-Za-z0-9_./:]{0,63}", n)), None)
    if bad:
        raise ScenarioError(f"--ports: `{bad}` is not a port name (letters, digits, - _ . / :)")
    if len(set(names)) != len(names):
        raise ScenarioError("--ports: a port is named twice")
    return tuple(names)


def check_choices(inp: Inputs) -> None:
    """The names advise knows (schemes, platforms, --validate, --metric), and the counts."""
    names = set(_core.scheme_names())
    for s in inp.schemes:
        if s not in names:
            raise ScenarioError(f"--schemes: unknown scheme `{s}` ({', '.join(sorted(names))})")
    for p in inp.platforms:
        if p not in PLATFORMS:
            raise ScenarioError(f"--platform: unknown platform `{p}` ({', '.join(PLATFORMS)})")
    if inp.validate not in ("quick", "full", "none"):
        raise ScenarioError(f"--validate: `{inp.validate}` is not quick, full or none")
    if inp.metric not in METRICS:
        raise ScenarioError(f"--metric: `{inp.metric}` is not one of {', '.join(METRICS)}")
    for name in ("queues", "senders", "flows", "seeds", "jobs"):
        v = getattr(inp, name)
        if v is not None and v < 1:  # None: the default; 0 is no count at all
            raise ScenarioError(f"--{name}: {v} must be at least 1")
    if inp.seeds is not None and inp.seeds < 2 and inp.validate != "none":
        raise ScenarioError(f"--seeds: {inp.seeds}: an interval needs at least 2 paired seeds")
    if inp.scenario is None and (inp.link_rate is None or inp.rtt is None):
        raise ScenarioError("give --scenario FILE, or --link-rate with --rtt or --rtt-file")


def record(inp: Inputs) -> dict[str, Any]:
    """Every input for ``advice.json``: what was typed (``given``) and what advise took."""
    return {"given": dict(inp.given), "scenario": inp.scenario, "link_rate": inp.link_rate,
            "rtt": inp.rtt.as_dict() if inp.rtt else None, "queues": inp.queues, "scheduler": inp.scheduler,
            "weights": list(inp.weights) if inp.weights else None, "strict": inp.strict,
            "dscp_map": {str(d): q for d, q in sorted(inp.dscp_map.items())} if inp.dscp_map else None,
            "traffic": [t.text() for t in inp.traffic] if inp.traffic else None, "buffer": inp.buffer,
            "ports": list(inp.ports) if inp.ports else None,
            "ecn_queues": list(inp.ecn_queues) if inp.ecn_queues is not None else None,
            "transport": inp.transport, "workload": None if inp.traffic else inp.workload,
            "load": None if inp.traffic else inp.load, "senders": inp.senders, "schemes": list(inp.schemes),
            "platforms": list(inp.platforms), "validate": inp.validate, "metric": inp.metric,
            "budget": inp.budget.text() if inp.budget else None, "flows": inp.flows, "seeds": inp.seeds,
            "jobs": inp.jobs}
