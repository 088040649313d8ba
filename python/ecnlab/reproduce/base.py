"""The catalog's building blocks: an ``Experiment`` (its runs at each scale, its analysis,
figures and claims), the claims declared as data (``ClaimDef`` with a rule: ``UpTo``,
``Within``, ``Near`` reading ``Over`` an FCT table's loads or ``At`` one value) and their
one evaluator (``judge_claims``), and the ``Context`` an experiment's analysis gets
(results, per-run files, figure and claim recording)."""

from __future__ import annotations

import json
import math
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from ..report.stats import mean_ci95
from ..sweep import Point, override

SCALES = ("quick", "paper")


@dataclass(frozen=True)
class Quote:
    """A number the paper's text quotes for an FCT-vs-load figure: ``pct`` percent lower than
    the figure's baseline at ``load`` (a star), or, where the text gives no load ("up to X %
    lower"), the best point of the paper's curve (a dotted line its curve touches). The
    claim's paper number and the figure both read it, so the two cannot disagree."""

    pct: float
    load: float | None = None

    @property
    def normalized(self) -> float:
        return 1 - self.pct / 100


def paper_value(paper: Any) -> Any:
    """What claims.json shows as the paper's number: a Quote's percentage, else as given."""
    return paper.pct if isinstance(paper, Quote) else paper


@dataclass
class ClaimDef:
    """One claim of a paper, declared once: an id (unique within the experiment), the claim
    in words, the paper's number (a number, text, or a ``Quote`` that the figure draws too)
    and how it is judged on the entry's analysis data (``rule``): ``UpTo``, ``Within`` or
    ``Near`` (judged by ``judge_claims``), or a function ``(data, paper) -> Verdict |
    Unavailable | None`` for a claim that needs its own logic. Without a rule the entry's
    ``analyze`` judges it with ``Context.claim``."""

    id: str
    text: str
    paper: Any
    rule: "UpTo | Within | Near | Callable[[dict[str, Any], Any], Verdict | Unavailable | None] | None" = None


@dataclass
class Experiment:
    """One entry of SPEC §6.

    ``points(scale, seeds)`` lists the runs (the same seeds and traffic for every scheme).
    ``tables(ctx)`` is the analysis: it reads the runs and returns the data (name -> an
    ``FctTable``, a DataFrame, a dict, a number, or ``Unavailable(reason)``) that the
    claims are judged on (``judge_claims``, from each ``ClaimDef.rule``) and that
    ``draw(ctx, data)`` draws the figures from; ``analyze(ctx)`` is the three in turn (the
    per-seed pass, which saves no figure, does not draw). An entry may instead give its own
    ``analyze`` that judges with ``Context.claim``. ``requires()`` returns None when the
    simulator can run the experiment, else the reason it cannot (the entry is then reported
    as "not run: <reason>", with its claims and the paper's numbers)."""

    id: str
    paper: str
    figures: str
    title: str
    claims: list[ClaimDef]
    points: Callable[[str, list[int]], list[Point]]
    analyze: Callable[["Context"], None] | None = None
    tables: Callable[["Context"], dict[str, Any]] | None = None
    draw: Callable[["Context", dict[str, Any]], None] | None = None
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

        if set(self.guard_expected) - set(RULE_NAMES):
            raise ValueError(f"{self.id}: guard_expected names no soundness rule: {sorted(set(self.guard_expected) - set(RULE_NAMES))}")
        if (self.analyze is None) == (self.tables is None):
            raise ValueError(f"{self.id}: give either tables (and draw) or analyze")
        if self.analyze is None:
            self.analyze = self._analyze

    def _analyze(self, ctx: "Context") -> None:
        data = self.tables(ctx)
        judge_claims(ctx, data)
        if ctx.record and self.draw is not None:
            self.draw(ctx, data)


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


# --------------------------------------------------------------------------------------
# Claim evaluation rules (written once, quoted in every note)


def pct_lower(base: float | None, new: float | None) -> float | None:
    """How much lower ``new`` is than ``base``, in percent (negative: higher)."""
    if base is None or new is None or not _finite(base) or not _finite(new) or base == 0:
        return None
    return (base - new) / base * 100.0


def _finite(x: Any) -> bool:
    try:
        return math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


