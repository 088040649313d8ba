"""The Python API: load a scenario, run it, read or write its results.

>>> import ecnlab
>>> res = ecnlab.run("tcn-static", seed=1, overrides=["marking.scheme=per_queue"])
>>> res.summary["queues"][0]["goodput_bps"]           # doctest: +SKIP
>>> res.write("out/tcn-static")                         # summary.json, flows.csv, ...
"""

from __future__ import annotations

import csv
import functools
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from . import _core
from .outdir import result_dir
from .scenario import ScenarioError, load, to_json, with_overrides


class SimulationError(RuntimeError):
    """ecnlab broke one of its own invariants (a bug): the message says which and when."""


@dataclass
class RunResult:
    """The outcome of one run."""

    scenario: dict[str, Any]
    summary: dict[str, Any]
    flows: list[dict[str, Any]]
    probes: list[dict[str, Any]]
    timeseries: dict[str, list]
    files: list[str] = field(default_factory=list)
    # Packet captures (run(..., pcap=[...])): {port name: pcap file bytes}, and whether
    # the size limit cut them.
    pcaps: dict[str, bytes] = field(default_factory=dict)
    pcap_truncated: bool = False

    def flows_frame(self):
        """Per-flow records as a pandas DataFrame (requires pandas)."""
        import pandas as pd

        return pd.DataFrame(self.flows)

    def queues_frame(self):
        """Per-queue summary rows as a pandas DataFrame (requires pandas)."""
        import pandas as pd

        return pd.DataFrame(self.summary["queues"])

    def timeseries_frame(self):
        import pandas as pd

        return pd.DataFrame(self.timeseries)

    def write(self, out_dir: str | os.PathLike) -> Path:
        """Write the result files as the directory ``out_dir``, whole: into a temporary
        directory beside it, renamed into place once complete, so that ``out_dir`` holds
        this result or the one before it, never a mix (``ecnlab.outdir``). An earlier ecnlab
        result there is replaced; a directory holding other files is refused
        (ScenarioError)."""
        with result_dir(out_dir) as tmp:
            self.write_files(tmp)
        return Path(out_dir)

    def write_files(self, out_dir: str | os.PathLike) -> Path:
        """Write the result files into ``out_dir``, a new directory the caller owns and
        moves into place when complete (``write``, a sweep's run store)."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        (out / "scenario.json").write_text(json.dumps(self.scenario, indent=2) + "\n")
        _write_csv(out / "flows.csv", FLOW_COLUMNS, self.flows)
        _write_columns(out / "timeseries.csv", self.timeseries)
        probe_rows = [
            {"probe": p["id"], "src": p["src"], "dst": p["dst"], "class": p["class"], "rtt_us": r}
            for p in self.probes
            for r in p["rtt_us"]
        ]
        _write_csv(out / "probes.csv", ["probe", "src", "dst", "class", "rtt_us"], probe_rows)
        if self.pcaps:  # pcap/<port>.pcap, the port named as in summary.json
            (out / "pcap").mkdir(exist_ok=True)
            for port, data in self.pcaps.items():
                (out / "pcap" / f"{port}.pcap").write_bytes(data)
        (out / "summary.json").write_text(json.dumps(self.summary, indent=2) + "\n")
        return out


FLOW_COLUMNS = [
    "id", "spec", "conn", "src", "dst", "class", "size", "start_s", "finish_s", "fct_us",
    "ideal_fct_us", "slowdown", "acked_bytes", "timeouts", "timeouts_after_finish", "retransmits",
    "syn_timeouts", "tlp_probes", "undos",
]


def _write_csv(path: Path, columns: list[str], rows: Iterable[dict[str, Any]]) -> None:
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if v is None else v) for k, v in r.items()})


def _write_columns(path: Path, columns: dict[str, list]) -> None:
    """A CSV from columns, row by row: a dict per row cost ~500 B each, and a time series at
    a 10 us interval has millions of rows."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(columns)
        w.writerows(tuple("" if v is None else v for v in row) for row in zip(*columns.values()))


@functools.lru_cache(maxsize=1)
def engine_id() -> str:
    """Fingerprint of the simulator build (16 hex digits): SHA-256 of what the compiled core
    was built from (its crates' sources, the embedded CDFs, ``Cargo.lock``, the compiler,
    target and profile; ``crates/ecnlab-py/build.rs``). It is part of every sweep run's key,
    so that a run store never hands back results that an older (or newer) ecnlab computed,
    e.g. after an upgrade changed a default; two builds of the same sources (another
    checkout, another machine with the same toolchain) share stored runs."""
    return _core.ENGINE[:16]


