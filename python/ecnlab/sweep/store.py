"""The run store under a sweep's ``OUT``: keys, atomic commits, resume, failure records,
and the tables ``results.csv`` and ``summary.csv``.

Every point is resolved first (built-in or file scenario + overrides = the exact document
that will run) and gets a key (``point_key``). Its files (``summary.json``, ``flows.csv``,
``timeseries.csv``, ``probes.csv``, ``scenario.json``, plus ``point.json`` with the sweep
parameters and the attempt that produced it) are written to a temporary directory named
after the driver and renamed to ``OUT/runs/<key>/`` in one step, so a run directory either
is complete or does not exist. A rerun of the same sweep (or of another sweep sharing
points) runs only the keys that are missing: an interrupted sweep resumes and nothing
finished is lost. A run that failed leaves ``OUT/failed/<key>.json`` (parameters, attempts,
a one-line error), and the next sweep tries it again. ``OUT/results.csv`` has one row per
point; ``OUT/summary.csv`` one per parameter combination, each metric's mean and 95 %
interval over the seeds (``ecnlab.report.stats``).

Keys never change for the same document, seed and build: long-running stores depend on
it (``tests/test_sweep.py::test_store_keys_are_pinned``).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import _core
from ..api import build_info, engine_id
from ..scenario import ScenarioError
from .spec import Point, _canonical, _one_line


@dataclass
class Resolved:
    """A point with its store key and the document that runs (None when the point could not
    even be resolved: ``error`` says why)."""

    point: Point
    key: str
    doc: dict[str, Any] | None
    seed: int | None
    error: str | None = None

def point_key(doc: dict[str, Any], seed: int, engine: str | None = None) -> str:
    """The store key of a run: SHA-256 (16 hex digits) of the canonical JSON of the
    resolved scenario document, the seed and the simulator build ([`engine_id`]). Files the
    scenario reads (a CDF, a trace) enter by content, not by path: a store moved to another
    directory or machine is reused, and editing such a file in place is a new run. The
    document's own ``seed`` is the one that runs (as its ``scenario.json`` records it), so
    the key of a stored run is the key of its ``scenario.json``. ``engine``: another build's
    fingerprint, for the key that build gave the run (the catalog checks saved results by it)."""
    ident = {"scenario": _content_addressed(doc | {"seed": int(seed)}), "seed": int(seed),
             "engine": engine or engine_id()}
    return hashlib.sha256(_canonical(ident).encode()).hexdigest()[:16]


def _content_addressed(doc: dict[str, Any]) -> dict[str, Any]:
    """A copy of `doc` in which each traffic entry's `cdf`, `file` or `matrix`, and a
    topology's `file`, that names an existing file is replaced by the SHA-256 of the file's
    bytes (built-in CDF names stay names)."""

    def addressed(t: dict[str, Any]) -> dict[str, Any]:
        t = dict(t)
        for k in ("cdf", "file", "matrix"):
            v = t.get(k)
            if isinstance(v, str) and os.path.isfile(v):
                st = os.stat(v)
                t[k] = {"sha256": _file_sha256(os.path.realpath(v), st.st_mtime_ns, st.st_size)}
        return t

    out = dict(doc)
    if isinstance(doc.get("topology"), dict) and "file" in doc["topology"]:
        out["topology"] = addressed(doc["topology"])
    traffic = doc.get("traffic")
    if isinstance(traffic, list):
        out["traffic"] = [addressed(t) if isinstance(t, dict) else t for t in traffic]
    return out


@functools.lru_cache(maxsize=256)
def _file_sha256(path: str, _mtime_ns: int, _size: int) -> str:
    """SHA-256 of a file's bytes (cached per path, modification time and size)."""
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def resolve_point(p: Point) -> Resolved:
    """The point's document, seed and key; a point that cannot be resolved gets a key of
    what it was given, and its error."""
    from ..api import resolve

    try:
        doc = resolve(p.scenario, list(p.overrides))
        seed = int(p.seed) if p.seed is not None else _default_seed(doc)
        if not 0 <= seed < 2**64:
            raise ScenarioError(f"seed: {seed} is not in 0..2^64")
        return Resolved(p, point_key(doc, seed), doc, seed)
    except (ScenarioError, TypeError, ValueError) as e:
        ident = {"scenario": p.scenario, "overrides": list(p.overrides), "seed": p.seed}
        key = "bad-" + hashlib.sha256(_canonical(ident).encode()).hexdigest()[:12]
        return Resolved(p, key, None, p.seed, _one_line(e))