def rule_up_to(paper_pct: float, ecnlab_pct: float | None) -> tuple[bool, str]:
    """"Up to X % lower": shown when ecnlab's largest reduction has the same sign and at
    least half the paper's magnitude."""
    if ecnlab_pct is None:
        return False, "no value"
    ok = ecnlab_pct > 0 and ecnlab_pct >= paper_pct / 2
    return ok, "rule: shown if ecnlab's value has the paper's sign and at least half its size"


def rule_within(paper_pct: float, ecnlab_pct: float | None, floor: float = 5.0) -> tuple[bool, str]:
    """"Within ~X %": shown when ecnlab's largest deviation is within max(2X, floor) %."""
    if ecnlab_pct is None:
        return False, "no value"
    band = max(2 * paper_pct, floor)
    return abs(ecnlab_pct) <= band, f"rule: shown if |deviation| <= {band:g} %"


def rule_near(paper: float, ecnlab: float | None, rel: float = 0.25) -> tuple[bool, str]:
    """"About X": shown when ecnlab is within ±rel of the paper's number."""
    if ecnlab is None or not _finite(ecnlab):
        return False, "no value"
    return abs(ecnlab - paper) <= rel * abs(paper), f"rule: shown if within ±{rel * 100:g} % of the paper"


# --------------------------------------------------------------------------------------
# Declared claims: what a claim reads (``Over`` an FCT table's loads, or ``At`` one value of
# the analysis data) and its rule (``UpTo``, ``Within``, ``Near``), judged by ``judge_claims``
# with the note written here, once.


@dataclass(frozen=True)
class Over:
    """The claim reads ``scheme``'s ``metric`` in the ``FctTable`` named ``table``, against the
    table's baseline, over its loads: the largest reduction (``UpTo``) or deviation
    (``Within``), and the load where it is."""

    table: str
    metric: str
    scheme: str


@dataclass(frozen=True)
class At:
    """The claim reads the value at ``path`` in the analysis data (one key per level; a
    DataFrame level by ``.loc``). ``what`` says what the value is in the note, formatted with
    the data (``"phase 1 ({phases[0][0]:.2f} s)"``); ``rests_on`` as ``Context.claim``."""

    path: tuple
    what: str
    rests_on: dict[str, Sequence[Any]] | None = None


@dataclass(frozen=True)
class UpTo:
    """"Up to X % lower" (``rule_up_to``)."""

    of: Over | At
    #: The name of a sentence in the analysis data that the note ends with, when the data
    #: has it (what the value is made of, e.g. the share of timeouts in an FCT).
    also: str | None = None


@dataclass(frozen=True)
class Within:
    """"Within ~X %" (``rule_within``); where the paper gives no number ("similar"), within
    the ``floor`` band."""

    of: Over | At
    floor: float = 5.0
    also: str | None = None


@dataclass(frozen=True)
class Near:
    """"About X" (``rule_near``)."""

    of: At
    rel: float = 0.25
    also: str | None = None


def _number(paper: Any) -> float:
    """A paper value as a number for a rule; text ("similar") is 0, so "within" uses its floor."""
    return float(paper) if isinstance(paper, (int, float)) and not isinstance(paper, bool) else 0.0


def quotes_of(exp: Experiment, table: str) -> dict[str, Quote]:
    """The paper's Quotes that ``exp``'s claims declare on the FctTable ``table``, by metric:
    what its figure draws, the very objects the claims' paper numbers are."""
    return {c.rule.of.metric: c.paper for c in exp.claims
            if isinstance(c.paper, Quote) and isinstance(c.rule, (UpTo, Within)) and isinstance(c.rule.of, Over)
            and c.rule.of.table == table}


@dataclass(frozen=True)
class Verdict:
    """A claim's outcome, as ``Context.claim`` records it."""

    value: Any
    shown: bool
    note: str
    rests_on: dict[str, Sequence[Any]] | None = None


@dataclass(frozen=True)
class Unavailable:
    """Data this run cannot give (e.g. a scale without the needed points), and why; a claim
    reading it is "not evaluated" with the reason."""

    reason: str


def judge_claims(ctx: "Context", data: dict[str, Any]) -> None:
    """Judge every declared claim of ``ctx.exp`` on the analysis ``data``. A claim whose data
    is absent stays "not evaluated"."""
    for d in ctx.exp.claims:
        if d.rule is None:
            continue
        out = judge(d, data)
        if isinstance(out, Verdict):
            ctx.claim(d.id, out.value, out.shown, out.note, out.rests_on)
        elif isinstance(out, Unavailable):
            ctx.unavailable(d.id, out.reason)


