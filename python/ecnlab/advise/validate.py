"""Sequential validation: which of the candidate points is best on the ranking metric, with
an interval that decides.

1. Screening: every point (each scheme at each factor of its starting parameters,
   ``grid.py``) on the same ``screen`` seeds. A point with an unsound run (``sound.judge``:
   the shared guard) is never ranked; each scheme's best sound point is its candidate.
2. A race between the candidates (as in racing for model selection): while more than one
   is alive, each gets ``batch`` more seeds, paired (the same seeds for all, so the same
   traffic); after each batch the leader is the candidate of the lowest mean, and a
   candidate whose paired difference to it has a 95 % interval above zero is out
   (``verdict.Difference``). The race ends when one candidate is left (decisive), when the
   leader and every one left are within ±2 % (equivalent), or when the budget (runs, or
   wall-clock time) is spent (undecided). A candidate with an unsound run in the race
   leaves it, named with the reason.

The runs are made by a ``Runner``: ``ExactRunner`` simulates each run exactly through the
sweep's run store (``validation/``: a later advise into the same directory reuses the runs
it has, an interrupted one keeps those it finished). A fabric beyond exact simulation
(``ecnlab.estimate.beyond_exact``: memory, or the data segment-hops of a run) is validated
by ``EstimateRunner``, ``ecnlab estimate`` of each run, behind the same interface:
``run(wanted)`` returns one ``Run`` per (point, seed), whatever made it."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol

from . import sound
from .grid import GridPoint, with_point
from .network import Network
from .verdict import Difference

Key = tuple[str, float, int]  # (scheme, factor, seed)
Extend = Callable[[GridPoint, float], "GridPoint | None"]  # a scheme's point at another factor (checked to fit)


@dataclass
class Run:
    """One validation run of one point."""

    point: GridPoint
    seed: int
    dir: Path | None
    value: float | None  # the ranking metric
    verdict: sound.Verdict | None  # None: failed
    error: str = ""

    @property
    def sound(self) -> bool:
        return self.verdict is not None and self.verdict.sound and self.value is not None


class Runner(Protocol):
    name: str

    def run(self, wanted: list[tuple[GridPoint, int]]) -> dict[Key, Run]: ...


def runner_for(net: Network, out: Path, column: str, jobs: int | None, progress: bool) -> "Runner":
    """How this network's runs are made: exactly, by the simulator, or estimated when the
    fabric is beyond exact simulation (``net.beyond_exact``, decided before anything ran)."""
    if net.beyond_exact is not None:
        return EstimateRunner(net, out, column, jobs)
    return ExactRunner(net, out, column, jobs, progress)


class EstimateRunner:
    """Every run estimated (``ecnlab.estimate``, approximate) into ``out/estimates/<id>``, the
    id a digest of the run's scenario, seed and the builds: a later advise into the
    same directory reuses the estimates it has, an interrupted one keeps those it finished."""

    name = "ecnlab estimate (approximate: the fabric is beyond exact simulation)"

    def __init__(self, net: Network, out: Path, column: str, jobs: int | None):
        self.net, self.out, self.column, self.jobs = net, out, column, jobs

    def run(self, wanted: list[tuple[GridPoint, int]]) -> dict[Key, Run]:
        import hashlib
        import json

        from .. import _core
        from ..api import engine_id
        from ..estimate import estimate
        from ..inputs import read_summary
        from ..scenario import ScenarioError, to_json
        from ..sweep.store import summary_row

        out = {}
        for p, seed in wanted:
            doc = with_point(self.net.doc, p)
            key = hashlib.sha256(json.dumps([to_json(doc), seed, engine_id(), _core.ESTIMATE_BUILD]).encode()).hexdigest()[:16]
            d = self.out / "estimates" / key
            k = (p.scheme, p.factor, seed)
            if not (d / "summary.json").exists():
                try:
                    estimate(doc, d, seed=seed, workers=self.jobs)
                except ScenarioError as e:
                    out[k] = Run(p, seed, None, None, None, str(e))
                    continue
            v = summary_row(read_summary(d / "summary.json")).get(self.column)
            out[k] = Run(p, seed, d, float(v) if v not in (None, "") and float(v) > 0 else None, sound.judge(d))
        return out


class ExactRunner:
    """Every run simulated exactly (``ecnlab.sweep.run_points`` into ``out``)."""

    name = "exact simulation"

    def __init__(self, net: Network, out: Path, column: str, jobs: int | None, progress: bool):
        self.net, self.out, self.column, self.jobs, self.progress = net, out, column, jobs, progress
        self.points: dict[Key, Any] = {}
        self.stage = 0

    def run(self, wanted: list[tuple[GridPoint, int]]) -> dict[Key, Run]:
        from ..sweep import Point, run_points

        for p, seed in wanted:
            self.points.setdefault((p.scheme, p.factor, seed), (p, Point(with_point(self.net.doc, p), [], seed=seed,
                                                                         params={"scheme": p.scheme, "factor": p.factor})))
        self.stage += 1
        res = run_points([pt for _, pt in self.points.values()], self.out, jobs=self.jobs, progress=self.progress,
                         label=f"advise, stage {self.stage}: ")
        want = {(p.scheme, p.factor, s) for p, s in wanted}
        out = {}
        for row in res.rows:
            k = (str(row["scheme"]), float(row["factor"]), int(row["seed"]))
            if k not in want:
                continue
            p = self.points[k][0]
            if row["status"] != "ok":
                out[k] = Run(p, k[2], None, None, None, str(row.get("error", "")))
                continue
            d = self.out / "runs" / str(row["key"])
            v = row.get(self.column)
            out[k] = Run(p, k[2], d, float(v) if v not in (None, "") and float(v) > 0 else None, sound.judge(d))
        return out


@dataclass
class Budget:
    runs: int | None
    seconds: float | None
    started: float = field(default_factory=time.monotonic)

    def spent(self, runs: int, next_batch: int) -> str | None:
        """Why no further batch may run (None: it may)."""
        if self.runs is not None and runs + next_batch > self.runs:
            return f"the budget of {self.runs} runs is spent ({runs} made, a batch of {next_batch} would exceed it)"
        if self.seconds is not None and time.monotonic() - self.started >= self.seconds:
            return f"the budget of {self.seconds:g} s is spent"
        return None


@dataclass
class Outcome:
    """What validation found."""

    runs: dict[Key, Run]
    screen: list[int]  # the screening seeds
    candidates: dict[str, GridPoint]  # each scheme's best sound point
    alive: list[str]
    out: dict[str, tuple[str, Difference | None]]  # scheme -> (why it left the race, its difference)
    leader: str | None
    history: list[dict[str, Any]]
    end: str  # decisive, equivalent, undecided, sole, none
    why_end: str = ""
    discarded: dict[int, str] = field(default_factory=dict)  # seed -> why (every run on it unsound)

    def values(self, p: GridPoint) -> dict[int, float]:
        return {r.seed: r.value for k, r in self.runs.items() if k[:2] == (p.scheme, p.factor) and r.sound}

    def point_runs(self, p: GridPoint) -> list[Run]:
        return [r for k, r in sorted(self.runs.items()) if k[:2] == (p.scheme, p.factor)]


def _why(r: Run) -> str:
    return "; ".join(t for _, t in r.verdict.flags) if r.verdict else f"failed: {r.error}"


def _discard(o: Outcome, points: list[GridPoint], seeds: list[int]) -> list[int]:
    """The seeds of ``seeds`` on which some of ``points`` ran sound; a seed on which every one
    is unsound is set aside (``o.discarded``): the fault is its traffic's (a load far from the
    stated one), shared by every scheme, not any scheme's."""
    kept = []
    for seed in seeds:
        rs = [o.runs[(p.scheme, p.factor, seed)] for p in points]
        if any(r.sound for r in rs):
            kept.append(seed)
        else:
            o.discarded[seed] = _why(rs[0])
    return kept