def _default_seed(doc: dict[str, Any]) -> int:
    """The seed a document runs with when no seed is given: its ``seed``, or the core's
    default for a file without one (a user's scenario need not have the key)."""
    from ..scenario import to_json

    if "seed" in doc:
        return int(doc["seed"])
    return int(json.loads(_core.resolve_json(to_json(doc)))["seed"])


_FCT = tuple(name for name, _, _ in _core.fct_classes())  # summary.json's FCT size classes
MAX_QUEUE_COLUMNS = 24


def summary_row(s: dict[str, Any]) -> dict[str, Any]:
    """Flatten a ``summary.json`` into the metrics columns of ``results.csv``."""
    row: dict[str, Any] = {
        "sim_time_s": s.get("sim_time_s"),
        "wall_time_s": s.get("wall_time_s"),
        "events": s.get("events"),
    }
    fct = s.get("fct", {})
    for c in _FCT:
        f = fct.get(c, {}) or {}
        row[f"fct_{c}_count"] = f.get("count")
        for m in ("avg_us", "p50_us", "p99_us"):
            row[f"fct_{c}_{m}"] = f.get(m)
    for group, label in (("queue", "queue"), ("class", "class")):  # fct_by_class, small topologies or not
        for k, buckets in sorted((s.get("fct_by_class") or {}).get(group, {}).items(), key=lambda kv: int(kv[0])):
            for c in _FCT:
                f = buckets.get(c, {}) or {}
                row[f"fct_{c}_count[{label}={k}]"] = f.get("count")
                for m in ("avg_us", "p50_us", "p99_us"):
                    row[f"fct_{c}_{m}[{label}={k}]"] = f.get(m)
    fl = s.get("flows", {})
    row["flows_completed"] = fl.get("completed")
    row["flows_unfinished"] = fl.get("unfinished")
    row["timeouts"] = fl.get("timeouts")
    row["marks"] = s.get("marks")
    row["drops"] = s.get("drops")
    qs = s.get("queues", []) or []
    row["max_qlen_bytes"] = max((q.get("max_qlen_bytes", 0) for q in qs), default=None)
    pr = s.get("probe_rtt", {}) or {}
    row["probe_rtt_count"] = pr.get("count")
    for m in ("avg_us", "p50_us", "p99_us"):
        row[f"probe_rtt_{m}"] = pr.get(m)
    lf = s.get("long_flows") or {}
    if lf.get("goodput_bps"):
        row["long_jain_index"] = lf.get("jain_index")
        row["long_goodput_bps_total"] = sum(lf["goodput_bps"])
    active = [q for q in qs if (q.get("goodput_bps") or 0) > 0 or q.get("drops")]
    if 0 < len(active) <= MAX_QUEUE_COLUMNS:  # per-queue columns for small topologies
        for q in active:
            tag = f"{q['port']}:{q['queue']}"
            row[f"goodput_bps[{tag}]"] = q.get("goodput_bps")
            row[f"avg_qlen_bytes[{tag}]"] = q.get("avg_qlen_bytes")
            row[f"max_qlen_bytes[{tag}]"] = q.get("max_qlen_bytes")
            row[f"marks[{tag}]"] = q.get("marks")
            row[f"drops[{tag}]"] = q.get("drops")
    ports = s.get("ports") or []
    if 0 < len(ports) <= MAX_QUEUE_COLUMNS:
        for p in ports:
            row[f"utilization[{p['port']}]"] = p.get("utilization")
    return row




@dataclass
class SweepResult:
    """What ``run_points`` returns: one row per point (params, status, error, metrics),
    the output directory, and counts."""

    rows: list[dict[str, Any]]
    out: Path
    ran: int
    cached: int
    failed: int

    def frame(self):
        """``rows`` as a pandas DataFrame."""
        import pandas as pd

        return pd.DataFrame(self.rows)


