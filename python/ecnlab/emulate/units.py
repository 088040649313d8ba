"""The scenario as the core resolves it, its units, and the scenario scaled to the emulated
rate (``--rate``, ``--scale``: the package doc explains the two modes).

The emulator parses no unit and knows no default of its own: the core resolves the
scenario (``_core.resolve_json``: every default filled in, ``[transport]`` for its
profile, units canonical: ``"65p"`` becomes bytes of the scenario's MTU, ``"25G"``
``"25Gbps"``), and values are read through ``_core.parse_unit``, the grammar of scenario
files."""

from __future__ import annotations

import json
from typing import Any

from .common import EmulationError

_KINDS = ("time", "size", "rate")
_WHAT = {"time": "a duration (e.g. 256us)", "size": "a size (e.g. 96KB)", "rate": "a rate (e.g. 100Mbps or 25G)"}


def resolve_scenario(doc: dict[str, Any]) -> dict[str, Any]:
    """The scenario as the simulator would run it (``_core.resolve_json``): every default
    the core has, for the scenario's own host profile. Raises ScenarioError."""
    from .. import _core
    from ..scenario import ScenarioError, to_json

    try:
        return json.loads(_core.resolve_json(to_json(doc)))
    except ValueError as e:
        raise ScenarioError(str(e)) from None


def _parse(kind: str, v: Any) -> int:
    from .. import _core

    if isinstance(v, bool):
        raise EmulationError(f"`{v}` is not {_WHAT[kind]}")
    try:
        return int(_core.parse_unit(kind, str(v)))
    except ValueError as e:
        raise EmulationError(f"`{v}` is not {_WHAT[kind]}: {e}") from None


def parse_time_ns(v: Any) -> int:
    """A duration (``"256us"``; a bare number only if 0) in ns, by the core's grammar."""
    return _parse("time", v)


def parse_rate_bps(v: Any) -> int:
    """A rate (``"1Gbps"``, ``"100Mbit"``, ``"25G"``) in bit/s, by the core's grammar."""
    return _parse("rate", v)


def parse_size_bytes(v: Any) -> int:
    """A size (``"96KB"``) in bytes, by the core's grammar. Sizes in packets (``"65p"``)
    need the scenario's MTU: read them from a resolved scenario (``resolve_scenario``)."""
    return _parse("size", v)


def unit_kind(v: Any) -> str | None:
    """``"time"``, ``"size"`` or ``"rate"`` for a value of a *resolved* scenario, else None.
    The core writes every such value as a string in its canonical unit (ns/us/ms/s, B/KB/MB,
    bps/Mbps/Gbps), and these unit sets are disjoint, so the string tells its kind."""
    from .. import _core

    if not isinstance(v, str) or not v[:1].isdigit():
        return None
    for kind in _KINDS:
        try:
            _core.parse_unit(kind, v)
            return kind
        except ValueError:
            pass
    return None


# Queue-length thresholds, scaled with the rate in ``--scale rate`` mode.
_QLEN_KEYS = {"k", "k_per_queue", "min_th", "max_th", "dq_thresh"}
# Free text and identifiers, never scaled.
_TEXT_KEYS = {"name", "description", "claim", "seed"}


def scale_scenario(doc: dict[str, Any], factor: float, mode: str = "dilate") -> dict[str, Any]:
    """The *resolved* scenario (``resolve_scenario``) run at 1/factor of its rates (see the
    package doc for the two modes). Values are written back in base units (ns, bps, B) so
    that no rounding to a display unit happens."""
    import copy

    if mode not in ("dilate", "rate"):
        raise EmulationError(f"--scale {mode}: use dilate or rate")
    if factor == 1.0:
        return copy.deepcopy(doc)

    def scaled(path: str, key: str, v: Any) -> Any:
        unit = unit_kind(v)
        if unit == "rate":
            return f"{max(1, round(parse_rate_bps(v) / factor))}bps"
        if unit == "time" and mode == "dilate":
            return f"{round(parse_time_ns(v) * factor)}ns"
        if unit == "size" and mode == "rate" and path.startswith("marking.") and key in _QLEN_KEYS:
            return f"{max(1, round(parse_size_bytes(v) / factor))}B"
        return v

    def walk(prefix: str, key: str, v: Any) -> Any:
        if prefix in _TEXT_KEYS:
            return v
        if isinstance(v, dict):
            return {k: walk(f"{prefix}.{k}" if prefix else k, k, x) for k, x in v.items()}
        if isinstance(v, list):
            return [walk(f"{prefix}.*", key, x) for x in v]
        return scaled(prefix, key, v)

    return walk("", "", doc)
