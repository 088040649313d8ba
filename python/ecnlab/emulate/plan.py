"""The emulation plan: what a run sets up, built once from the resolved scenario by the core
(``_core.emulation_plan``, ``crates/ecnlab-emu/src/plan.rs``): the scenario scaled to the
emulated rate, every unit parsed (numbers in bit/s, ns, bytes, and seconds where the agents
take seconds), each host's MAC and link, the flows, the ``[[traffic]]`` messages drawn by
the simulator's own generator with the run's seed, the probes, the queue of each class,
the switch's configuration, and the warnings of what the kernel's hosts do otherwise."""

from __future__ import annotations

import json
from typing import Any

from .common import EmulationError


def emulation_plan(doc: dict[str, Any], *, rate: str | int | None = "auto", scale: str = "dilate",
                   seed: int | None = None, burst: str | None = None, link_delay: bool = True) -> dict[str, Any]:
    """The plan of a *resolved* scenario (``resolve_scenario``). ``rate``: the host link rate
    to run at, ``"auto"`` or None (the scenario's); ``scale``: ``"dilate"`` or ``"rate"``.
    Raises EmulationError for what the emulator cannot run."""
    from .. import _core

    if scale not in ("dilate", "rate"):
        raise EmulationError(f"--scale {scale}: use dilate or rate")
    opts = {"rate": None if rate is None else str(rate), "scale": scale, "seed": seed,
            "burst": None if burst is None else str(burst), "link_delay": bool(link_delay)}
    try:
        return json.loads(_core.emulation_plan(json.dumps(doc), json.dumps(opts)))
    except ValueError as e:
        raise EmulationError(str(e)) from None


def expand_flows(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``[[flows]]`` of a resolved scenario, one record per flow (``count`` expanded), ids
    in order as in ``ecnlab run``; times in seconds, sizes in bytes, rates in bit/s."""
    return emulation_plan(doc, rate=None)["flows"]


def classify(doc: dict[str, Any], dscp: int) -> int:
    """The switch queue of DSCP ``dscp`` in a resolved scenario (the core's classification)."""
    return emulation_plan(doc, rate=None)["class_queue"][dscp & 63]
