"""SONiC CONFIG_DB (``config load`` / ``config apply-patch`` of the tables): the top level
holds tables only. The rules are those of SONiC's YANG models (sonic-buildimage
``src/sonic-yang-models/yang-models/``):

- ``sonic-wred-profile.yang`` (revision 2026-06-23): ``WRED_PROFILE`` names match
  ``[a-zA-Z0-9]{1}([-a-zA-Z0-9_]{0,31})``, length 1-32; thresholds are uint64 bytes; the
  probabilities 0-100 percent; each max >= its min (``must``); the ``ecn_green_*`` marking
  thresholds (that revision's "mark before drop") need ``ecn`` to enable green marking
  (``must``). Advise marks with ``ecn_green_min_threshold`` / ``ecn_green_max_threshold`` /
  ``ecn_green_mark_probability`` and leaves WRED's drop thresholds at the buffer, so a
  non-ECT packet is dropped only when the queue is full, as in the simulation
  (``marking.non_ect = "pass"``). A release without those leaves (the 2021-04-01 revision)
  takes ``sonic-config_db-legacy.json``: the marking thresholds as WRED's green thresholds,
  where non-ECT packets are dropped too.
- ``sonic-scheduler.yang``: ``SCHEDULER`` type ``DWRR`` / ``WRR`` / ``STRICT``, weight 1-100.
- ``sonic-dscp-tc-map.yang``: ``DSCP_TO_TC_MAP`` keys are DSCPs 0-63, values traffic
  classes 0-15 (``tc_type``); ``sonic-tc-queue-map.yang``: ``TC_TO_QUEUE_MAP`` queue
  indexes match ``[0-9]?``.
- ``sonic-port-qos-map.yang``: ``PORT_QOS_MAP|<port>`` binds the maps; ``sonic-queue.yang``:
  ``QUEUE|<port>|<q>`` binds ``scheduler`` and ``wred_profile`` (leafrefs to the tables above;
  the port names must be ports of the switch's ``PORT`` table)."""

from __future__ import annotations

import json
import re
from typing import Any

from . import Rendered, Switch, summary
from .tc import _step

NAME_PATTERN = re.compile(r"[a-zA-Z0-9]{1}([-a-zA-Z0-9_]{0,31})")
MAP = "ECNLAB"
MAX_QUEUES = 10  # TC_TO_QUEUE_MAP's qindex: [0-9]?
DEFAULT_PORTS = ("Ethernet0",)


def profile_name(scheme: str) -> str:
    name = f"ECNLAB_{scheme.upper()}"[:32]
    assert NAME_PATTERN.fullmatch(name), name
    return name


def _scheduler(sw: Switch, missing: list[str]) -> tuple[dict[str, Any], dict[int, str]]:
    kind = "WRR" if sw.scheduler == "wrr" else "DWRR"
    if sw.scheduler in ("wfq", "sp_wfq"):
        missing.append("WFQ: SONiC schedules DWRR or WRR; the weights are DWRR weights")
    table, of_queue = {}, {}
    if sw.strict:
        table["ECNLAB_STRICT"] = {"type": "STRICT"}
        of_queue.update({q: "ECNLAB_STRICT" for q in sw.strict})
        if len(sw.strict) > 1:
            missing.append("several strict queues: check the ASIC's order among them (ecnlab's queue 0 is the "
                           "highest; many ASICs serve the highest queue index first)")
    for q, w in sorted(sw.weights.items()):
        if w > 100:
            missing.append(f"queue {q}'s weight {w} is above SONiC's 100; scale the weights")
        name = f"ECNLAB_W{min(w, 100)}"
        table.setdefault(name, {"type": kind, "weight": str(min(w, 100))})
        of_queue[q] = name
    return table, of_queue


def document(scheme: str, params: dict[str, Any], sw: Switch, legacy: bool = False) -> tuple[dict[str, Any], list[str]]:
    """The config_db tables (``legacy``: without the 2026 ``ecn_*`` leaves)."""
    missing: list[str] = []
    mn, mx, p = _step(params)
    name = profile_name(scheme)
    pct = str(max(0, min(100, round(p * 100))))
    drop = str(max(sw.buffer_bytes, mx))
    prof = {"ecn": "ecn_green", "wred_green_enable": "true"}
    if legacy:
        prof.update(green_min_threshold=str(mn), green_max_threshold=str(mx), green_drop_probability=pct)
    else:
        prof.update(green_min_threshold=drop, green_max_threshold=drop, green_drop_probability="100",
                    ecn_green_min_threshold=str(mn), ecn_green_max_threshold=str(mx), ecn_green_mark_probability=pct)
    sched, of_queue = _scheduler(sw, missing)
    ports = sw.ports or DEFAULT_PORTS
    if not sw.ports:
        missing.append(f"no --ports: the tables bind {', '.join(DEFAULT_PORTS)}; give the switch's port names")
    queue = {}
    for port in ports:
        for q in range(sw.queues):
            entry = {"scheduler": of_queue[q]}
            if q in sw.ecn_queues:
                entry["wred_profile"] = name
            queue[f"{port}|{q}"] = entry
    doc = {"WRED_PROFILE": {name: prof}, "SCHEDULER": sched,
           "DSCP_TO_TC_MAP": {MAP: {str(d): str(q) for d, q in enumerate(sw.dscp_to_queue)}},
           "TC_TO_QUEUE_MAP": {MAP: {str(q): str(q) for q in range(sw.queues)}},
           "PORT_QOS_MAP": {port: {"dscp_to_tc_map": MAP, "tc_to_queue_map": MAP} for port in ports},
           "QUEUE": queue}
    return doc, missing


def render(scheme: str, params: dict[str, Any], sw: Switch) -> Rendered:
    if sw.queues > MAX_QUEUES:
        return Rendered("", summary(scheme, params, sw), [f"{sw.queues} queues: SONiC's queue index is 0-9"])
    doc, missing = document(scheme, params, sw)
    if scheme == "red":
        missing.append("RED's EWMA weight w: WRED_PROFILE has no averaging weight (the ASIC's own)")
    missing.append("sonic-config_db-legacy.json: the same for a release without the ecn_* marking thresholds "
                   "(sonic-wred-profile revision 2021-04-01), where WRED's thresholds mark ECT and drop non-ECT")
    return Rendered(json.dumps(doc, indent=2) + "\n", summary(scheme, params, sw), missing)


def render_legacy(scheme: str, params: dict[str, Any], sw: Switch) -> str:
    return json.dumps(document(scheme, params, sw, legacy=True)[0], indent=2) + "\n"