def judge(d: ClaimDef, data: dict[str, Any]) -> Verdict | Unavailable | None:
    """One declared claim's outcome on ``data``."""
    rule = d.rule
    if not isinstance(rule, (UpTo, Within, Near)):
        return rule(data, d.paper)
    out = _judge_rule(d.id, rule, paper_value(d.paper), d.paper, data)
    if isinstance(out, Verdict) and rule.also and data.get(rule.also):
        out = Verdict(out.value, out.shown, f"{out.note}. {data[rule.also]}", out.rests_on)
    return out


def _judge_rule(cid: str, rule: UpTo | Within | Near, paper: Any, declared: Any,
                data: dict[str, Any]) -> Verdict | Unavailable | None:
    from .tables import diagnosis, max_deviation, max_reduction

    if isinstance(rule.of, Over):
        t = data.get(rule.of.table)
        if t is None or isinstance(t, Unavailable):
            return t
        of = rule.of
        q = t.quotes.get(of.metric)
        if isinstance(declared, Quote) and q is not None and q is not declared:
            raise ValueError(f"claim {cid}: its paper number is not the Quote its figure draws ({q} vs {declared})")
        if isinstance(rule, UpTo):
            v, at = max_reduction(t, of.metric, of.scheme)
            ok, text = rule_up_to(paper, v)
            what = f"largest reduction (%) of {of.scheme} vs {t.base_label}"
        elif isinstance(rule, Within):
            v, at = max_deviation(t, of.metric, of.scheme)
            ok, text = rule_within(_number(paper), v, rule.floor)
            what = f"largest deviation (%) of {of.scheme} from {t.base_label}"
        else:
            raise ValueError(f"claim {cid}: Near reads one value (At), not a table over loads")
        where = f" (at load {at:.0%})" if at is not None else ""
        diag = diagnosis(t.runs, at, [t.baseline, of.scheme]) if isinstance(rule, Within) and not ok else ""
        return Verdict(v, ok, f"{t.tag}: {what} over loads{where}; {text}{diag}", t.rests_on(t.baseline, of.scheme))
    v = data
    for key in rule.of.path:
        if isinstance(v, Unavailable):
            return v
        try:
            v = v.loc[key] if hasattr(v, "loc") else v[key]
        except (KeyError, IndexError):
            return None
    if isinstance(v, Unavailable):
        return v
    v = None if v is None else float(v)
    if isinstance(rule, UpTo):
        ok, text = rule_up_to(paper, v)
    elif isinstance(rule, Within):
        ok, text = rule_within(_number(paper), v, rule.floor)
    else:
        ok, text = rule_near(paper, v, rule.rel)
    return Verdict(v, ok, f"{rule.of.what.format_map(data)}; {text}", rule.of.rests_on)


# --------------------------------------------------------------------------------------
# The analysis context


@dataclass
class Claim:
    id: str
    claim: str
    paper: Any
    ecnlab: Any = None
    shown: bool = False
    status: str = "not evaluated"
    note: str = ""
    #: With several seeds: the claim judged on each seed's runs alone,
    #: ``[{"seed", "ecnlab", "status"}]`` (see ``runner.run_experiment``).
    per_seed: list[dict[str, Any]] | None = None
    #: The runs the claim rests on, as params -> allowed values (None: every run).
    rests_on: dict[str, list[Any]] | None = None
    #: What makes the runs it rests on unsound baselines (``ecnlab.soundness``), one line each.
    unsound: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        d = {"id": self.id, "claim": self.claim, "paper": self.paper, "ecnlab": _clean(self.ecnlab),
             "shown": bool(self.shown), "status": self.status, "note": self.note}
        if self.per_seed is not None:
            judged = [p for p in self.per_seed if p["status"] in ("shown", "not shown")]
            d["seeds_shown"] = sum(p["status"] == "shown" for p in judged)
            d["seeds_judged"] = len(judged)
            d["per_seed"] = [p | {"ecnlab": _clean(p["ecnlab"])} for p in self.per_seed]
            ci = ci95([p["ecnlab"] for p in self.per_seed])
            if ci is not None:
                d["seed_mean"], d["ci95"] = _clean(ci[0]), [_clean(ci[1]), _clean(ci[2])]
        if self.unsound:
            d["unsound"] = list(self.unsound)
        return d


