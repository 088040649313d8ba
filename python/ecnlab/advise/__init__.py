"""``ecnlab advise``: which marking scheme, with which parameters, for this switch, these
RTTs and this traffic, and how to type it into the switch.

Read first: ``rules.py`` (the papers' rules for starting points), ``platforms.py`` (the
target platforms' units), ``ecnlab.sweep`` (the runs) and ``ecnlab.report.stats`` (means
and 95 % intervals over seeds).

Steps: (1) the RTT input (``rtt.py``) and the link rate give each scheme its starting
parameters by its paper's rule; (2) a scenario is built from the inputs: a star of
``senders`` hosts sending to one receiver through the switch's port of ``queues`` queues
under the given scheduler, the workload's flows at the given load spread over the queues
(a class per queue), the RTT distribution as per-flow extra delay; (3) a small sweep
(``factors`` x each starting point, the same ``seeds`` for every point, so every scheme
sees the same traffic) ranks the points by small-flow FCT (average, then p99), and reports
the cost to large flows and each queue's share of the bottleneck port against its weight;
(4) the best point is the recommendation; its margin of error is the 95 % interval of its
paired difference (same seeds) to the runner-up scheme. ``DIR`` gets ``advice.json``,
``report.html`` (+ ``figures/``), ``scenario.toml`` (the recommendation, to rerun and edit),
``config/`` (one file per platform) and ``validation/`` (the sweep's store).
"""

from __future__ import annotations

import copy
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import _core
from ..report.stats import mean_ci95
from ..scenario import ScenarioError
from .rtt import RttProfile
from .rules import Start, starting_points

VALIDATE = {  # flows per run, seeds, sweep factors around each starting point
    "quick": {"flows": 500, "seeds": 5, "factors": (0.25, 0.5, 1.0, 2.0)},
    "full": {"flows": 3000, "seeds": 10, "factors": (0.25, 0.5, 1.0, 2.0, 4.0)},
}
DEFAULT_SCHEMES = ["tcn", "ecn_sharp", "per_queue"]


@dataclass
class Inputs:
    link_rate: str
    rtt: RttProfile
    queues: int = 8
    scheduler: str = "sp_dwrr"
    transport: str = "dctcp"
    workload: str = "websearch"
    load: float = 0.7
    schemes: tuple[str, ...] = tuple(DEFAULT_SCHEMES)
    platforms: tuple[str, ...] = ("sonic", "tc", "nvue", "junos")
    validate: str = "quick"
    senders: int = 8
    buffer: str | None = None
    flows: int | None = None
    seeds: int | None = None
    jobs: int | None = None


def _check(inp: Inputs) -> None:
    names = set(_core.scheme_names())
    for s in inp.schemes:
        if s not in names:
            raise ScenarioError(f"--schemes: unknown scheme `{s}` ({', '.join(sorted(names))})")
    if inp.scheduler not in _core.scheduler_names():
        raise ScenarioError(f"--scheduler: unknown scheduler `{inp.scheduler}` ({', '.join(_core.scheduler_names())})")
    # (0, 1], the rule of a scenario's traffic load (it becomes traffic[0].load): a load of 1
    # is a port at saturation, a question an operator may ask.
    if not 0 < inp.load <= 1:
        raise ScenarioError(f"--load: {inp.load} is not in (0, 1]")
    for name in ("queues", "senders", "flows", "seeds", "jobs"):
        v = getattr(inp, name)
        if v is not None and v < 1:  # None: the default; 0 is no count at all
            raise ScenarioError(f"--{name}: {v} must be at least 1")
    if inp.validate not in ("quick", "full", "none"):
        raise ScenarioError(f"--validate: `{inp.validate}` is not quick, full or none")
    from .platforms import PLATFORMS

    for p in inp.platforms:
        if p not in PLATFORMS:
            raise ScenarioError(f"--platform: unknown platform `{p}` ({', '.join(PLATFORMS)})")
    try:
        _core.parse_unit("rate", inp.link_rate)
    except ValueError as e:
        raise ScenarioError(f"--link-rate: {e}") from None


