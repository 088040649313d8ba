"""How a claim is judged: two verdicts, direction and magnitude, from one stated rule.

A claim reads one number per seed from its entry's analysis data (a *reader*: ``Fct`` reads
an FCT-vs-load table, ``At`` a value, ``Fn`` a function of the data), at a point of the grid:
the paper's (its ``Number.at``), or, over a table's loads, the one its rule picks (``best``
for "up to", ``worst`` for "within" and "similar", ``weakest`` for "at every load"). The
seeds' values give a mean and its 95 % interval (Student's t; one seed: the value itself).

- **Direction**: the effect has the paper's sign (a reduction above 0, a ratio below 1, a
  later onset): shown when the whole interval is on the paper's side, not shown when it is
  all on the other, undecided when it straddles. Claims with no direction (a value, a
  "within") say "n/a".
- **Magnitude**, on the scale the paper reports: the paper's value ``±BAND`` (25 %) is the
  band, for every claim (a bound is relaxed by the same 25 %: "more than 2 ms" is met from
  1.5 ms); shown when the interval lies inside the band, not shown when it lies outside,
  undecided when it straddles an edge (more seeds decide it). A claim without a number says
  "n/a".

A claim is shown when neither verdict is "not shown" or "undecided" (and one is shown);
"undecided" when one is undecided and none is not shown. For "up to" with the paper's point
known, the verdicts are at the paper's point, and the point where ecnlab's effect is largest
is judged and shown beside them."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ..report.stats import mean_ci95

BAND = 0.25  # the one magnitude rule: the paper's value ±25 %, on the scale it reports

SHOWN, NOT_SHOWN, UNDECIDED, NA = "shown", "not shown", "undecided", "n/a"


@dataclass(frozen=True)
class Unavailable:
    """Data this run cannot give (a scale without the needed points), and why; a claim
    reading it is "not evaluated" with the reason."""

    reason: str


def finite(x: Any) -> bool:
    try:
        return math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


@dataclass(frozen=True)
class Estimate:
    """The seeds' values of a claim at one point: their mean and its 95 % interval."""

    values: tuple[float, ...]

    @property
    def mean(self) -> float:
        return sum(self.values) / len(self.values)

    @property
    def interval(self) -> tuple[float, float]:
        if len(self.values) < 2:
            return self.mean, self.mean
        m, h, _ = mean_ci95(list(self.values))
        return m - h, m + h

    @staticmethod
    def of(values: Sequence[Any]) -> "Estimate | None":
        xs = tuple(float(v) for v in values if finite(v))
        return Estimate(xs) if xs else None


def inside(est: Estimate, lo: float, hi: float) -> str:
    """The interval against [lo, hi]: inside (shown), outside (not shown), or across an edge."""
    a, b = est.interval
    if a >= lo and b <= hi:
        return SHOWN
    if b < lo or a > hi:
        return NOT_SHOWN
    return UNDECIDED


def beyond(est: Estimate, reference: float, sign: int) -> str:
    """The interval against a reference: all of it beyond (above for ``sign`` +1, below for
    -1: shown), none of it (not shown), or across it (undecided)."""
    a, b = (x * sign for x in est.interval)
    a, b = min(a, b), max(a, b)
    r = reference * sign
    if a > r:
        return SHOWN
    if b <= r:
        return NOT_SHOWN
    return UNDECIDED


def band(value: float, precision: float = 0.0) -> tuple[float, float]:
    """The paper's value ±BAND, and at least ± its printed precision (``Number.precision``)."""
    lo, hi = value * (1 - BAND), value * (1 + BAND)
    lo, hi = min(lo, hi), max(lo, hi)
    return min(lo, value - precision), max(hi, value + precision)


# Quantities bounded by 1 (a utilization, Jain's index, a correlation) are judged by their
# shortfall from 1: ±25 % of a utilization near 1 would accept three quarters of it.
BOUNDED_BY_ONE = ("utilization", "Jain's index", "correlation")


# --------------------------------------------------------------------------------------
# Readers: one number per seed from an entry's analysis data, at a point


