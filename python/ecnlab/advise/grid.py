"""The points advise validates: each scheme's starting parameters (``rules.py``) scaled by a
few factors, in the scheme's own units (TCN's T in us, per-queue ECN's K in bytes), each a
set of scenario keys. A point the operator's switch cannot hold is not run and says why: the
core's refusal of the point's scenario (a byte threshold not below the buffer, ...), or a
sojourn threshold whose queue at line rate (T x C) does not fit the buffer (the queue would
drop before it marks)."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

from .. import _core
from . import words
from .network import Network
from .rules import Start

FACTORS = {"quick": (0.25, 0.5, 1.0, 2.0), "full": (0.25, 0.5, 1.0, 2.0, 4.0), "none": (1.0,)}
_SIZE_SUFFIXES = ("k", "min_th", "max_th")
_TIME_SUFFIXES = ("threshold", "target", "interval")


def is_size(key: str) -> bool:
    return key.endswith(_SIZE_SUFFIXES)


@dataclass
class GridPoint:
    """One configuration of one scheme."""

    scheme: str
    factor: float
    params: dict[str, Any]  # every parameter of the scheme, scenario key -> value with its unit
    primary: str  # the key the figures put on the x axis (T, K, ins_target, min_th, target)
    skip: str | None = None  # why it does not run

    @property
    def label(self) -> str:
        return f"{words.name(self.scheme)} at {words.params({self.primary: self.params[self.primary]})}"

    @property
    def overrides(self) -> list[str]:
        return [f"marking.scheme={self.scheme}", *(f"{k}={json.dumps(v)}" for k, v in self.params.items())]

    @property
    def x(self) -> tuple[float, str]:
        """The primary parameter in the unit it is drawn in (us, or KB)."""
        v = str(self.params[self.primary])
        if is_size(self.primary):
            return _core.parse_unit("size", v) / 1e3, "KB"
        return _core.parse_unit("time", v) / 1e3, "µs"

    def as_dict(self) -> dict[str, Any]:
        x, unit = self.x
        d = {"scheme": self.scheme, "factor": self.factor, "params": self.params, "label": self.label,
             "axis": {"key": self.primary, "symbol": words.SYMBOL.get(self.primary, self.primary), "value": x,
                      "unit": unit}}
        if self.skip:
            d["not_run"] = self.skip
        return d


def _scaled(start: Start, f: float) -> dict[str, Any]:
    from .rules import _bytes, _us

    out = dict(start.params)
    for k in start.scale_keys:
        v = str(start.params[k])
        out[k] = _bytes(_core.parse_unit("size", v) * f) if is_size(k) else _us(_core.parse_unit("time", v) * f / 1e3)
    return out


def largest_queue_bytes(points: list[GridPoint], rate_bps: int) -> int:
    """The largest queue any point marks at: a byte threshold, or a sojourn time at line rate."""
    out = 0
    for p in points:
        for k, v in p.params.items():
            if is_size(k):
                out = max(out, _core.parse_unit("size", str(v)))
            elif k.endswith(_TIME_SUFFIXES) and not k.endswith("interval"):
                out = max(out, int(_core.parse_unit("time", str(v)) * rate_bps / 8e9))
    return out


def point(s: Start, f: float) -> GridPoint:
    return GridPoint(s.scheme, f, _scaled(s, f), s.scale_keys[0])


def points(starts: list[Start], validate: str) -> list[GridPoint]:
    """Each runnable scheme's points (its starting point times each factor)."""
    return [point(s, f) for s in starts if s.scale_keys and not s.note for f in FACTORS[validate]]


def check_fit(pts: list[GridPoint], net: Network) -> None:
    """Mark the points the switch cannot hold (``skip``): the core's refusal of the point's
    scenario, or a sojourn threshold whose line-rate queue is not below the buffer."""
    for p in pts:
        for k, v in p.params.items():
            if k.endswith(_TIME_SUFFIXES) and not k.endswith("interval") and not is_size(k):
                q = _core.parse_unit("time", str(v)) * net.rate_bps / 8e9
                if q >= net.buffer_bytes:
                    p.skip = (f"{words.params({k: v})} x {words.rate(net.rate_bps)} = {words.size(q)} is not below "
                              f"the buffer, {words.size(net.buffer_bytes)}: the queue drops before it marks")
                    break
        if p.skip:
            continue
        doc = with_point(net.doc, p)
        try:
            _core.validate_json(json.dumps(doc))
        except ValueError as e:
            p.skip = f"the switch cannot take it: {e}"


def with_point(doc: dict[str, Any], p: GridPoint) -> dict[str, Any]:
    """The scenario with the point's scheme and parameters set."""
    d = copy.deepcopy(doc)
    d.setdefault("marking", {})["scheme"] = p.scheme
    for k, v in p.params.items():
        node = d
        parts = k.split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = v
    return d