def build_scenario(inp: Inputs, starts: list[Start], flows: int) -> dict[str, Any]:
    """The scenario of the simulated check (every scheme's starting parameters set, so
    ``marking.scheme`` alone switches between them)."""
    rtt = inp.rtt
    # Base RTT = 4 one-way link delays on the star (sender -> switch -> receiver and back);
    # the rest of the distribution is per-flow extra delay on the data path.
    base_us = rtt.min_us
    points = [[f"{max(r - base_us, 0.0):.3f}us", q] for r, q in (rtt.points or [(base_us, 0.0), (base_us, 1.0)])]
    points[0][1] = 0.0
    largest = 0
    for s in starts:
        for k, v in s.params.items():
            if k.endswith(("k", "min_th", "max_th")):
                largest = max(largest, _core.parse_unit("size", str(v)))
    buffer = inp.buffer or f"{max(4 * largest * 2, 1_000_000)}B"  # above every threshold of the sweep (x2)
    sched: dict[str, Any] = {"kind": inp.scheduler, "quantum": "1.5KB"}
    if inp.scheduler.startswith("sp_"):
        sched["strict"] = 1
    marking: dict[str, Any] = {"scheme": starts[0].scheme if starts else "tcn"}
    for s in starts:
        for k, v in s.params.items():
            node = marking
            parts = k.split(".")[1:]
            for p in parts[:-1]:
                node = node.setdefault(p, {})
            node[parts[-1]] = v
    hosts = inp.senders + 1
    return {
        "name": "advise",
        "description": (f"ecnlab advise: {inp.link_rate} star, {inp.senders} senders -> 1 receiver, {inp.queues} "
                        f"queues ({inp.scheduler}), {inp.workload} at load {inp.load}, RTT {rtt.min_us:g}-"
                        f"{rtt.p99_us:g} us (p99), {inp.transport}"),
        "duration": "30s",
        "seed": 1,
        "topology": {"kind": "star", "hosts": hosts, "link_rate": inp.link_rate, "link_delay": f"{base_us / 4:.3f}us"},
        "rtt_variation": {"mode": "per_flow", "delay": {"dist": "empirical", "points": points}},
        "switch": {"queues": inp.queues, "buffer": buffer, "scheduler": sched},
        "marking": marking,
        "transport": {"cc": inp.transport, "rto_min": "5ms", "rto_init": "5ms"},
        "host": {"persistent_connections": True},
        "traffic": [{"kind": "poisson", "cdf": inp.workload, "load": inp.load, "flows": flows,
                     "senders": list(range(1, hosts)), "receivers": [0], "classes": list(range(inp.queues))}],
        "metrics": {"sample_interval": "1ms"},
    }


def _scaled(start: Start, f: float) -> list[str]:
    out = []
    for k in start.scale_keys:
        v = str(start.params[k])
        if k.endswith(("target", "threshold", "interval")):
            out.append(f"{k}={_core.parse_unit('time', v) * f / 1e3:.3f}us")
        else:
            out.append(f"{k}={max(int(_core.parse_unit('size', v) * f), 1500)}B")
    return out


def _beyond_buffer(start: Start, f: float, buffer_bytes: int) -> str | None:
    """Why the point ``f`` x ``start`` cannot run: a scaled byte threshold at or above the
    port buffer (None if it can)."""
    for kv in _scaled(start, f):
        k, v = kv.split("=", 1)
        if k.endswith(("k", "min_th", "max_th")) and _core.parse_unit("size", v) >= buffer_bytes:
            return f"{f} x: {k} = {v} is not below the buffer, {buffer_bytes} B"
    return None