@dataclass(frozen=True)
class Fct:
    """``scheme``'s ``metric`` in the ``FctTable`` named ``table``, against the table's
    baseline, at a load: the reduction (% lower), the deviation (% higher, signed) or the
    ratio (scheme / baseline), as ``kind`` says."""

    table: str
    metric: str
    scheme: str
    kind: str = "reduction"

    def table_of(self, data):
        t = data.get(self.table)
        return t if t is not None else Unavailable(f"no {self.table} runs at this scale")

    def points(self, data) -> list[float] | Unavailable:
        t = self.table_of(data)
        if isinstance(t, Unavailable):
            return t
        n = t.norm[self.metric]
        if self.scheme not in n.columns:
            return Unavailable(f"no {self.scheme} runs in {t.tag} at this scale")
        return [float(x) for x in n.index if finite(n.loc[x, self.scheme])]

    def read(self, data, at) -> float | Unavailable | None:
        t = self.table_of(data)
        if isinstance(t, Unavailable):
            return t
        n = t.norm[self.metric]
        if self.scheme not in n.columns or at not in n.index:
            return None
        r = float(n.loc[at, self.scheme])
        if not finite(r):
            return None
        return {"reduction": (1 - r) * 100, "deviation": (r - 1) * 100, "ratio": r}[self.kind]

    def words(self, data) -> str:
        t = self.table_of(data)
        tag = "" if isinstance(t, Unavailable) else f"{t.tag}: "
        base = "" if isinstance(t, Unavailable) else t.base_label
        what = {"fct_small_avg_us": "small-flow avg FCT", "fct_small_p99_us": "small-flow p99 FCT",
                "fct_large_avg_us": "large-flow avg FCT", "fct_all_avg_us": "overall avg FCT"}.get(self.metric,
                                                                                                   self.metric)
        how = {"reduction": f"% lower than {base}", "deviation": f"% off {base}", "ratio": f"/ {base}"}[self.kind]
        return f"{tag}{self.scheme}'s {what}, {how}"

    def rests_on(self, data):
        t = self.table_of(data)
        return None if isinstance(t, Unavailable) else t.rests_on(t.baseline, self.scheme)


@dataclass(frozen=True)
class At:
    """The value at ``path`` in the analysis data (a DataFrame level by ``.loc``); ``what``
    says what it is, formatted with the data (``"{over}"``); ``rests_on`` as
    ``Context.claim``. With ``axis``, the path's last level is a point of the grid (the
    claim judges it at its paper's point, or over the points its rule picks)."""

    path: tuple
    what: str
    rests_on_runs: dict[str, Sequence[Any]] | None = None
    axis: str | None = None

    def _walk(self, data, path):
        v = data
        for key in path:
            if isinstance(v, Unavailable):
                return v
            try:
                v = v.loc[key] if hasattr(v, "loc") else v[key]
            except (KeyError, IndexError, TypeError):
                return None
        return v

    def points(self, data):
        if self.axis is None:
            return None
        v = self._walk(data, self.path)
        if isinstance(v, Unavailable) or v is None:
            return v if v is not None else Unavailable("no such data at this scale")
        return list(v.index if hasattr(v, "index") else v)

    def read(self, data, at=None):
        v = self._walk(data, self.path + ((at,) if self.axis is not None and at is not None else ()))
        if isinstance(v, Unavailable) or v is None:
            return v
        return float(v) if finite(v) else None

    def words(self, data) -> str:
        try:
            return self.what.format_map(data)
        except (KeyError, IndexError, ValueError, AttributeError):
            return self.what

    def rests_on(self, data):
        return self.rests_on_runs


@dataclass(frozen=True)
class Fn:
    """A function of the analysis data (``f(data, at)``, ``at`` None without ``points``) for
    what a path cannot say; ``points(data)`` lists the grid's points it can be judged at."""

    f: Callable[[dict[str, Any], Any], Any]
    what: str
    rests_on_runs: dict[str, Sequence[Any]] | None = None
    points_f: Callable[[dict[str, Any]], Any] | None = None

    def points(self, data):
        return None if self.points_f is None else self.points_f(data)

    def read(self, data, at=None):
        v = self.f(data, at)
        if isinstance(v, Unavailable) or v is None:
            return v
        return float(v) if finite(v) else None

    def words(self, data) -> str:
        return At((), self.what).words(data)

    def rests_on(self, data):
        return self.rests_on_runs


# --------------------------------------------------------------------------------------
# Rules: what the paper claims of the value, judged as direction and magnitude


@dataclass(frozen=True)
class Rule:
    """The shared part: ``of`` the reader; ``over``: which point of the grid a claim
    without a paper point is judged at (``best``: the largest value, ``worst``: the
    farthest from the rule's reference, ``weakest``: the smallest; None: the reader's one
    value)."""

    of: Any
    over: str | None = None

    reference = 0.0

    def direction(self, est: Estimate) -> str:
        return NA

    def magnitude(self, est: Estimate, number) -> tuple[str, tuple[float, float] | None]:
        return NA, None

    def criterion(self, paper: float) -> str:
        return ""

    def pick(self, values: dict[Any, float]) -> Any:
        """The point the rule judges among ``values`` (point -> pooled value)."""
        if self.over == "best":
            return max(values, key=values.get)
        if self.over == "weakest":
            return min(values, key=values.get)
        return max(values, key=lambda p: abs(values[p] - self.reference))


