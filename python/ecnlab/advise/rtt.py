"""RTT input of ``ecnlab advise``: a file of samples or a list of percentiles, reduced to
the few statistics the papers' rules take (the minimum or base RTT, the mean, p50, p90,
p99).

A file has one sample per line with its unit (``120us``, ``0.2 ms``), or is the output of
``ping`` (the ``time=0.045 ms`` of each reply line); blank lines and ``#`` comments are
skipped. Percentiles are ``p50=30us,p90=90us,p99=250us`` (any of p0..p100, ``min``,
``mean``); a missing statistic is interpolated between the given ones (linearly in the
percentile) and the mean of percentiles alone is that of the piecewise-linear
distribution through them. Units are parsed by the core (``_core.parse_unit``), as in
scenario files."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from pathlib import Path

from .. import _core
from ..inputs import ScenarioError, read_text

MAX_RTT_FILE_BYTES = 16 * 1024 * 1024  # a million ping reply lines and more

_PING = re.compile(r"time[=<]\s*([0-9.]+)\s*(ns|us|µs|ms|s)\b")


@dataclass
class RttProfile:
    """RTT statistics in microseconds, and where they came from."""

    min_us: float
    mean_us: float
    p50_us: float
    p90_us: float
    p99_us: float
    source: str
    samples: int | None = None
    points: list[tuple[float, float]] | None = None  # (rtt_us, cumulative probability), for the scenario

    def as_dict(self) -> dict:
        """For ``advice.json``: times to the nanosecond (a mean of 53.599999999999994 us is
        53.6; no program reads finer than the core's whole nanoseconds)."""
        d = asdict(self)
        for k in ("min_us", "mean_us", "p50_us", "p90_us", "p99_us"):
            d[k] = round(d[k], 3)
        d["points"] = [[round(r, 3), q] for r, q in self.points or []]
        return d


def _us(text: str, where: str) -> float:
    try:
        return _core.parse_unit("time", text.strip().replace("µs", "us")) / 1e3
    except ValueError as e:
        raise ScenarioError(f"{where}: {e}") from None


def _quantile(sorted_v: list[float], q: float) -> float:
    """Nearest rank, as the simulator's summaries (metrics::percentile)."""
    return sorted_v[min(int(q * len(sorted_v)), len(sorted_v) - 1)]


def from_file(path: str | Path) -> RttProfile:
    p = Path(path)
    lines = read_text(p, "RTT", MAX_RTT_FILE_BYTES).splitlines()
    v: list[float] = []
    for i, line in enumerate(lines, 1):
        s = line.split("#", 1)[0].strip()
        if not s:
            continue
        m = _PING.search(s)
        if m:
            v.append(_us(m.group(1) + m.group(2), f"{p}: line {i}"))
        elif "bytes from" in s or s.startswith(("PING", "---", "rtt ", "round-trip")) or "packets transmitted" in s:
            continue  # the rest of ping's output
        else:
            v.append(_us(s, f"{p}: line {i}"))
    if not v:
        raise ScenarioError(f"{p}: no RTT samples (one per line with its unit, e.g. 120us, or ping output)")
    if min(v) <= 0:
        raise ScenarioError(f"{p}: RTT samples must be positive (found {min(v)} us)")
    v.sort()
    qs = [0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 1.0]
    return RttProfile(min_us=v[0], mean_us=sum(v) / len(v), p50_us=_quantile(v, 0.5), p90_us=_quantile(v, 0.9),
                      p99_us=_quantile(v, 0.99), source=str(p), samples=len(v),
                      points=[(_quantile(v, q) if q < 1 else v[-1], q) for q in qs])


def from_percentiles(text: str) -> RttProfile:
    given: dict[float, float] = {}
    seen: dict[float, str] = {}
    mean = None
    for part in filter(None, (x.strip() for x in text.split(","))):
        if "=" not in part:
            raise ScenarioError(f"--rtt: `{part}` is not NAME=VALUE (e.g. p50=30us)")
        k, val = (x.strip() for x in part.split("=", 1))
        us = _us(val, f"--rtt: {k}")
        if us <= 0:  # advice from it would set thresholds of 0, which ecnlab run refuses
            raise ScenarioError(f"--rtt: {k}={val}: an RTT is positive")
        if k == "mean":
            if mean is not None:
                raise ScenarioError("--rtt: mean is given twice")
            mean = us
            continue
        if k == "min":
            q = 0.0
        elif re.fullmatch(r"p(100|[0-9]{1,2}(\.[0-9]+)?)", k):
            q = float(k[1:]) / 100
        else:
            raise ScenarioError(f"--rtt: unknown statistic `{k}` (p0..p100, min, mean)")
        if q in given:  # which one was meant? (min is p0)
            raise ScenarioError(f"--rtt: {k} is given twice (as {seen[q]} and {k}={val})")
        given[q] = us
        seen[q] = part
    if not given:
        raise ScenarioError("--rtt: no percentiles given (e.g. p50=30us,p90=90us,p99=250us)")
    qs = sorted(given)
    if any(given[a] > given[b] for a, b in zip(qs, qs[1:])):
        raise ScenarioError(f"--rtt: percentiles must not decrease ({text})")
    if 0.0 not in given:
        given[0.0] = given[qs[0]]  # no minimum given: the lowest percentile is the floor
    if 1.0 not in given:
        given[1.0] = given[max(given)]
    qs = sorted(given)

    def at(q: float) -> float:
        for a, b in zip(qs, qs[1:]):
            if a <= q <= b:
                return given[a] if b == a else given[a] + (given[b] - given[a]) * (q - a) / (b - a)
        return given[qs[-1]]

    if mean is None:  # the mean of the piecewise-linear distribution
        mean = sum((b - a) * (given[a] + given[b]) / 2 for a, b in zip(qs, qs[1:]))
    return RttProfile(min_us=given[0.0], mean_us=mean, p50_us=at(0.5), p90_us=at(0.9), p99_us=at(0.99),
                      source=f"--rtt {text}", points=[(given[q], q) for q in qs])


def from_points(points: list[tuple[float, float]], source: str) -> RttProfile:
    """The profile of a piecewise-linear RTT distribution through ``(rtt_us, cumulative
    probability)`` points (a scenario's propagation RTT plus its ``rtt_variation``)."""
    pts = sorted(points, key=lambda p: (p[1], p[0]))

    def at(q: float) -> float:
        for (a, pa), (b, pb) in zip(pts, pts[1:]):
            if pa <= q <= pb:
                return a if pb == pa else a + (b - a) * (q - pa) / (pb - pa)
        return pts[-1][0]

    mean = sum((pb - pa) * (a + b) / 2 for (a, pa), (b, pb) in zip(pts, pts[1:]))
    return RttProfile(min_us=pts[0][0], mean_us=mean, p50_us=at(0.5), p90_us=at(0.9), p99_us=at(0.99),
                      source=source, points=[(round(r, 3), q) for r, q in pts])