def _queue_shares(summary: dict[str, Any], port: str, weights: dict[int, float]) -> dict[int, float]:
    qs = [q for q in summary.get("queues", []) if q["port"] == port]
    tot = sum(q["goodput_bps"] for q in qs if q["queue"] in weights) or 1.0
    return {q["queue"]: q["goodput_bps"] / tot for q in qs if q["queue"] in weights}


METRICS = ["fct_small_avg_us", "fct_small_p99_us", "fct_large_avg_us", "fct_all_avg_us", "fct_medium_avg_us"]


def _thresholds_bytes(params: dict[str, Any]) -> dict[str, int]:
    """The queue-length thresholds among a scheme's parameters, in bytes."""
    return {k: _core.parse_unit("size", str(v)) for k, v in params.items() if k.endswith(("k", "min_th", "max_th"))}


def _check_buffer(inp: Inputs, starts: list[Start]) -> None:
    """A given --buffer must hold every starting threshold: a threshold at or above the
    buffer never marks (the queue drops first), and no switch takes it."""
    if inp.buffer is None:
        return
    try:
        buf = _core.parse_unit("size", inp.buffer)
    except ValueError as e:
        raise ScenarioError(f"--buffer: {e}") from None
    for s in starts:
        for k, b in _thresholds_bytes(s.params).items():
            if b >= buf:
                raise ScenarioError(f"--buffer {inp.buffer}: the starting {k} of {s.scheme} ({b}B, by "
                                    f"its rule) is not below it; give the real port buffer, or no --buffer")


# The check's scenario fields that come from an option, for the one line of a refusal.
OPTION_OF_FIELD = {"topology.link_rate": "--link-rate", "topology.hosts": "--senders", "switch.queues": "--queues",
                   "switch.buffer": "--buffer", "switch.scheduler": "--scheduler", "transport.cc": "--transport",
                   "traffic[0].cdf": "--workload", "traffic[0].load": "--load", "traffic[0].flows": "--flows"}


def _as_option(e: ScenarioError, scenario: dict[str, Any]) -> ScenarioError:
    """The core's refusal of the check's scenario, named after the option that set the field."""
    path = getattr(e, "field_path", None) or ""
    for field_, opt in OPTION_OF_FIELD.items():
        if path == field_ or path.startswith(field_ + "."):
            return ScenarioError(f"{opt}: {e}")
    return ScenarioError(f"the check's scenario (from the options): {e}")


def advise(inp: Inputs, out: str | os.PathLike, progress: bool = True) -> dict[str, Any]:
    """Advise on ``inp`` and write the advice as the directory ``out``, whole: every input
    is checked before anything is written, and the files are written aside and renamed into
    place once complete (``ecnlab.outdir``; the earlier advice's ``validation/`` runs are
    reused). Raises ScenarioError for bad input."""
    from ..outdir import result_dir

    _check(inp)
    rate_bps = _core.parse_unit("rate", inp.link_rate)
    starts = starting_points(list(inp.schemes), rate_bps, inp.rtt, inp.transport, inp.scheduler)
    _check_buffer(inp, starts)
    cfg = VALIDATE.get(inp.validate, VALIDATE["quick"])
    flows = cfg["flows"] if inp.flows is None else inp.flows
    seeds = list(range(1, (cfg["seeds"] if inp.seeds is None else inp.seeds) + 1))
    scenario = build_scenario(inp, starts, flows)
    from ..api import validate as _validate

    try:
        _validate(scenario)
    except ScenarioError as e:
        raise _as_option(e, scenario) from None
    with result_dir(out, keep=("validation",)) as tmp:
        return _advise_into(tmp, inp, starts, cfg, flows, seeds, scenario, progress)


