"""The scenario as the core resolves it, and its units.

The emulator parses no unit and knows no default of its own: the core resolves the
scenario (``_core.resolve_json``: every default filled in, ``[transport]`` for its
profile, units canonical: ``"65p"`` becomes bytes of the scenario's MTU, ``"25G"``
``"25Gbps"``), and the emulation plan (``plan.py``) reads it in the core, scaled to the
emulated rate; the few values read here go through ``_core.parse_unit``, the grammar of
scenario files."""

from __future__ import annotations

import json
from typing import Any

from .common import EmulationError

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