# Student's t, two-sided 95 %, by degrees of freedom (1..30); beyond 30, 1.96 is within 4 %.
def ci95(values: Sequence[Any]) -> tuple[float, float, float] | None:
    """(mean, low, high): the 95 % confidence interval of the mean of the per-seed values
    (Student's t, ``report.stats.mean_ci95``; seeds are independent draws of the same
    experiment). None with fewer than two numeric values."""
    xs = [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool) and _finite(v)]
    if len(xs) < 2:
        return None
    mean, h, _ = mean_ci95(xs)
    return mean, mean - h, mean + h


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
    """What an experiment's ``analyze`` works with.

    ``df``: the ok rows of ``results.csv`` (a pandas DataFrame, numeric where possible);
    ``all_rows``: every row; ``scale``; ``seeds``; ``run_dir(key)``; ``summary(key)``,
    ``timeseries(key)``, ``flows(key)``, ``probes(key)`` read a run's files;
    ``figure(name, caption)`` is a context manager that yields a matplotlib Figure and saves
    it as PNG and SVG; ``claim(id, ecnlab, shown, note)`` records a claim's outcome."""

    def __init__(self, exp: Experiment, out: Path, results, scale: str, seeds: list[int], record: bool = True):
        self.exp, self.out, self.scale, self.seeds = exp, out, scale, seeds
        #: False: judge the claims only (a per-seed pass): figures are not drawn (an entry
        #: with its own ``analyze``: drawn but not saved).
        self.record = record
        self.all_rows = results
        self.df = results[results["status"] == "ok"].copy() if len(results) else results
        self.claims = {c.id: Claim(c.id, c.text, paper_value(c.paper)) for c in exp.claims}
        self.figures: list[FigureRec] = []
        self.notes: list[str] = []
        if record:
            (out / "figures").mkdir(parents=True, exist_ok=True)

    # -- run files
    def run_dir(self, key: str) -> Path:
        return self.out / "runs" / key

    def summary(self, key: str) -> dict[str, Any]:
        return json.loads((self.run_dir(key) / "summary.json").read_text())

    def _csv(self, key: str, name: str):
        import pandas as pd

        p = self.run_dir(key) / name
        try:
            return pd.read_csv(p)
        except (pd.errors.EmptyDataError, FileNotFoundError):
            return pd.DataFrame()

    def timeseries(self, key: str):
        return self._csv(key, "timeseries.csv")

    def flows(self, key: str):
        return self._csv(key, "flows.csv")

    def probes(self, key: str):
        return self._csv(key, "probes.csv")

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
            for ext in ("png", "svg"):
                fig.savefig(self.out / "figures" / f"{name}.{ext}", dpi=110 if ext == "png" else None)
            self.figures.append(FigureRec(name, caption))
        finally:
            plt.close(fig)

    def claim(self, id: str, ecnlab: Any, shown: bool, note: str = "",
              rests_on: dict[str, Sequence[Any]] | None = None) -> None:
        """Record a claim's outcome. ``rests_on``: the runs its value comes from, as
        params -> allowed values (e.g. ``{"scheme": ["tcn"]}``, or ``{"key": [...]}``, the runs
        themselves); default every run. The guard marks the claim when one of those runs is
        an unsound baseline."""
        c = self.claims[id]
        c.ecnlab, c.shown = ecnlab, bool(shown)
        c.status = "shown" if shown else "not shown"
        c.note = note
        c.rests_on = {k: list(v) for k, v in rests_on.items()} if rests_on else None

    def unavailable(self, id: str, note: str) -> None:
        """A claim that this run cannot evaluate (e.g. a scale without the needed points)."""
        c = self.claims[id]
        c.status, c.note = "not evaluated", note

    def note(self, text: str) -> None:
        if self.record:
            self.notes.append(text)


def not_run_claims(exp: Experiment, reason: str) -> list[dict[str, Any]]:
    return [Claim(c.id, c.text, paper_value(c.paper), None, False, "not run", f"not run: {reason}").as_dict()
            for c in exp.claims]