def _advise_into(out: Path, inp: Inputs, starts: list[Start], cfg: dict[str, Any], flows: int, seeds: list[int],
                 scenario: dict[str, Any], progress: bool) -> dict[str, Any]:
    """``advise`` into ``out``, a new directory of its own."""
    runnable = [s for s in starts if not s.note and s.scale_keys]
    buffer_bytes = _core.parse_unit("size", scenario["switch"]["buffer"])
    rows = []
    # A point whose scaled threshold reaches the buffer cannot run (nor be configured): left
    # out of the sweep, and each scheme's entry says which (``not_run``).
    beyond = {(s.scheme, f): why for s in runnable for f in cfg["factors"]
              if inp.validate != "none" and (why := _beyond_buffer(s, f, buffer_bytes))}
    if inp.validate != "none" and runnable:
        from .. import sweep as _sweep
        from ..sweep import Point

        pts = [Point(scenario, [f"marking.scheme={s.scheme}", *_scaled(s, f)], seed=seed,
                     params={"scheme": s.scheme, "factor": f})
               for s in runnable for f in cfg["factors"] if (s.scheme, f) not in beyond for seed in seeds]
        df = _sweep(pts, out=out / "validation", jobs=inp.jobs, progress=progress)
        rows = df.to_dict("records")
    # Scheduling: the bottleneck port (toward the receiver), DWRR queues' goodput shares.
    strict = 1 if inp.scheduler.startswith("sp_") else (inp.queues if inp.scheduler == "sp" else 0)
    weights = {q: 1.0 for q in range(strict, inp.queues)}
    wshare = {q: 1 / len(weights) for q in weights} if weights else {}
    port = "s0->h0"
    results = []
    for s in starts:
        entry: dict[str, Any] = {"scheme": s.scheme, "params": s.params, "rule": s.rule, "source": s.source}
        if s.note:
            entry["note"] = s.note
        pts = []
        not_run = [beyond[(s.scheme, f)] for f in cfg["factors"] if (s.scheme, f) in beyond]
        if not_run:
            entry["not_run"] = not_run
        for f in (cfg["factors"] if s in runnable else ()):
            rs = [r for r in rows if r["scheme"] == s.scheme and r["factor"] == f and r["status"] == "ok"]
            if not rs:
                continue
            m = {k: dict(zip(("mean", "ci95", "n"), mean_ci95(r.get(k) for r in rs))) for k in METRICS}
            dev = []
            for r in rs:
                summ = json.loads((out / "validation" / "runs" / r["key"] / "summary.json").read_text())
                sh = _queue_shares(summ, port, weights)
                if sh:
                    dev.append(max(abs(sh.get(q, 0.0) - w) for q, w in wshare.items()))
            m["share_deviation"] = dict(zip(("mean", "ci95", "n"), mean_ci95(dev)))
            pts.append({"factor": f, "params": dict(kv.split("=", 1) for kv in _scaled(s, f)) or s.params,
                        "metrics": m, "keys": [r["key"] for r in rs], "seeds": [int(r["seed"]) for r in rs]})
        if pts:
            best = min(pts, key=lambda p: (p["metrics"]["fct_small_avg_us"]["mean"],
                                           p["metrics"]["fct_small_p99_us"]["mean"]))
            entry["validated"] = {"best_factor": best["factor"], "params": {**s.params, **best["params"]},
                                  "metrics": best["metrics"], "points": pts}
        else:
            entry["validated"] = None
        results.append(entry)
    ranked = sorted((e for e in results if e["validated"]),
                    key=lambda e: (e["validated"]["metrics"]["fct_small_avg_us"]["mean"],
                                   e["validated"]["metrics"]["fct_small_p99_us"]["mean"]))
    rec = _recommend(ranked, rows, starts)
    if rec and len(cfg["factors"]) > 1 and rec["factor"] in (min(cfg["factors"]), max(cfg["factors"])):
        side = "lowest" if rec["factor"] == min(cfg["factors"]) else "highest"
        rec["edge"] = side
        rec["verdict"] += (f"; the best point is the {side} factor swept ({rec['factor']} x the rule), so the "
                           f"optimum may lie beyond it: rerun with the scenario.toml and lower/higher thresholds")
    advice = {"inputs": {"link_rate": inp.link_rate, "rtt": inp.rtt.as_dict(), "queues": inp.queues,
                         "scheduler": inp.scheduler, "transport": inp.transport, "workload": inp.workload,
                         "load": inp.load, "schemes": list(inp.schemes), "validate": inp.validate,
                         "flows_per_run": flows, "seeds": seeds, "factors": list(cfg["factors"]),
                         "bottleneck_port": port},
              "schemes": results, "recommendation": rec}
    # The recommended settings: scenario.toml and the platforms' files.
    import tomli_w

    best_scheme = rec["scheme"] if rec else starts[0].scheme
    best_params = rec["params"] if rec else starts[0].params
    final = copy.deepcopy(scenario)
    final["marking"]["scheme"] = best_scheme
    for k, v in best_params.items():
        node = final["marking"]
        parts = k.split(".")[1:]
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = v
    (out / "scenario.toml").write_text("# ecnlab advise: the recommendation; rerun with ecnlab run scenario.toml\n"
                                       + tomli_w.dumps(final))
    from .platforms import write_configs

    order = [(e["scheme"], e["validated"]["params"]) for e in ranked] or [(s.scheme, s.params) for s in starts]
    factors = cfg["factors"]
    edges = {e["scheme"]: ("lowest" if e["validated"]["best_factor"] == min(factors) else "highest")
             for e in ranked if len(factors) > 1 and e["validated"]["best_factor"] in (min(factors), max(factors))}
    advice["config"] = write_configs(out / "config", list(inp.platforms), order, inp.queues,
                                     scenario["switch"]["scheduler"], buffer_bytes, validated=bool(ranked),
                                     edges=edges)
    (out / "advice.json").write_text(json.dumps(advice, indent=2, default=str) + "\n")
    from .report import write_advice_report

    write_advice_report(out, advice)
    return advice


