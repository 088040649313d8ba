"""The catalog's building blocks: an ``Experiment`` (its runs at each scale, its analysis,
figures and claims), a claim as a row (``ClaimDef``: words, the paper's ``Number``, and a
rule of ``rules`` over a reader), and the ``Context`` an analysis reads runs through: the
``results.csv`` rows and each run's compact data (its summary, soundness verdict and the few
series its entry keeps, ``Experiment.series``), from a run store or from the committed
results alike, so that every claim is judged again without a run."""

from __future__ import annotations

import json
import math
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from ..sweep import Point, override
from .numbers import Number
from .rules import Unavailable

SCALES = ("quick", "paper")

__all__ = ["SCALES", "ClaimDef", "Experiment", "CATALOG", "register", "grid", "axis", "cases", "Context", "Claim",
           "Unavailable", "NoRunData", "pct_lower", "not_run_claims", "RunFiles", "compact_summary"]


@dataclass(frozen=True)
class ClaimDef:
    """One claim of a paper, declared once: an id (unique within the experiment), the claim in
    words (no number: the paper's is ``number``), the ``Number`` it is judged against and
    how (``rule``: a rule of ``rules`` over a reader)."""

    id: str
    text: str
    number: Number
    rule: Any


@dataclass
class Experiment:
    """One entry of SPEC §6.

    ``points(scale, seeds)`` lists the runs (the same seeds and traffic for every scheme).
    ``tables(ctx)`` is the analysis: it reads the runs (``Context``) and returns the data
    (name -> an ``FctTable``, a DataFrame, a dict, a number, or ``Unavailable(reason)``)
    that the claims read and ``draw(ctx, data)`` draws. ``series(files)`` keeps, per run,
    what the analysis reads beyond the summary (a trace, a count from flows.csv): saved with
    the results, so that the analysis runs from them. ``requires()`` returns None when the
    simulator can run the experiment, else why not ("not run: <reason>"). ``seeds``: per
    scale; 1 where the scenario has no random input (every seed is the same run: one draw)."""

    id: str
    paper: str
    figures: str
    title: str
    claims: list[ClaimDef]
    points: Callable[[str, list[int]], list[Point]]
    tables: Callable[["Context"], dict[str, Any]]
    draw: Callable[["Context", dict[str, Any]], None] | None = None
    series: Callable[["RunFiles"], dict[str, Any]] | None = None
    scenario: str | None = None
    requires: Callable[[], str | None] | None = None
    notes: list[str] = field(default_factory=list)
    seeds: dict[str, int] = field(default_factory=lambda: {"quick": 3, "paper": 3})
    scale_notes: dict[str, str] = field(default_factory=dict)
    #: Soundness rules (``ecnlab.soundness.RULE_NAMES``) whose findings are what this
    #: experiment measures, so not a flaw of its runs (an incast's timeouts).
    guard_expected: tuple[str, ...] = ()

    def __post_init__(self):
        from ..soundness import RULE_NAMES

        unknown = set(self.guard_expected) - set(RULE_NAMES)
        if unknown:
            raise ValueError(f"{self.id}: guard_expected names no soundness rule: {sorted(unknown)}")
        ids = [c.id for c in self.claims]
        if len(set(ids)) != len(ids):
            raise ValueError(f"{self.id}: a claim id twice")


CATALOG: dict[str, Experiment] = {}


def register(exp: Experiment) -> Experiment:
    if exp.id in CATALOG:
        raise ValueError(f"duplicate catalog id {exp.id}")
    CATALOG[exp.id] = exp
    return exp


# --------------------------------------------------------------------------------------
# Helpers for point grids


def grid(scenario: str | dict, seeds: Sequence[int], axes: Sequence[tuple[str, Sequence[tuple[Any, Sequence[str]]]]],
         fixed: Sequence[str] = ()) -> list[Point]:
    """The cartesian product of named axes (each a list of (label, overrides)) and seeds;
    every combination gets the same seeds, so every scheme sees the same traffic."""
    import itertools

    pts = []
    for combo in itertools.product(*[vals for _, vals in axes]):
        params = {name: label for (name, _), (label, _) in zip(axes, combo)}
        ovs = list(fixed) + [o for _, ov in combo for o in ov]
        for s in seeds:
            pts.append(Point(scenario, ovs, s, dict(params)))
    return pts


def axis(name: str, values: Sequence[Any], key: str | Callable[[Any], Sequence[str]]) -> tuple[str, list]:
    """An axis whose values set ``key`` (or, given a function, whose overrides it returns)."""
    if callable(key):
        return name, [(v, list(key(v))) for v in values]
    return name, [(v, [override(key, v)]) for v in values]


def cases(name: str, table: dict[str, Sequence[str]]) -> tuple[str, list]:
    """An axis of named override sets, e.g. schemes: {"tcn": ["marking.scheme=tcn"]}."""
    return name, [(k, list(v)) for k, v in table.items()]


def pct_lower(base: float | None, new: float | None) -> float | None:
    """How much lower ``new`` is than ``base``, in percent (negative: higher)."""
    try:
        b, n = float(base), float(new)
    except (TypeError, ValueError):
        return None
    if not (math.isfinite(b) and math.isfinite(n)) or b == 0:
        return None
    return (b - n) / b * 100.0


