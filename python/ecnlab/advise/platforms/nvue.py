"""NVIDIA Cumulus Linux 5 (NVUE), as its user guide (Quality of Service) and the NVUE command
reference (``nv set qos ...``, Cumulus Linux 5.3 on) give it:

- ``nv set qos mapping <profile> trust l3`` and ``... dscp <list> switch-priority <sp>``:
  DSCP to switch priority (0-7); ``nv set qos egress-queue-mapping <profile> switch-priority
  <sp> traffic-class <tc>``: switch priority to egress queue (eight, 0-7);
- ``nv set qos egress-scheduler <profile> traffic-class <tc> mode dwrr|strict`` and
  ``bw-percent`` 1-100, whose total must not exceed 100;
- ``nv set qos congestion-control <profile> traffic-class <tc> ecn enable``,
  ``min-threshold`` / ``max-threshold`` in bytes (random marking from min, every ECT packet
  from max), ``probability`` 1-100, ``red enable|disable`` (RED drops of non-ECT packets);
- a profile other than ``default-global`` is bound per port with ``nv set interface <port>
  qos congestion-control profile`` / ``egress-scheduler profile`` (5.4 on);
- ``nv config apply``."""

from __future__ import annotations

from typing import Any

from . import Rendered, Switch, summary
from .tc import _step

MAX_TC = 8


def _list(xs: list[int]) -> str:
    return ",".join(map(str, sorted(xs)))


def render(scheme: str, params: dict[str, Any], sw: Switch) -> Rendered:
    missing: list[str] = []
    if sw.queues > MAX_TC:
        return Rendered("", summary(scheme, params, sw), [f"{sw.queues} queues: Cumulus Linux has {MAX_TC}"])
    prof = "ecnlab" if sw.ports else "default-global"
    if sw.scheduler in ("wfq", "sp_wfq"):
        missing.append("WFQ: NVUE schedules DWRR; the weights are its bandwidth percentages")
    if len(sw.strict) > 1:
        missing.append("several strict queues: check the order among them (ecnlab's queue 0 is the highest)")
    mn, mx, p = _step(params)
    lines = ["#!/bin/sh", "set -e", f"nv set qos mapping {prof} trust l3"]
    by_q: dict[int, list[int]] = {}
    for d, q in enumerate(sw.dscp_to_queue):
        by_q.setdefault(q, []).append(d)
    lines += [f"nv set qos mapping {prof} dscp {_list(ds)} switch-priority {q}" for q, ds in sorted(by_q.items())]
    lines += [f"nv set qos egress-queue-mapping {prof} switch-priority {q} traffic-class {q}" for q in range(sw.queues)]
    if sw.strict:
        lines.append(f"nv set qos egress-scheduler {prof} traffic-class {_list(list(sw.strict))} mode strict")
    total = sum(sw.weights.values()) or 1
    pcts = {q: max(1, 100 * w // total) for q, w in sw.weights.items()}
    for q, pc in sorted(pcts.items()):
        lines.append(f"nv set qos egress-scheduler {prof} traffic-class {q} mode dwrr")
        lines.append(f"nv set qos egress-scheduler {prof} traffic-class {q} bw-percent {pc}")
    ecn = _list(list(sw.ecn_queues))
    base = f"nv set qos congestion-control {prof} traffic-class {ecn}"
    lines += [f"{base} ecn enable", f"{base} red disable", f"{base} min-threshold {mn}", f"{base} max-threshold {mx}",
              f"{base} probability {max(1, min(100, round(p * 100)))}"]
    for port in sw.ports:
        lines.append(f"nv set interface {port} qos congestion-control profile {prof}")
        lines.append(f"nv set interface {port} qos egress-scheduler profile {prof}")
        lines.append(f"nv set interface {port} qos mapping profile {prof}")
    if not sw.ports:
        missing.append("no --ports: the default-global profiles apply to every port")
    if scheme == "red":
        missing.append("RED's EWMA weight w: NVUE has no averaging weight (the ASIC's own)")
    lines.append("nv config apply")
    return Rendered("\n".join(lines) + "\n", summary(scheme, params, sw), missing)