def _recommend(ranked: list[dict[str, Any]], rows: list[dict[str, Any]], starts: list[Start]) -> dict[str, Any] | None:
    if not ranked:
        return None
    b = ranked[0]
    v = b["validated"]
    rec = {"scheme": b["scheme"], "params": v["params"], "factor": v["best_factor"],
           "small_avg_us": v["metrics"]["fct_small_avg_us"], "small_p99_us": v["metrics"]["fct_small_p99_us"],
           "large_avg_us": v["metrics"]["fct_large_avg_us"]}
    if len(ranked) > 1:
        r = ranked[1]
        bp = next(p for p in v["points"] if p["factor"] == v["best_factor"])
        rp = next(p for p in r["validated"]["points"] if p["factor"] == r["validated"]["best_factor"])
        by_key = {x["key"]: x for x in rows}
        # Paired by seed: the same seed is the same traffic for both schemes.
        a = {s: by_key[k]["fct_small_avg_us"] for s, k in zip(bp["seeds"], bp["keys"])}
        c = {s: by_key[k]["fct_small_avg_us"] for s, k in zip(rp["seeds"], rp["keys"])}
        diffs = [c[s] - a[s] for s in a if s in c]
        mean, ci, n = mean_ci95(diffs)
        rec["runner_up"] = r["scheme"]
        rec["margin_small_avg_us"] = {"mean": mean, "ci95": ci, "n": n}
        separable = n >= 2 and ci == ci and mean - ci > 0
        rec["verdict"] = (f"{b['scheme']} beats {r['scheme']} on small-flow average FCT by {mean:.1f} us "
                          + (f"± {ci:.1f} us (95 %, {n} paired seeds)" if n >= 2 else f"({n} seed, no interval)")
                          + ("" if separable else "; the difference is within the margin of error: more seeds "
                             "(--validate full) are needed to separate them"))
    else:
        rec["verdict"] = f"{b['scheme']} is the only validated scheme"
    return rec