# --------------------------------------------------------------------------------------
# A run's files, and the compact data the results keep of it


class RunFiles:
    """One run directory of the store, as an entry's ``series`` reads it (each file once)."""

    def __init__(self, run_dir: Path):
        self.dir = Path(run_dir)
        self._cache: dict[str, Any] = {}

    def _csv(self, name: str):
        from ..inputs import read_csv

        if name not in self._cache:
            self._cache[name] = read_csv(self.dir / name)
        return self._cache[name]

    def timeseries_of(self, port: str, queue: int, t_s: tuple[float, float] | None = None):
        """The rows of timeseries.csv of one queue (within ``t_s``, seconds), read in chunks:
        a run of seconds sampled every 10 us writes hundreds of MB, beyond what is read whole."""
        from ..inputs import read_csv

        def keep(c):
            m = (c["port"] == port) & (c["queue"] == queue)
            return m & (c["t_s"] >= t_s[0]) & (c["t_s"] <= t_s[1]) if t_s else m

        return read_csv(self.dir / "timeseries.csv", keep=keep)

    def timeseries(self):
        return self._csv("timeseries.csv")

    def flows(self):
        return self._csv("flows.csv")

    def probes(self):
        return self._csv("probes.csv")

    def scenario(self) -> dict[str, Any]:
        from ..inputs import read_json

        if "scenario" not in self._cache:
            p = self.dir / "scenario.json"
            self._cache["scenario"] = read_json(p) if p.exists() else {}
        return self._cache["scenario"]

    def summary(self) -> dict[str, Any]:
        from ..inputs import read_json

        if "summary" not in self._cache:
            self._cache["summary"] = read_json(self.dir / "summary.json")
        return self._cache["summary"]


# Lists of a summary kept only for small topologies, as results.csv's per-queue columns
# (sweep.store.summary_row): in a leaf-spine they are hundreds of entries no claim reads.
_LONG_LISTS = ("queues", "ports", "nics", "probes")


def compact_summary(summary: dict[str, Any]) -> dict[str, Any]:
    """A run's summary as the committed results keep it: everything but wall time, and the
    per-queue, port, NIC and probe lists only where they are short (the soundness verdict
    keeps what they said)."""
    from ..sweep.store import MAX_QUEUE_COLUMNS

    out = {k: v for k, v in summary.items() if k != "wall_time_s"}
    for k in _LONG_LISTS:
        if isinstance(out.get(k), list) and len(out[k]) > MAX_QUEUE_COLUMNS:
            out[k] = {"omitted": len(out[k])}
    return out


# --------------------------------------------------------------------------------------
# The analysis context


@dataclass
class Claim:
    """A claim's outcome as ``claims.json`` holds it."""

    id: str
    claim: str
    number: Number
    status: str = "not evaluated"
    judgement: Any = None
    note: str = ""
    rests_on: dict[str, list[Any]] | None = None
    #: The soundness flags of the runs it rests on (``ecnlab.soundness``), one line each.
    unsound: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        n, j = self.number, self.judgement
        d = {"id": self.id, "claim": self.claim, "paper": _clean(n.value) if n.unit not in _NO_VALUE else n.unit,
             "unit": n.unit, "section": n.section, "quote": n.quote, "status": self.status,
             "shown": self.status == "shown", "note": self.note}
        if n.at:
            d["paper_at"] = dict(n.at)
        if j is not None:
            d |= {"direction": j.direction, "magnitude": j.magnitude, "ecnlab": _clean(j.value)}
            if j.interval is not None and len(j.per_seed) > 1:
                d["ci95"] = [_clean(j.interval[0]), _clean(j.interval[1])]
            if j.per_seed:
                d["per_seed"] = [{"seed": r["seed"], "ecnlab": _clean(r["ecnlab"])} for r in j.per_seed]
            if j.band is not None:
                d["band"] = [_clean(j.band[0]), _clean(j.band[1])]
            if j.at is not None:
                d["at"] = j.at_label
            if j.best is not None:
                d["best"] = {k: (_clean(v) if not isinstance(v, list) else [_clean(x) for x in v])
                             for k, v in j.best.items()}
        else:
            d["ecnlab"] = None
        if self.unsound:
            d["unsound"] = list(self.unsound)
        return d


_NO_VALUE = ("direction", "set-up", "fit", "congestion window")


def _clean(v: Any) -> Any:
    if isinstance(v, float):
        if not math.isfinite(v):
            return None
        return float(f"{v:.4g}")
    if hasattr(v, "item"):  # numpy scalar
        return _clean(v.item())
    return v


@dataclass
class FigureRec:
    name: str
    caption: str


