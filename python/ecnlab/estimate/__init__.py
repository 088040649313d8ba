"""``ecnlab estimate``: a fabric's FCTs estimated after Parsimon (Zhao, Goyal, Alizadeh,
Anderson, NSDI 2023) instead of simulated whole: one simulation per directed link that
carries traffic, alike links clustered and simulated once, each flow's FCT its FCT alone on
its path plus the delays of its links. The decomposition, clustering and combination are the
core's (``crates/ecnlab-estimate``); this package hands its simulations to workers
(``workers``: this machine's cores, or Dask) and writes the result directory.

>>> import ecnlab.estimate
>>> s = ecnlab.estimate.estimate("fabric.toml", out="out/fabric")      # doctest: +SKIP
>>> s["approximate"], s["fct"]["small"]["p99_us"]                      # doctest: +SKIP

The result directory (written whole, ``ecnlab.outdir``): ``summary.json`` in the keys of
``ecnlab run`` where they apply, marked ``"approximate": true``, with ``estimate`` (how it was
made: link simulations, clusters, distance and threshold, time per stage) and ``slowdown``;
``flows.csv`` in the columns of a run's; ``links.csv`` (each link's load and cluster);
``scenario.json``.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Callable, Iterable

from .. import _core
from ..api import _scenario_error, build_info, resolve
from ..outdir import result_dir
from ..scenario import ScenarioError, to_json

__all__ = ["estimate", "beyond_exact", "SOUNDNESS_JUDGED", "DEFAULT_THRESHOLD", "WINDOW_CAPS",
           "EXACT_LIMIT_SEGMENT_HOPS"]

DEFAULT_THRESHOLD = 0.1  # the core's default (ecnlab_estimate::Options), shown by --help
# The link simulations' window caps (ecnlab_estimate::linksim::WindowCap), the default first:
# "nics" caps the senders of a stock (unmarked) NIC's link simulation at its paths' BDP.
WINDOW_CAPS = ("nics", "off")
# A run is beyond exact simulation (``beyond_exact``: ``ecnlab advise`` then validates with the
# estimate) when its exact run would not fit in memory, or would carry more data segments than
# this, each counted at every link of its path: 3 x 10^8 are about 4.5 x 10^8 packet-hops with
# the ACKs, some two minutes of one core at the 3.7 M packet-hops a second measured on a
# 128-host fabric (issue 34), and an advice makes tens to hundreds of runs. Below it the
# exact run is also the cheaper (the estimate cost 2-4x its CPU on the 128-host calibration
# fabrics, benches/README.md).
EXACT_LIMIT_SEGMENT_HOPS = 300_000_000
# The soundness rules an estimate's figures can be judged by (ecnlab.soundness): those that
# read the time series or the ports' utilization cannot (an estimate has neither).
SOUNDNESS_JUDGED = ("nic_bound", "nic_drops", "cut_by_duration", "rto_stall", "lossless_drops", "lossless_timeouts",
                    "light_load_loss")
# Those of them that read flows.csv.
PER_FLOW_RULES = ("rto_stall", "lossless_timeouts")


def plan(scenario: str | os.PathLike | dict[str, Any], seed: int | None = None, overrides: Iterable[str] = (),
         threshold: float = DEFAULT_THRESHOLD, max_hosts: int = 1000, window_cap: str = WINDOW_CAPS[0],
         threads: int | None = None):
    """The core's plan of an estimate (decomposed and clustered; ``_core.EstimatePlan``);
    ``threads``: of its passes over every flow (default: every core; the plan is the same
    whatever their number)."""
    doc = resolve(scenario, overrides)
    if seed is not None and not (0 <= int(seed) < 2**64):
        raise ScenarioError(f"seed: {seed} is not in 0..2^64")
    if not threshold >= 0:
        raise ScenarioError(f"--threshold: {threshold} is not a distance (>= 0)")
    if window_cap not in WINDOW_CAPS:
        raise ScenarioError(f"--window-cap: '{window_cap}' is not one of {', '.join(WINDOW_CAPS)}")
    try:
        p = _core.estimate_plan(to_json(doc), None if seed is None else int(seed), float(threshold), int(max_hosts),
                              window_cap, threads)
    except ValueError as e:
        raise _scenario_error(scenario, str(e)) from None
    return doc, p


def beyond_exact(doc: dict[str, Any], seed: int | None = None) -> str | None:
    """Why a run of the scenario ``doc`` is beyond exact simulation, in words (None: it is
    not): its exact run does not fit in memory (the core's memory estimate, the check of
    ``ecnlab run``), or it would carry more than ``EXACT_LIMIT_SEGMENT_HOPS`` data
    segment-hops (counted on the simulator's own routes, by the estimate's decomposition)."""
    refusal = _core.exact_memory_refusal(to_json(doc))
    if refusal:
        return f"its exact run would not fit in memory ({refusal})"
    # The count does not depend on the RTT variation, which the estimate does not take.
    _, p = plan({k: v for k, v in doc.items() if k != "rtt_variation"}, seed)
    hops = json.loads(p.info())["segment_hops"]
    del p
    if hops > EXACT_LIMIT_SEGMENT_HOPS:
        return (f"its exact run would carry {hops:.3g} data segment-hops, more than the {EXACT_LIMIT_SEGMENT_HOPS:.3g} "
                f"validated exactly (about two minutes of one core a run)")
    return None


def estimate(scenario: str | os.PathLike | dict[str, Any], out: str | os.PathLike, seed: int | None = None,
             overrides: Iterable[str] = (), cluster: Any = None, workers: int | None = None,
             threshold: float = DEFAULT_THRESHOLD, max_hosts: int = 1000, window_cap: str = WINDOW_CAPS[0],
             progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Estimate a scenario and write its result directory ``out`` whole; returns its
    ``summary.json``. ``cluster``: None (this machine's cores, ``workers`` threads, for the
    simulations and the passes over every flow alike), a Dask
    scheduler address, ``"local"`` (a LocalCluster of ``workers`` processes), or a Client or
    cluster object. ``threshold``: the clustering distance (0: every link simulated).
    ``window_cap``: ``"nics"`` (a stock NIC's link simulation caps its senders' windows at its
    paths' BDP) or ``"off"``.
    ``progress(done, total)`` is called as jobs finish."""
    from . import workers as run

    t0 = time.perf_counter()
    with result_dir(out) as tmp:
        # With a cluster the simulations are its workers'; this machine's cores route the flows.
        doc, p = plan(scenario, seed, overrides, threshold, max_hosts, window_cap, workers if cluster is None else None)
        t1 = time.perf_counter()
        prog = progress or (lambda done, total: None)
        where = run.run_local(p, workers, prog) if cluster is None else run.run_dask(p, cluster, workers, prog)
        t2 = time.perf_counter()
        summary = json.loads(p.finish(str(tmp), json.dumps([["simulate", t2 - t1]]), json.dumps(where)))
        summary["wall_time_s"] = time.perf_counter() - t0
        summary["ecnlab"] = build_info()
        order = ["scenario", "seed", "sim_time_s", "wall_time_s", "approximate", "events", "packet_hops"]
        summary = {k: summary[k] for k in order} | {k: v for k, v in summary.items() if k not in order}
        ran = doc | {"seed": summary["seed"]}
        summary["soundness"] = _soundness(summary, ran, Path(tmp) / "flows.csv")
        (Path(tmp) / "scenario.json").write_text(json.dumps(ran, indent=2) + "\n")
        (Path(tmp) / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def _soundness(summary: dict[str, Any], scenario: dict[str, Any], flows: Path) -> dict[str, Any]:
    """The soundness guard on the estimate's figures: the rules it can judge (each link's
    queues are its cluster representative's), and those it cannot."""
    from ..inputs import MAX_FILE_BYTES
    from ..soundness import RULE_NAMES, Run, assess

    skip = [r for r in RULE_NAMES if r not in SOUNDNESS_JUDGED]
    note = ("judged on estimated figures: flows' FCTs and timeouts as estimated, each link's queues and NIC as its "
            "cluster representative's simulation; the rules reading the time series or the ports' utilization are "
            "not judged")
    # A fabric's flows.csv may be larger than the guard reads (ecnlab.inputs): its rules per
    # flow are then not judged, and say so, rather than the estimate failing at its end.
    if flows.stat().st_size > MAX_FILE_BYTES:
        skip += [r for r in PER_FLOW_RULES if r not in skip]
        note += (f"; flows.csv is larger than the guard reads ({MAX_FILE_BYTES >> 20} MB), so its per-flow rules "
                 f"({', '.join(PER_FLOW_RULES)}) are not judged")
        flows = None
    verdict = assess(Run(summary, scenario, flows, None), skip=skip).as_dict()
    verdict["not_judged"] = skip
    verdict["note"] = note
    return verdict
