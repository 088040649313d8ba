"""The decision between candidates: a paired comparison of the ranking metric over the same
seeds (the same seed is the same traffic for every scheme), its 95 % interval, and the
verdict in words.

The comparison is of ratios: for each seed ``s``, ``r_s = ln(m_other(s) / m_leader(s))``; the
interval is Student's t on the ``r_s`` (``report.stats.t975``), reported as the percentage
``100 (e^r - 1)`` by which the other's metric exceeds the leader's. A ratio suits a metric
whose spread grows with its size (FCTs), and its interval stays the same whichever scheme
is the reference. Decisive: the interval excludes zero. Equivalent: it lies within
``EQUIVALENT_PCT`` either side. The seeds are added sequentially until one of the two holds
(``validate.py``), so the nominal 95 % is not the exact coverage of the procedure; the
minimum of ``MIN_SEEDS`` paired seeds keeps an early stop from resting on one or two."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..report.stats import t975
from . import words

EQUIVALENT_PCT = 2.0
MIN_SEEDS = 3


@dataclass(frozen=True)
class Difference:
    """``other`` against ``leader`` over ``n`` paired seeds: the mean log ratio and its
    95 % interval."""

    n: int
    mean: float
    lo: float
    hi: float

    @staticmethod
    def of(leader: dict[int, float], other: dict[int, float]) -> "Difference":
        seeds = sorted(s for s in leader if s in other and leader[s] > 0 and other[s] > 0)
        r = [math.log(other[s] / leader[s]) for s in seeds]
        n = len(r)
        if n == 0:
            return Difference(0, math.nan, math.nan, math.nan)
        m = sum(r) / n
        if n == 1:
            return Difference(1, m, math.nan, math.nan)
        sd = math.sqrt(sum((x - m) ** 2 for x in r) / (n - 1))
        h = t975(n - 1) * sd / math.sqrt(n)
        return Difference(n, m, m - h, m + h)

    def pct(self, x: float) -> float:
        """How much higher the other's metric is, in percent, at log ratio ``x``."""
        return 100 * math.expm1(x)

    @property
    def decided(self) -> bool:
        """The interval excludes zero (one of the two is better)."""
        return self.n >= MIN_SEEDS and (self.lo > 0 or self.hi < 0)

    @property
    def equivalent(self) -> bool:
        return (self.n >= MIN_SEEDS and self.pct(self.lo) >= -EQUIVALENT_PCT
                and self.pct(self.hi) <= EQUIVALENT_PCT)

    def lower_pct(self) -> tuple[float, float, float]:
        """How much lower the leader's metric is than the other's (mean, lo, hi), in %."""
        f = lambda x: -100 * math.expm1(-x)  # noqa: E731
        return f(self.mean), f(self.lo), f(self.hi)

    def as_dict(self) -> dict[str, Any]:
        return {"seeds": self.n, "log_ratio": {"mean": self.mean, "lo": self.lo, "hi": self.hi},
                "other_higher_pct": {"mean": self.pct(self.mean), "lo": self.pct(self.lo), "hi": self.pct(self.hi)},
                "decided": self.decided, "equivalent": self.equivalent}


@dataclass
class Verdict:
    """What the validation concluded: ``kind`` is decisive, equivalent, undecided, sole or none."""

    kind: str
    text: str
    winner: str | None = None  # the point's label
    versus: str | None = None
    difference: Difference | None = None
    reason: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "text": self.text, "winner": self.winner, "versus": self.versus,
                "difference": self.difference.as_dict() if self.difference else None, "reason": self.reason}


def _range(lo: float, hi: float) -> str:
    return f"{lo:.1f} to {hi:.1f} %" if min(abs(lo), abs(hi)) < 10 else f"{lo:.0f} to {hi:.0f} %"


def decisive(winner: str, queues: str, versus: str, d: Difference, metric: str) -> str:
    """``TCN at T = 40 us on queues 1-7: 18 % lower small-flow p99 FCT than ECN# at ...
    (95 % interval 12 to 24 %), 6 paired seeds``."""
    m, lo, hi = d.lower_pct()
    return (f"{winner} on {queues}: {words.pct(m)} lower {metric} than {versus} "
            f"(95 % interval {_range(lo, hi)}), {d.n} paired seeds")


def equivalent(winner: str, queues: str, versus: str, d: Difference, metric: str, why: str) -> str:
    lo, hi = d.pct(d.lo), d.pct(d.hi)
    return (f"{winner} on {queues}: equivalent to {versus} on {metric}, within ±{EQUIVALENT_PCT:g} % (95 % interval "
            f"of the difference to the first {_range(lo, hi)}), {d.n} paired seeds; chosen {why}")


def undecided(winner: str, queues: str, versus: str, d: Difference, metric: str, why: str) -> str:
    m, lo, hi = d.lower_pct()
    return (f"undecided: {winner} on {queues}: {words.pct(m)} lower {metric} than {versus} "
            f"(95 % interval {_range(lo, hi)}), {d.n} paired seeds; the interval includes zero and {why}")
