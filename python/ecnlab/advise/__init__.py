"""``ecnlab advise``: which marking scheme, with which parameters, for the operator's switch,
their RTTs and their traffic; a decisive answer from sound runs; the settings as each target
platform takes them.

Read first: ``network.py`` (the operator's network as a scenario: ``--scenario FILE`` or the
flags, checked by the core, sound by construction), ``rules.py`` (the papers' rules for the
starting points), ``grid.py`` (the points validated), ``validate.py`` (screening, then a race
of the schemes' best points on paired seeds until the interval decides), ``verdict.py`` (the
paired difference and the verdict in words), ``metrics.py`` (what an operator reads of a
run), ``sound.py`` (the shared soundness guard), ``platforms/`` (the files), ``report.py``.

``DIR`` gets ``advice.json`` (every input, the verdict with its interval and seeds, how many
runs were unsound and why, each scheme's points, the race, the recommendation's metrics per
class and queue), ``report.html`` (+ ``figures/``), ``scenario.toml`` (the recommendation,
to rerun and edit), ``config/`` (one file per platform, ``NOTES.md``) and ``validation/``
(the runs)."""

from __future__ import annotations

import os
from typing import Any

from ..scenario import ScenarioError
from . import grid, network
from .options import DEFAULT_SCHEMES, METRICS, Inputs, check_choices
from .rules import Start, skipped, starting_points
from .validate import Budget, runner_for, validate

__all__ = ["Inputs", "advise", "DEFAULT_SCHEMES"]

VALIDATE = {  # flows per run, screening seeds, seeds added per step of the race, run budget
    "quick": {"flows": 500, "screen": 3, "batch": 2, "runs": 200},
    "full": {"flows": 3000, "screen": 5, "batch": 2, "runs": 600},
    "none": {"flows": 500, "screen": 0, "batch": 0, "runs": 0},
}
# Simplest first: the tie-break of equivalent schemes after the platforms that express them.
SIMPLICITY = ("per_queue", "dctcp_red", "tcn", "red", "codel", "ecn_sharp", "mq_ecn", "dualq")


def _prepare(inp: Inputs) -> tuple[network.Network, list[Start], list[Any], list[grid.GridPoint], dict[str, Any]]:
    """Everything checked before anything runs or is written."""
    check_choices(inp)
    net = network.build(inp)
    cfg = VALIDATE[inp.validate]
    before = [t.get("flows") for t in net.doc.get("traffic", [])]
    network.scale_flows(net.doc, inp.flows or cfg["flows"])
    after = [t.get("flows") for t in net.doc.get("traffic", [])]
    if inp.validate != "none" and inp.scenario is not None and before != after and any(b is not None for b in before):
        net.notes.append(f"each run carries {sum(f or 0 for f in after)} generated flows "
                         f"({'--flows' if inp.flows else f'the default of --validate {inp.validate}'}), not the "
                         f"scenario's {sum(f or 0 for f in before)}")
    cc = network.resolve(net.doc, net.blame, net.source)["transport"]["cc"]
    skips = skipped(list(inp.schemes), net.scheduler)
    starts = starting_points([s for s in inp.schemes if s not in {k.scheme for k in skips}], net.rate_bps, net.rtt,
                             cc, net.scheduler)
    pts = grid.points(starts, inp.validate)
    network.with_buffer(net, grid.largest_queue_bytes(pts, net.rate_bps), inp.buffer is not None or
                        inp.scenario is not None)
    network.resolve(net.doc, net.blame, net.source)
    grid.check_fit(pts, net)
    first = next((p for p in pts if not p.skip), None)
    if inp.validate != "none" and first is not None:
        _exact_or_estimate(net, grid.with_point(net.doc, first))
    return net, starts, skips, pts, cfg


def _exact_or_estimate(net: network.Network, doc: dict[str, Any]) -> None:
    """Validate by exact runs, or, for a fabric beyond exact simulation, by ``ecnlab
    estimate`` (issue 34; the threshold is ``ecnlab.estimate.beyond_exact``'s), and say so."""
    from ..estimate import beyond_exact

    net.beyond_exact = beyond_exact(doc)
    if net.beyond_exact is None:
        network.cap_duration(net, doc)
        return
    if "rtt_variation" in net.doc:
        raise ScenarioError(f"{net.blame.get('rtt_variation', 'rtt_variation')}: this fabric is beyond exact simulation "
                            f"({net.beyond_exact}) and its estimate does not take an RTT variation (the connections' "
                            f"extra delays are drawn as an exact run opens them): leave it out")
    net.notes.append(f"the candidates are validated with ecnlab estimate (approximate, after Parsimon), not exact runs: "
                     f"{net.beyond_exact}")


def advise(inp: Inputs, out: str | os.PathLike, progress: bool = True) -> dict[str, Any]:
    """Advise on ``inp`` and write the advice as the directory ``out``, whole: every input
    is checked before anything is written, and the files are written aside and renamed into
    place once complete (``ecnlab.outdir``; an earlier advice's ``validation/`` runs are
    reused). Raises ScenarioError for bad input."""
    from ..outdir import result_dir

    net, starts, skips, pts, cfg = _prepare(inp)
    with result_dir(out, keep=("validation",)) as tmp:
        outcome, runner = None, None
        if inp.validate != "none" and any(not p.skip for p in pts):
            column = METRICS[inp.metric][0]
            runner = runner_for(net, tmp / "validation", column, inp.jobs, progress)
            b = inp.budget
            budget = Budget(b.runs, b.seconds) if b else Budget(cfg["runs"], None)
            by_scheme = {s.scheme: s for s in starts}

            def extend(p: grid.GridPoint, f: float) -> grid.GridPoint:
                q = grid.point(by_scheme[p.scheme], f)
                grid.check_fit([q], net)
                return q

            outcome = validate(pts, runner, inp.seeds or cfg["screen"], cfg["batch"], budget, extend)
        from .advice import compose

        return compose(tmp, inp, net, starts, skips, pts, outcome, runner.name if outcome else "none")


def final_scenario(net: network.Network, scheme: str, params: dict[str, Any], header: str) -> str:
    """``scenario.toml``: the operator's network with the recommended marking."""
    import tomli_w

    doc = grid.with_point(net.doc, grid.GridPoint(scheme, 1.0, params, next(iter(params))))
    doc["description"] = header
    return f"# {header}\n# rerun: ecnlab run scenario.toml --out DIR\n" + tomli_w.dumps(_tomlable(doc))


def _tomlable(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _tomlable(x) for k, x in v.items() if x is not None}
    if isinstance(v, list):
        return [_tomlable(x) for x in v]
    return v