def _screen(o: Outcome, pts: list[GridPoint]) -> dict[str, GridPoint]:
    """Each scheme's best point among those whose every kept screening run is sound."""
    best: dict[str, tuple[float, GridPoint]] = {}
    for p in pts:
        rs = [o.runs[(p.scheme, p.factor, s)] for s in o.screen]
        if not rs or not all(r.sound for r in rs):
            continue
        m = sum(r.value for r in rs) / len(rs)
        if p.scheme not in best or m < best[p.scheme][0]:
            best[p.scheme] = (m, p)
    return {s: p for s, (_, p) in best.items()}


EXTEND_ROUNDS = 1  # one point past the edge of a scheme's sweep: twice (half) its last factor


def _extend(o: Outcome, pts: list[GridPoint], runner: Runner, extend: Extend) -> None:
    """A scheme whose best point is the lowest (highest) of its sweep gets the point at half
    (twice) that factor, on the screening seeds, and is judged again: the best threshold
    may lie beyond the papers' range."""
    for _ in range(EXTEND_ROUNDS):
        new = []
        for s, p in o.candidates.items():
            fs = sorted(x.factor for x in pts if x.scheme == s and not x.skip)
            f = fs[0] / 2 if p.factor == fs[0] else fs[-1] * 2 if p.factor == fs[-1] else None
            tried = any(x.scheme == s and x.factor == f for x in pts)
            q = extend(p, f) if f is not None and len(fs) > 1 and not tried else None
            if q is not None:
                pts.append(q)
                new += [q] if not q.skip else []
        if not new:
            return
        o.runs.update(runner.run([(q, seed) for q in new for seed in o.screen]))
        o.candidates = _screen(o, [p for p in pts if not p.skip])


