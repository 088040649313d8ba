"""Junos class of service (Juniper's documentation: "Latency-Based ECN", the
``latency-ecn (Schedulers)`` statement, "Example: Configuring ECN", "Defining CoS Queue
Schedulers"):

- per queue, a scheduler with either latency-based ECN (``latency-ecn { threshold N; }``, in
  nanoseconds, 1-1,000,000,000; Junos OS Evolved 25.2X100D20 on) or buffer-based ECN
  (``explicit-congestion-notification`` with a WRED ``drop-profile-map`` whose
  ``fill-level`` is in percent of the queue's buffer), never both: they are "mutually
  exclusive ... on any given port and queue pair";
- no ECN on a strict-high queue ("ECN should not be enabled on strict-high priority traffic
  queues"), which takes no ``transmit-rate``; one strict-high queue per port;
- forwarding classes (one per queue, ``queue-num``), a DSCP classifier, a ``scheduler-map``
  from forwarding class to scheduler, and the map bound on each interface."""

from __future__ import annotations

from typing import Any

from ... import _core
from .. import words
from . import Rendered, Switch, summary
from .tc import _step

MAX_THRESHOLD_NS = 1_000_000_000
DEFAULT_PORTS = ("et-0/0/0",)


def _fc(q: int) -> str:
    return f"ecnlab-q{q}"


def _ecn(scheme: str, params: dict[str, Any], sw: Switch, q: int, missing: list[str]) -> list[str]:
    """The ECN statements of queue ``q``'s scheduler: latency-based or buffer-based."""
    if scheme in ("tcn", "ecn_sharp"):
        key = "marking.tcn.threshold" if scheme == "tcn" else "marking.ecn_sharp.ins_target"
        ns = min(max(1, _core.parse_unit("time", str(params[key]))), MAX_THRESHOLD_NS)
        return ["latency-ecn {", f"    threshold {ns};", "}"]
    mx = _step(params)[1]
    share = 100 // sw.queues
    if mx > sw.buffer_bytes * share / 100:
        why = (f"{words.size(mx)} is above a queue's buffer here ({share} % of {words.size(sw.buffer_bytes)}, "
               f"buffer-size percent {share}): the drop profile's fill levels are capped at 100 %")
        if why not in missing:
            missing.append(why)
    return ["explicit-congestion-notification;", f"buffer-size percent {share};",
            "drop-profile-map loss-priority any protocol any drop-profile ecnlab-ecn;"]


def _drop_profile(params: dict[str, Any], sw: Switch) -> list[str]:
    mn, mx, p = _step(params)
    qbuf = sw.buffer_bytes * (100 // sw.queues) / 100
    lo, hi = min(mn / qbuf * 100, 100), min(mx / qbuf * 100, 100)
    if hi <= lo:  # a step: 0 below K, 100 % at K (interpolate needs rising fill levels)
        lo = max(hi - 1, 0)
    return ["drop-profiles {", "    ecnlab-ecn {", "        interpolate {",
            f"            fill-level [ {lo:.0f} {hi:.0f} ];", f"            drop-probability [ 0 {round(p * 100)} ];",
            "        }", "    }", "}"]


def render(scheme: str, params: dict[str, Any], sw: Switch) -> Rendered:
    missing: list[str] = []
    if scheme == "ecn_sharp":
        missing.append("ECN#'s persistent-queue part: latency-ecn is its instantaneous part (ins_target) only")
    if len(sw.strict) > 1:
        missing.append(f"{len(sw.strict)} strict queues: Junos has one strict-high queue; queues "
                       f"{', '.join(map(str, sw.strict[1:]))} get priority high")
    total_w = sum(sw.weights.values()) or 1
    scheds = []
    for q in range(sw.queues):
        body = []
        if q in sw.strict:
            body.append("priority strict-high;" if q == sw.strict[0] else "priority high;")
        else:
            body += [f"transmit-rate percent {max(1, round(100 * sw.weights[q] / total_w))};", "priority low;"]
        if q in sw.ecn_queues and q not in sw.strict:
            body += _ecn(scheme, params, sw, q, missing)
        elif q in sw.ecn_queues:
            missing.append(f"queue {q} is strict-high: Junos documents no ECN there; left without")
        scheds += [f"        {_fc(q)} {{"] + [f"            {x}" for x in body] + ["        }"]
    by_fc: dict[int, list[str]] = {}
    for d, q in enumerate(sw.dscp_to_queue):
        by_fc.setdefault(q, []).append(f"{d:06b}")
    ports = sw.ports or DEFAULT_PORTS
    if not sw.ports:
        missing.append(f"no --ports: the map is bound to {DEFAULT_PORTS[0]}; give the switch's interfaces")
    lines = ["class-of-service {", "    forwarding-classes {"]
    lines += [f"        class {_fc(q)} queue-num {q};" for q in range(sw.queues)]
    lines += ["    }", "    classifiers {", "        dscp ecnlab {"]
    lines += [f"            forwarding-class {_fc(q)} {{ loss-priority low code-points [ {' '.join(cps)} ]; }}"
              for q, cps in sorted(by_fc.items())]
    lines += ["        }", "    }"]
    if scheme not in ("tcn", "ecn_sharp"):
        lines += [f"    {x}" for x in _drop_profile(params, sw)]
    lines += ["    schedulers {"] + scheds + ["    }", "    scheduler-maps {", "        ecnlab {"]
    lines += [f"            forwarding-class {_fc(q)} scheduler {_fc(q)};" for q in range(sw.queues)]
    lines += ["        }", "    }", "    interfaces {"]
    for port in ports:
        lines += [f"        {port} {{", "            scheduler-map ecnlab;", "            unit 0 {",
                  "                classifiers { dscp ecnlab; }", "            }", "        }"]
    lines += ["    }", "}"]
    return Rendered("\n".join(lines) + "\n", summary(scheme, params, sw), missing)
