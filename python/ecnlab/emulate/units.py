"""Units of scenario values, and the scenario scaled to the emulated rate (``--rate``,
``--scale``: the package doc explains the two modes)."""

from __future__ import annotations

import json
import re
from typing import Any

from .common import EmulationError


_NUM = r"\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*"
_TIME = re.compile(f"^{_NUM}(ns|us|µs|ms|s)\\s*$")
_RATE = re.compile(f"^{_NUM}(bps|Kbps|kbps|Mbps|Gbps|Tbps|bit|Kbit|kbit|Mbit|Gbit|Tbit)\\s*$")
_SIZE = re.compile(f"^{_NUM}(B|KB|kB|MB|GB|KiB|MiB|GiB)\\s*$")
_TIME_MULT = {"ns": 1, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9}
_RATE_MULT = {"bps": 1, "bit": 1, "Kbps": 1e3, "kbps": 1e3, "Kbit": 1e3, "kbit": 1e3, "Mbps": 1e6, "Mbit": 1e6,
              "Gbps": 1e9, "Gbit": 1e9, "Tbps": 1e12, "Tbit": 1e12}
_SIZE_MULT = {"B": 1, "KB": 1e3, "kB": 1e3, "MB": 1e6, "GB": 1e9, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3}


def _unit_of(v: Any) -> str | None:
    if isinstance(v, str):
        if _TIME.match(v):
            return "time"
        if _RATE.match(v):
            return "rate"
        if _SIZE.match(v):
            return "size"
    return None


def parse_time_ns(v: Any) -> int:
    """A scenario duration (``"256us"`` or a number of ns) in ns."""
    if isinstance(v, (int, float)):
        return int(round(v))
    m = _TIME.match(str(v))
    if not m:
        raise EmulationError(f"`{v}` is not a duration (use ns, us, ms or s)")
    return int(round(float(m.group(1)) * _TIME_MULT[m.group(2)]))


def parse_rate_bps(v: Any) -> int:
    """A rate (``"1Gbps"``, ``"100Mbit"`` or a number of bit/s) in bit/s."""
    if isinstance(v, (int, float)):
        return int(round(v))
    m = _RATE.match(str(v))
    if not m:
        raise EmulationError(f"`{v}` is not a rate (e.g. 100Mbps or 100Mbit)")
    return int(round(float(m.group(1)) * _RATE_MULT[m.group(2)]))


def parse_size_bytes(v: Any) -> int:
    if isinstance(v, (int, float)):
        return int(round(v))
    m = _SIZE.match(str(v))
    if not m:
        raise EmulationError(f"`{v}` is not a size (e.g. 96KB)")
    return int(round(float(m.group(1)) * _SIZE_MULT[m.group(2)]))


# Scenario-level fields whose bare numbers carry a unit (the Rust types: Duration, Rate,
# ByteSize). Keys under [marking], [switch], [transport], [metrics], [host] get their units
# from the core's defaults (``_core.defaults_json``), where every such value is a string
# with its unit.
_SCENARIO_UNITS = {
    "duration": "time",
    "topology.link_rate": "rate", "topology.link_delay": "time",
    "topology.host_link_rate.*": "rate", "topology.host_link_delay.*": "time",
    "flows.*.start": "time", "flows.*.stop": "time", "flows.*.rate": "rate", "flows.*.size": "size",
    "probes.*.interval": "time", "probes.*.start": "time", "probes.*.stop": "time", "probes.*.size": "size",
    "metrics.warmup": "time", "metrics.sample_interval": "time",
    "traffic.*.start": "time", "traffic.*.interval": "time",
}

# Queue-length thresholds, scaled with the rate in ``--scale rate`` mode.
_QLEN_KEYS = {"k", "k_per_queue", "min_th", "max_th", "dq_thresh"}


def _default_units() -> dict[str, str]:
    out: dict[str, str] = {}
    try:
        from .. import _core

        defaults = json.loads(_core.defaults_json())
    except Exception:  # noqa: BLE001 - without the extension only strings with units scale
        return out

    def walk(prefix: str, v: Any) -> None:
        if isinstance(v, dict):
            for k, x in v.items():
                walk(f"{prefix}.{k}" if prefix else k, x)
        elif isinstance(v, list):
            for x in v:
                walk(f"{prefix}.*", x)
        else:
            u = _unit_of(v)
            if u:
                out[prefix] = u

    walk("", defaults)
    return out


def scale_scenario(doc: dict[str, Any], factor: float, mode: str = "dilate") -> dict[str, Any]:
    """The scenario run at 1/factor of its rates (see the module doc for the two modes).
    Values are written back in base units (ns, bps, B) so that no rounding to a display
    unit happens."""
    import copy

    if factor == 1.0:
        return copy.deepcopy(doc)
    if mode not in ("dilate", "rate"):
        raise EmulationError(f"--scale {mode}: use dilate or rate")
    units = dict(_default_units())
    units.update(_SCENARIO_UNITS)

    def scaled(path: str, key: str, v: Any) -> Any:
        if isinstance(v, bool):
            return v
        unit = _unit_of(v)
        if unit is None and isinstance(v, (int, float)):
            unit = units.get(path)
        if unit == "rate":
            return f"{max(1, round(parse_rate_bps(v) / factor))}bps"
        if unit == "time" and mode == "dilate":
            return f"{round(parse_time_ns(v) * factor)}ns"
        if unit == "size" and mode == "rate" and path.startswith("marking.") and key in _QLEN_KEYS:
            return f"{max(1, round(parse_size_bytes(v) / factor))}B"
        return v

    def walk(prefix: str, key: str, v: Any) -> Any:
        if prefix in ("name", "description", "claim", "seed"):
            return v
        if isinstance(v, dict):
            return {k: walk(f"{prefix}.{k}" if prefix else k, k, x) for k, x in v.items()}
        if isinstance(v, list):
            return [walk(f"{prefix}.*", key, x) for x in v]
        return scaled(prefix, key, v)

    return walk("", "", doc)