def build_info() -> dict[str, str]:
    """What every result file names as its origin: the ecnlab version and build (the
    fingerprint of the compiled core, [`engine_id`])."""
    return {"version": _core.VERSION, "build": engine_id()}


def resolve(scenario: str | os.PathLike | dict[str, Any], overrides: Iterable[str] = ()) -> dict[str, Any]:
    """The scenario document (built-in name, path, or dict) with overrides applied."""
    doc = scenario if isinstance(scenario, dict) else load(scenario)
    try:
        return with_overrides(doc, overrides)
    except ScenarioError as e:  # name the scenario, as the core's errors do
        if isinstance(scenario, dict):
            raise
        raise ScenarioError(f"{os.fspath(scenario)}: {e}") from None


def _scenario_error(scenario: Any, msg: str) -> ScenarioError:
    """The core's message (``field.path: what``) prefixed with the file or built-in name it
    came from; the field path is kept on the error (``.field_path``) so that the command
    line can point at the ``--set`` that put the bad value there."""
    label = "" if isinstance(scenario, dict) else f"{os.fspath(scenario)}: "
    err = ScenarioError(f"{label}{msg}")
    err.field_path = msg.split(": ", 1)[0]
    return err


def culprit_override(err: ScenarioError, overrides: Iterable[str]) -> str | None:
    """The last override (``key=value``) that sets the field an error names, if any:
    ``flows.0.size`` names ``flows[0].size``."""
    field_path = getattr(err, "field_path", None)
    if not field_path:
        return None
    dotted = field_path.replace("[", ".").replace("]", "")

    def names_it(key: str) -> bool:
        return dotted == key or dotted.startswith(key + ".") or key.startswith(dotted + ".")

    hits = [a for a in overrides if "=" in a and names_it(a.split("=", 1)[0].strip())]
    return hits[-1] if hits else None


def validate(scenario: str | os.PathLike | dict[str, Any], overrides: Iterable[str] = ()) -> dict[str, Any]:
    """Resolve and fully validate a scenario without running it; raises ScenarioError."""
    doc = resolve(scenario, overrides)
    try:
        _core.validate_json(to_json(doc))
    except ValueError as e:
        raise _scenario_error(scenario, str(e)) from None
    return doc


PCAP_LIMIT_BYTES = 200_000_000  # all captures of a run together (--pcap-limit)


def run(
    scenario: str | os.PathLike | dict[str, Any],
    seed: int | None = None,
    overrides: Iterable[str] = (),
    pcap: Iterable[str] = (),
    pcap_limit_bytes: int = PCAP_LIMIT_BYTES,
    progress: Callable[[int, int, int, int], None] | None = None,
) -> RunResult:
    """Run a scenario (built-in name, TOML path, or a dict) and return its results.

    ``pcap``: switch ports to capture (names as in ``summary.json``, or ``"all"``), at most
    ``pcap_limit_bytes`` together (ecnlab_sim::pcap); the captures never change the run.
    ``progress(now_ns, end_ns, flows_done, flows_started)`` is called about 20 times a
    second of wall-clock time; Ctrl-C (or an exception ``progress`` raises) stops the run
    within a fraction of a second."""
    pcap = list(pcap)
    doc = resolve(scenario, overrides)
    if seed is not None and not (0 <= int(seed) < 2**64):
        raise ScenarioError(f"seed: {seed} is not in 0..2^64")
    t0 = time.perf_counter()
    try:
        text, caps, truncated = _core.run_json(to_json(doc), None if seed is None else int(seed), progress,
                                               pcap, int(pcap_limit_bytes) if pcap else 0)
    except ValueError as e:
        raise _scenario_error(scenario, str(e)) from None
    except RuntimeError as e:
        raise SimulationError(str(e)) from None
    wall = time.perf_counter() - t0
    out = json.loads(text)
    summary = out["summary"]
    summary["wall_time_s"] = wall
    summary["ecnlab"] = build_info()
    # Keep the contract's keys in a stable, readable order.
    order = ["scenario", "seed", "sim_time_s", "wall_time_s", "events", "packet_hops"]
    summary = {k: summary[k] for k in order} | {k: v for k, v in summary.items() if k not in order}
    # scenario.json records the seed that ran (the file's, or the one given here).
    ran = doc | {"seed": summary["seed"]}
    # Is the run a sound test of the switch (ecnlab.soundness)? Read from what was measured;
    # recording it changes nothing that was simulated.
    from .soundness import Run, assess

    summary["soundness"] = assess(Run.from_result(summary, ran, out["flows"], out["timeseries"])).as_dict()
    return RunResult(ran, summary, out["flows"], out["probes"], out["timeseries"],
                     pcaps={name: data for name, data, _ in caps}, pcap_truncated=truncated)