@dataclass(frozen=True)
class Reduction(Rule):
    """"X % lower" (or, with ``word``, "longer", "higher"): the value is the effect in
    percent, above 0 in the paper's direction. ``upto``: the paper's value is its largest
    over the figure's points."""

    upto: bool = True
    word: str = "lower"

    def __post_init__(self):
        if self.upto and self.over is None and getattr(self.of, "points", None) is not None:
            object.__setattr__(self, "over", "best")

    def direction(self, est):
        return beyond(est, 0.0, +1)

    def magnitude(self, est, number):
        lo, hi = band(number.value, number.precision)
        return inside(est, lo, hi), (lo, hi)

    def criterion(self, paper):
        return f"{'up to ' if self.upto else ''}{paper:g} % {self.word}"


@dataclass(frozen=True)
class Within(Rule):
    """"Within X %": the value is a signed deviation (%), judged by its size against
    X (1 + BAND); no direction."""

    over: str | None = "worst"

    def magnitude(self, est, number):
        size = Estimate(tuple(abs(v) for v in est.values))
        hi = band(number.value, number.precision)[1]
        return inside(size, -math.inf, hi), (0.0, hi)

    def criterion(self, paper):
        return f"within {paper:g} %"


@dataclass(frozen=True)
class Near(Rule):
    """"About X" (a ratio 1 is "similar"): the value within X ±BAND. ``exists``: its
    direction is that the value exists on every seed (an equal-sharing K that is found)."""

    exists: bool = False

    @property
    def reference(self):  # "worst" for a ratio: the farthest from 1
        return 1.0

    def magnitude(self, est, number):
        if number.unit in BOUNDED_BY_ONE:  # the shortfall from 1 within the paper's ±25 %
            lo, hi = band(1 - number.value, number.precision)
            short = Estimate(tuple(1 - v for v in est.values))
            return inside(short, lo, hi), (1 - hi, 1 - lo)
        lo, hi = band(number.value, number.precision)
        return inside(est, lo, hi), (lo, hi)

    def criterion(self, paper):
        return f"about {paper:.3g}"


@dataclass(frozen=True)
class AtLeast(Rule):
    """"More than X": met from X (1 - BAND) on."""

    def magnitude(self, est, number):
        lo = band(number.value, number.precision)[0]
        return inside(est, lo, math.inf), (lo, math.inf)

    def criterion(self, paper):
        return f"more than {paper:g}"


@dataclass(frozen=True)
class AtMost(Rule):
    """"Within X" of a time or a count (a bound from above): met up to X (1 + BAND)."""

    def magnitude(self, est, number):
        hi = band(number.value, number.precision)[1]
        return inside(est, -math.inf, hi), (-math.inf, hi)

    def criterion(self, paper):
        return f"at most {paper:g}"


@dataclass(frozen=True)
class Zero(Rule):
    """"None" (no drops): 0 on every seed; there is no band around 0."""

    def magnitude(self, est, number):
        return (SHOWN if all(v == 0 for v in est.values) else NOT_SHOWN), (0.0, 0.0)

    def criterion(self, paper):
        return "none"


@dataclass(frozen=True)
class Ratio(Rule):
    """A ratio the paper gives (new / old): its direction below 1 (``below``) or above, its
    magnitude within the paper's ratio ±BAND."""

    below: bool = True
    reference = 1.0

    def direction(self, est):
        return beyond(est, 1.0, -1 if self.below else +1)

    def magnitude(self, est, number):
        lo, hi = band(number.value, number.precision)
        return inside(est, lo, hi), (lo, hi)

    def criterion(self, paper):
        return f"a ratio of {paper:.3g}"


@dataclass(frozen=True)
class Direction(Rule):
    """A direction without a number ("outperforms", "rises"): the value above ``reference``
    (``sign`` +1) or below it (-1); no magnitude."""

    sign: int = 1
    reference_value: float = 0.0

    def direction(self, est):
        return beyond(est, self.reference_value, self.sign)

    def criterion(self, paper):
        return f"{'above' if self.sign > 0 else 'below'} {self.reference_value:g}"

    def pick(self, values):
        return (min if self.sign > 0 else max)(values, key=values.get)  # the weakest point


@dataclass(frozen=True)
class Grows(Rule):
    """"From A to B" (a gap that grows, an onset that comes later): ``low`` reads the first
    value (the paper's ``low_number``), ``of`` the second; the direction is their difference
    above 0, the magnitude both values within their paper values ±BAND."""

    low: Any = None
    low_number: Any = None

    def criterion(self, paper):
        return f"from {self.low_number.value:g} to {paper:g}"


def combine(direction: str, magnitude: str) -> str:
    """A claim's status from its two verdicts."""
    vs = [v for v in (direction, magnitude) if v != NA]
    if not vs:
        return "not evaluated"
    if NOT_SHOWN in vs:
        return "not shown"
    if UNDECIDED in vs:
        return "undecided"
    return "shown"
