"""The shared soundness guard (``ecnlab.soundness``) as advise reads it: whether a validation
run may be ranked (an unsound run never is), why not, and each weighted queue's service
against what its scheduler owes it while backlogged (the guard's share rule, whose numbers
are advise's isolation metric: one rule, one computation)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from .. import soundness


# The guard's rules advise does not rank by, each with its reason.
SET_ASIDE = {
    "load_far_from_stated": (
        "advise compares schemes on paired seeds, the same arrivals for every scheme, so a seed whose "
        "heavy-tailed flow sizes carry more or less than the stated load does so for every scheme alike, and "
        "over seeds the load is the stated one; with a few hundred flows per run most seeds of a data-mining "
        "workload are more than 10 % off (42 of 60 runs of a web-search + data-mining question)"),
}


@dataclass(frozen=True)
class Verdict:
    """One run: ``flags`` of the guard (empty: sound), each ``(rule, text)``, and the flags
    of the rules set aside (``SET_ASIDE``), which do not make it unsound here."""

    flags: tuple[tuple[str, str], ...]
    aside: tuple[tuple[str, str], ...] = ()

    @property
    def sound(self) -> bool:
        return not self.flags


def judge(run_dir: Path) -> Verdict:
    """The guard's verdict on a run directory: the one the run wrote into its summary
    (``api.run`` does), else the rules on the run's files."""
    from ..inputs import read_summary

    s = soundness.from_summary(read_summary(run_dir / "summary.json"))
    if s is None:
        s = soundness.assess(soundness.Run.from_dir(run_dir))
    flags = [(f.rule, f.text) for f in s.flags]
    return Verdict(tuple(f for f in flags if f[0] not in SET_ASIDE), tuple(f for f in flags if f[0] in SET_ASIDE))


# The share rule without tolerance flags every queue it judges, with the numbers it judged
# it on: got and owed while backlogged. That is each weighted queue's service (no second
# computation of what a scheduler owes).
_SERVICE = soundness.SchedulerShare(tolerance=-math.inf)


@dataclass(frozen=True)
class Service:
    """A weighted queue at a port: its goodput while backlogged against what its weight owes it."""

    port: str
    queue: int
    got_bps: float
    owed_bps: float
    backlogged_s: float

    @property
    def ratio(self) -> float:
        return self.got_bps / self.owed_bps if self.owed_bps > 0 else math.nan


def service(run_dir: Path) -> list[Service]:
    """Every weighted queue the share rule judges at every switch port of a run."""
    out = []
    for f in _SERVICE.check(soundness.Run.from_dir(run_dir)):
        port, q = f.at.removeprefix("queue ").rsplit(":", 1)
        n = f.numbers
        out.append(Service(port, int(q), float(n["got_bps"]), float(n["owed_bps"]), float(n["backlogged_s"])))
    return out


def rules_in_words() -> str:
    return soundness.described(skip=SET_ASIDE)