def params_json(r: Resolved, attempt: int = 1) -> dict[str, Any]:
    p = r.point
    return json.loads(json.dumps({
        "key": r.key,
        "params": p.params,
        "scenario": p.scenario if isinstance(p.scenario, (str, os.PathLike)) else (p.scenario.get("name") or "<dict>"),
        "overrides": list(p.overrides),
        "seed": r.seed,
        "attempt": attempt,
        "ecnlab": build_info(),
    }, default=str))  # plain JSON: point.json and the failure record


def tmp_dir(runs: Path, key: str) -> Path:
    """Where a run is written before it is renamed into place; named after the driver, so
    that a driver clears only what dead drivers left (two sweeps may share a store)."""
    return runs / f".tmp-{key}-{os.getpid()}-{uuid.uuid4().hex[:8]}"


def clear_stale(runs: Path) -> None:
    """Remove temporary run directories whose driver is gone (killed mid-write)."""
    for stale in runs.glob(".tmp-*"):
        parts = stale.name.split("-")
        try:
            pid = int(parts[2])
            os.kill(pid, 0)
            if pid != os.getpid():
                continue  # a live driver is writing it
        except (IndexError, ValueError, ProcessLookupError):
            pass  # malformed, or its driver is dead
        except PermissionError:
            continue  # alive, someone else's
        shutil.rmtree(stale, ignore_errors=True)


def commit(runs: Path, r: Resolved, tmp: Path) -> None:
    """Move a complete run directory into place: one rename, so runs/<key>/ either is
    complete or does not exist."""
    final = runs / r.key
    try:
        os.rename(tmp, final)
    except OSError:
        if (final / "summary.json").exists():  # someone else finished it meanwhile
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            shutil.rmtree(final, ignore_errors=True)
            os.rename(tmp, final)


def write_run(tmp: Path, res, meta: dict[str, Any]) -> None:
    res.write_files(tmp)  # tmp is this driver's own; commit() renames it into place
    meta = meta | {"finished_at": time.time(), "pid": os.getpid()}
    (tmp / "point.json").write_text(json.dumps(meta, indent=2) + "\n")


def store_result(runs: Path, r: Resolved, res, attempt: int = 1) -> None:
    """Write a RunResult returned by a remote worker: temp dir, then rename."""
    tmp = tmp_dir(runs, r.key)
    try:
        write_run(tmp, res, params_json(r, attempt))
        commit(runs, r, tmp)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def record_failure(failed_dir: Path, r: Resolved, error: str, attempts: int = 1) -> None:
    failed_dir.mkdir(parents=True, exist_ok=True)
    rec = params_json(r, attempts) | {"error": error, "failed_at": time.time()}
    tmp = failed_dir / f".{r.key}.{uuid.uuid4().hex[:8]}"
    tmp.write_text(json.dumps(rec, indent=2) + "\n")
    os.replace(tmp, failed_dir / f"{r.key}.json")


def result_rows(resolved: list[Resolved], status: dict[str, tuple[str, str]], runs: Path) -> list[dict[str, Any]]:
    rows = []
    for r in resolved:
        st, err = status.get(r.key, ("missing", ""))
        row: dict[str, Any] = dict(r.point.params)
        row["seed"] = r.seed
        row["key"] = r.key
        row["status"] = st
        row["error"] = err
        if st == "ok":
            try:
                s = json.loads((runs / r.key / "summary.json").read_text())
                row |= summary_row(s)
            except (OSError, ValueError) as e:
                row["status"], row["error"] = "failed", f"unreadable summary.json: {_one_line(e)}"
        rows.append(row)
    return rows


def write_results(path: Path, rows: list[dict[str, Any]]) -> None:
    from ..report.stats import write_csv_atomic

    write_csv_atomic(path, rows, list(dict.fromkeys(k for r in rows for k in r)))


def write_summary(out: Path, rows: list[dict[str, Any]], resolved: list[Resolved]) -> None:
    """``summary.csv``: the rows of results.csv aggregated over seeds (ecnlab.report.stats)."""
    from ..report.stats import write_summary_csv

    write_summary_csv(out, rows, list(dict.fromkeys(k for r in resolved for k in r.point.params)))