class Context:
    """What an experiment's ``tables`` and ``draw`` work with.

    ``df``: the ok rows of ``results.csv`` (a pandas DataFrame, numeric where possible);
    ``all_rows``: every row; ``scale``; ``seeds``; ``series(key)``, ``summary(key)`` and
    ``soundness(key)`` give a run's compact data (``runs``: a ``LiveRuns`` over a run store
    or the committed ``SavedRuns``); ``figure(name, caption)`` is a context manager that
    yields a matplotlib Figure and saves it in ``formats`` (PNG and SVG; ``record``: False draws nothing)."""

    def __init__(self, exp: Experiment, out: Path, results, scale: str, seeds: list[int], runs: Any,
                 record: bool = True, formats: tuple[str, ...] = ("png", "svg")):
        self.exp, self.out, self.scale, self.seeds, self.runs = exp, out, scale, seeds, runs
        self.record, self.formats = record, formats
        self.all_rows = results
        self.df = results[results["status"] == "ok"].copy() if len(results) else results
        self.figures: list[FigureRec] = []
        self.notes: list[str] = []
        if record:
            (out / "figures").mkdir(parents=True, exist_ok=True)

    def seed_only(self, seed: int) -> "Context":
        """The same runs, one seed's alone (the per-seed analysis, which draws nothing)."""
        sub = self.all_rows[self.all_rows["seed"] == seed]
        return Context(self.exp, self.out, sub, self.scale, [seed], self.runs, record=False)

    # -- a run's compact data
    def series(self, key: str) -> dict[str, Any]:
        return self.runs.series(key)

    def summary(self, key: str) -> dict[str, Any]:
        return self.runs.summary(key)

    def soundness(self, key: str):
        return self.runs.soundness(key)

    def rows(self, **where):
        """The ok rows whose params equal ``where`` (e.g. ``scheme="tcn"``)."""
        d = self.df
        for k, v in where.items():
            d = d[d[k] == v]
        return d

    # -- outputs
    @contextmanager
    def figure(self, name: str, caption: str, ncols: int = 1, nrows: int = 1, size=None) -> Iterator[Any]:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        size = size or (4.2 * ncols + 0.6, 3.2 * nrows + 0.4)
        fig, axes = plt.subplots(nrows, ncols, figsize=size, squeeze=False)
        try:
            yield fig, axes
            if not self.record:
                return
            fig.tight_layout()
            for ext in self.formats:
                fig.savefig(self.out / "figures" / f"{name}.{ext}", dpi=110 if ext == "png" else None)
            self.figures.append(FigureRec(name, caption))
        finally:
            plt.close(fig)

    def note(self, text: str) -> None:
        if self.record:
            self.notes.append(text)


class LiveRuns:
    """A run store's runs (``out/runs/<key>/``): each run's series extracted once by the
    entry (``Experiment.series``), its summary, its soundness verdict."""

    def __init__(self, exp: Experiment, out: Path):
        self.exp, self.out = exp, out
        self._series: dict[str, dict[str, Any]] = {}

    def files(self, key: str) -> RunFiles:
        return RunFiles(self.out / "runs" / key)

    def series(self, key: str) -> dict[str, Any]:
        if key not in self._series:
            self._series[key] = json.loads(json.dumps(self.exp.series(self.files(key)))) if self.exp.series else {}
        return self._series[key]

    def summary(self, key: str) -> dict[str, Any]:
        return self.files(key).summary()

    def soundness(self, key: str):
        return run_soundness(self.out / "runs" / key, self.exp.guard_expected)


class NoRunData(LookupError):
    """Saved results without a run's compact data (saved before ``runs.json.gz`` existed):
    what reads it is not evaluated (``Unavailable(str(e))``)."""


class SavedRuns:
    """The committed results' runs (``runs.json.gz``: key -> summary, series; None for results
    saved before it: ``NoRunData``)."""

    def __init__(self, exp: Experiment, runs: dict[str, dict[str, Any]] | None):
        self.exp, self.runs = exp, runs

    def _run(self, key: str) -> dict[str, Any]:
        if self.runs is None:
            raise NoRunData("saved before per-run data (runs.json.gz): a series this claim reads is not kept")
        try:
            return self.runs[key]
        except KeyError:
            raise NoRunData(f"run {key} has no saved per-run data") from None

    def series(self, key: str) -> dict[str, Any]:
        return self._run(key).get("series", {})

    def summary(self, key: str) -> dict[str, Any]:
        return self._run(key)["summary"]

    def soundness(self, key: str):
        from .. import soundness

        v = soundness.from_summary(self.summary(key))
        return (v or soundness.Soundness([], ())).without(self.exp.guard_expected)


def run_soundness(run_dir: Path, skip: tuple[str, ...] = ()) -> Any:
    """A stored run's soundness (``ecnlab.soundness``): the verdict its ``summary.json`` carries,
    or, for a run recorded before ecnlab wrote one, the guard's rules on its files; the rules
    of ``skip`` set aside."""
    from .. import soundness
    from ..inputs import read_json

    stored = soundness.from_summary(read_json(run_dir / "summary.json"))
    if stored is None:
        stored = soundness.assess(soundness.Run.from_dir(run_dir))
    return stored.without(skip)


def not_run_claims(exp: Experiment, reason: str) -> list[dict[str, Any]]:
    return [Claim(c.id, c.text, c.number, "not run", note=f"not run: {reason}").as_dict() for c in exp.claims]