def validate(pts: list[GridPoint], runner: Runner, screen: int, batch: int, budget: Budget,
             extend: Extend | None = None) -> Outcome:
    """Screen the points (``pts`` gains the points past a sweep's edge, ``_extend``), then
    race the schemes' best points (module doc)."""
    runnable = [p for p in pts if not p.skip]
    seeds = list(range(1, screen + 1))
    o = Outcome(runner.run([(p, s) for p in runnable for s in seeds]), [], {}, [], {}, None, [], "none")
    o.screen = _discard(o, runnable, seeds)
    o.candidates = _screen(o, runnable)
    if extend is not None and o.screen:
        _extend(o, pts, runner, extend)
    o.alive = sorted(o.candidates)
    if not o.candidates:
        o.why_end = "no point ran sound on every screening seed"
        return o
    last = seeds[-1]
    while True:
        vals = {s: o.values(o.candidates[s]) for s in o.alive}
        o.leader = min(o.alive, key=lambda s: (sum(vals[s].values()) / max(len(vals[s]), 1), s))
        diffs = {s: Difference.of(vals[o.leader], vals[s]) for s in o.alive if s != o.leader}
        o.history.append({"seeds": min((d.n for d in diffs.values()), default=len(vals[o.leader])),
                          "leader": o.leader, "others": {s: d.as_dict() for s, d in diffs.items()}})
        for s, d in diffs.items():
            if d.decided:
                o.out[s] = ("worse", d)
                o.alive.remove(s)
        left = [s for s in o.alive if s != o.leader]
        if not left:
            o.end = "decisive" if any(d is not None for _, d in o.out.values()) else "sole"
            return o
        if all(diffs[s].equivalent for s in left):
            o.end = "equivalent"
            return o
        why = budget.spent(len(o.runs), batch * len(o.alive))
        if why:
            o.end, o.why_end = "undecided", why
            return o
        new = list(range(last + 1, last + 1 + batch))
        last = new[-1]
        alive = [o.candidates[s] for s in o.alive]
        o.runs.update(runner.run([(p, seed) for p in alive for seed in new]))
        for seed in _discard(o, alive, new):
            for p in alive:
                r = o.runs[(p.scheme, p.factor, seed)]
                if not r.sound and p.scheme in o.alive:
                    o.out[p.scheme] = (f"an unsound run (seed {seed}) where others ran sound: {_why(r)}", None)
                    o.alive.remove(p.scheme)
        if len(o.alive) == 1:
            o.leader = o.alive[0]
            o.end = "decisive" if any(d is not None for _, d in o.out.values()) else "sole"
            return o
