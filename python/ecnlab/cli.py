"""The ``ecnlab`` command.

Every failure the user can fix is reported as one line, ``ecnlab: error: ...``, with exit
status 2; an internal error (a broken invariant) exits with 1. No traceback either way.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from . import __version__
from .api import PCAP_LIMIT_BYTES, engine_id, resolve, run, validate
from .commandline import Parser, blame_set, count, fmt_rate, positive
from .exits import exit_status, stdout_closed
from .outdir import result_dir
from .scenario import ScenarioError, builtin_names, describe

DEFAULT_SCENARIO = "tcn-static"


def _print_summary(s: dict, out: Path) -> None:
    print(f"{s['scenario']} (seed {s['seed']}): {s['sim_time_s']:.3f} s simulated in {s['wall_time_s']:.2f} s wall, "
          f"{s['events']:,} events, {s['packet_hops']:,} packet-hops")
    qs = [q for q in s["queues"] if q["goodput_bps"] > 0 or q["marks"] or q["drops"]]
    hidden = 0
    if len(qs) > 12:
        hidden = len(qs) - 10
        qs = sorted(qs, key=lambda q: -q["goodput_bps"])[:10]
    if qs:
        print(f"  {'port':<14} {'queue':>5} {'goodput':>14} {'avg qlen':>10} {'max qlen':>10} {'marks':>8} {'drops':>7}")
        for q in qs:
            print(f"  {q['port']:<14} {q['queue']:>5} {fmt_rate(q['goodput_bps']):>14} "
                  f"{q['avg_qlen_bytes'] / 1e3:>8.1f}KB {q['max_qlen_bytes'] / 1e3:>8.1f}KB {q['marks']:>8} {q['drops']:>7}")
        if hidden:
            print(f"  ... and {hidden} more queues (the 10 busiest are shown; all are in summary.json)")
    f = s["fct"]["all"]
    if f["count"]:
        print(f"  FCT all: n={f['count']} avg {f['avg_us']:.1f} us, p99 {f['p99_us']:.1f} us; "
              f"small p99 {s['fct']['small']['p99_us'] or float('nan'):.1f} us; unfinished {s['flows']['unfinished']}")
    r = s.get("probe_rtt", {})
    if r.get("count"):
        print(f"  probe RTT: n={r['count']} avg {r['avg_us']:.1f} us, p50 {r['p50_us']:.1f} us, p99 {r['p99_us']:.1f} us")
    sound = s.get("soundness")
    if sound and not sound["sound"]:  # ecnlab.soundness: the run may not test the switch
        print(f"  not sound ({len(sound['flags'])} flags, summary.json's soundness):")
        for f in sound["flags"][:5]:
            print(f"    {f['rule']}: {f['text']}")
    print(f"  results in {out}/")


class _RunProgress:
    """One line on a terminal's stderr, redrawn twice a second: simulated time, flows done,
    ETA. Silent when stderr is not a terminal, and for runs shorter than a second."""

    def __init__(self, stream=sys.stderr):
        self.stream = stream
        self.t0 = time.monotonic()
        self.last = 0.0
        self.shown = False

    def __call__(self, now_ns: int, end_ns: int, done: int, started: int) -> None:
        t = time.monotonic()
        if t - self.last < 0.5 or t - self.t0 < 1.0:
            return
        self.last = t
        frac = now_ns / end_ns if end_ns else 1.0
        eta = (t - self.t0) * (1 - frac) / frac if frac > 0 else float("inf")
        flows = f", {done:,}/{started:,} flows done" if started else ""
        self.stream.write(f"\r  {now_ns / 1e9:.4f} of {end_ns / 1e9:.4f} s simulated ({frac:.0%}){flows}, "
                          f"ETA {_hms(eta)}   \x1b[K")
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def _hms(s: float) -> str:
    if s == float("inf"):
        return "?"
    s = int(s)
    return f"{s // 3600}:{s // 60 % 60:02}:{s % 60:02}" if s >= 3600 else f"{s // 60}:{s % 60:02}"


def _cmd_run(a: argparse.Namespace) -> int:
    name = a.scenario or DEFAULT_SCENARIO
    try:
        doc = resolve(name, a.set)
    except ScenarioError as e:
        raise blame_set(e, a.set) from None
    # The output directory is checked before the run: an unwritable --out must not cost a
    # whole simulation. A valid scenario's name is one plain path component, so the default
    # out/<name> stays under out/.
    try:
        validate(doc)
    except ScenarioError as e:
        raise blame_set(_labelled(e, name), a.set) from None
    pcap = _pcap_args(a)
    prog = _RunProgress() if not a.quiet and sys.stderr.isatty() else None
    out = Path(a.out) if a.out else Path("out") / doc["name"]
    # The whole result, the report included, is written into a fresh directory and renamed
    # to --out once complete (outdir.py): a refused, failed or interrupted run leaves the
    # earlier result or nothing. --out is checked here, before the run.
    with result_dir(out) as tmp:
        try:
            res = run(doc, seed=a.seed, progress=prog, **pcap)
        except ScenarioError as e:
            raise blame_set(_labelled(e, name), a.set) from None
        finally:
            if prog:
                prog.close()
        res.write_files(tmp)
        if a.report:
            from .report import report

            report(tmp)
    if res.pcap_truncated:
        sys.stderr.write(f"ecnlab: warning: the packet captures reached --pcap-limit {a.pcap_limit} and stop "
                         f"there; {out}/pcap/ holds the run's beginning\n")
    fl = res.summary["flows"]
    # A run that stops when its flows are done was cut by its cap; one with a fixed window
    # (metrics.stop_when_done = false, e.g. ecnsharp-incast) asks for no more than the window.
    if fl.get("not_started") and _stops_when_done(doc):
        sys.stderr.write(f"ecnlab: warning: {fl['not_started']} of {fl['total']} flows start at or after the run's end "
                         f"({res.summary['sim_time_s']:g} s, duration): they never ran (flows.not_started; listed "
                         f"in flows.csv with no connection)\n")
    if not a.quiet:
        _print_summary(res.summary, out)
        if a.report:
            print(f"report: {out / 'report.html'}")
    return 0


def _stops_when_done(doc: dict) -> bool:
    """``metrics.stop_when_done`` as the core resolves it (its default lives there)."""
    from . import _core
    from .scenario import to_json

    return json.loads(_core.resolve_json(to_json(doc)))["metrics"]["stop_when_done"]


def _pcap_args(a: argparse.Namespace) -> dict:
    if not a.pcap:
        return {}
    from . import _core

    try:
        limit = _core.parse_unit("size", a.pcap_limit)
    except ValueError as e:
        raise ScenarioError(f"--pcap-limit: {e}") from None
    return {"pcap": a.pcap, "pcap_limit_bytes": limit}


def _write_report(out: Path, quiet: bool) -> None:
    from .report import report

    page = report(out)
    if not quiet:
        print(f"report: {page}")


def _cmd_report(a: argparse.Namespace) -> int:
    _write_report(Path(a.dir), a.quiet)
    return 0


def _labelled(e: ScenarioError, name) -> ScenarioError:
    """An error from a scenario given as a dict, named after its file or built-in."""
    if str(e).startswith(f"{name}: "):
        return e
    err = ScenarioError(f"{name}: {e}")
    err.field_path = getattr(e, "field_path", None)
    return err


def _cmd_list(a: argparse.Namespace) -> int:
    if a.keys:
        from .keys import render

        for line in render(a.profile, a.verbose):
            print(line)
        return 0
    if a.profile:
        raise ScenarioError("list: --profile goes with --keys")
    print("Built-in scenarios (ecnlab run NAME; ecnlab list --keys for what --set accepts):")
    for n in builtin_names():
        desc, claim = describe(n)
        star = " (default)" if n == DEFAULT_SCENARIO else ""
        print(f"  {n}{star}")
        if desc:
            print(f"      {desc.strip().splitlines()[0]}")
        if claim and a.verbose:
            print(f"      claim: {claim.strip()}")
    return 0


def _cmd_schema(a: argparse.Namespace) -> int:
    from . import _core

    print(json.dumps(json.loads(_core.schema_json()), indent=2, ensure_ascii=False))
    return 0


def _cmd_check(a: argparse.Namespace) -> int:
    try:
        validate(a.scenario, a.set)
    except ScenarioError as e:
        raise blame_set(e, a.set) from None
    print(f"{a.scenario}: ok")
    return 0


def _seconds(text: str) -> float:
    """A time limit, with its unit ("90s", "10min"), in seconds."""
    from .sweep import time_limit_s

    try:
        return time_limit_s(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _cmd_sweep(a: argparse.Namespace) -> int:
    from .sweep import load_sweep, points_from_spec, run_points

    spec = load_sweep(a.sweep)
    points = points_from_spec(spec)
    if not a.out and not a.dry_run:
        raise ScenarioError("sweep: --out DIR is required (or --dry-run to list the points)")
    if a.dry_run:  # the points, checked, one line each; nothing runs or is written
        for p in points:
            print(json.dumps({**p.params, "seed": p.seed}, default=str))
        print(f"{len(points)} points", file=sys.stderr)
        return 0
    for p in points:  # the command line wins over the sweep file
        if a.timeout is not None:
            p.timeout = a.timeout
        if a.retries is not None:
            p.retries = a.retries
    res = run_points(points, a.out, jobs=a.jobs, cluster=a.cluster, progress=not a.quiet)
    if not a.quiet:
        print(f"{len(res.rows)} points: {res.cached} already done, {res.ran} ran, {res.failed} failed; "
              f"results in {Path(a.out) / 'results.csv'}")
        for r in res.rows:
            if r["status"] == "failed":
                params = {k: v for k, v in r.items() if k not in ("key", "status", "error")}
                print(f"  failed {json.dumps(params, default=str)}: {r['error']}")
    if a.report:
        _write_report(Path(a.out), a.quiet)
    return 1 if res.failed else 0


def _cmd_advise(a: argparse.Namespace) -> int:
    from .advise.cli import build_parser as advise_parser, run as advise_run

    return advise_run(advise_parser(Parser).parse_args(a.rest))


def _cmd_estimate(a: argparse.Namespace) -> int:
    from .estimate.cli import build_parser as estimate_parser, run as estimate_run

    return estimate_run(estimate_parser(Parser).parse_args(a.rest))


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog="ecnlab", description="Choose and tune ECN marking for datacenter switches.")
    p.add_argument("-V", "--version", action="version", version=f"ecnlab {__version__} (build {engine_id()})")
    sub = p.add_subparsers(dest="cmd", required=True, parser_class=Parser)

    r = sub.add_parser("run", help="run one scenario and write its results")
    r.add_argument("scenario", nargs="?", help=f"built-in name or TOML file (default: {DEFAULT_SCENARIO})")
    r.add_argument("--out", help="result directory (default: out/<scenario name>)")
    r.add_argument("--seed", type=int, help="master seed (default: the scenario's)")
    r.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a scenario key, e.g. marking.scheme=per_queue (repeatable)")
    r.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    r.add_argument("--report", action="store_true", help="also write report.html with figures (ecnlab report)")
    r.add_argument("--pcap", action="append", default=[], metavar="PORT",
                   help="capture a switch port (as summary.json names it, e.g. s0->h0, or all) into "
                        "DIR/pcap/PORT.pcap (repeatable)")
    r.add_argument("--pcap-limit", default=f"{PCAP_LIMIT_BYTES}B", metavar="SIZE",
                   help=f"bound on all captures together ({PCAP_LIMIT_BYTES / 1e6:g}MB)")
    r.set_defaults(func=_cmd_run)

    ls = sub.add_parser("list", help="list built-in scenarios, or with --keys the keys --set accepts")
    ls.add_argument("--keys", action="store_true",
                    help="list every key of a scenario file (and --set) with its type, default and description")
    ls.add_argument("--profile", choices=["linux", "textbook"],
                    help="with --keys: only the [transport] keys of this profile, at its defaults")
    ls.add_argument("-v", "--verbose", action="store_true",
                    help="also show each paper claim (with --keys: each key's full description)")
    ls.set_defaults(func=_cmd_list)

    sch = sub.add_parser("schema", help="print the JSON Schema of a scenario file (for editors: Taplo, "
                         "Even Better TOML)")
    sch.set_defaults(func=_cmd_schema)

    c = sub.add_parser("check", help="validate a scenario without running it")
    c.add_argument("scenario")
    c.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    c.set_defaults(func=_cmd_check)

    adv = sub.add_parser("advise", add_help=False, help="which marking scheme and parameters, checked in simulation, "
                         "as switch configuration (ecnlab advise -h)")
    adv.set_defaults(func=_cmd_advise)
    est = sub.add_parser("estimate", add_help=False, help="estimate a fabric's FCTs from one simulation per link "
                         "(Parsimon's method; approximate; ecnlab estimate -h)")
    est.set_defaults(func=_cmd_estimate)
    sub.add_parser("bench", add_help=False, help="run the benchmark suite against ns-3 (benches/run.py; -h for options); "
                   "`ecnlab bench estimate`: the estimate against the exact simulator (benches/estimate.py)")
    sub.add_parser("emulate", add_help=False,
                   help="run a scenario on real Linux TCP through the emulated switch (root; ecnlab emulate -h)")
    sub.add_parser("validate", add_help=False,
                   help="compare a scenario in the simulator and on the kernel, per metric against bands "
                        "(root; ecnlab validate -h)")

    sw = sub.add_parser("sweep", help="run a grid of scenarios (SWEEP.toml) in parallel, resumable")
    sw.add_argument("sweep", help="the sweep file (scenario, [grid], [cases.*], seeds; see the README)")
    sw.add_argument("--out", help="result directory: results.csv, runs/<key>/, failed/ (required to run)")
    sw.add_argument("--dry-run", action="store_true",
                    help="check the sweep file and print its points (JSON lines), without running")
    sw.add_argument("--jobs", type=positive, help="local worker processes (default: all cores)")
    sw.add_argument("--cluster", metavar="tcp://HOST:PORT",
                    help="run on this Dask scheduler ('local' starts a LocalCluster); needs ecnlab[cluster]")
    sw.add_argument("--timeout", type=_seconds, metavar="TIME",
                    help="kill a run that takes longer and record it as failed (default: the sweep file's "
                         "timeout, else none)")
    sw.add_argument("--retries", type=count, metavar="N",
                    help="new tries for a run whose worker process died (default: the sweep file's, else 2)")
    sw.add_argument("-q", "--quiet", action="store_true", help="no progress and no summary")
    sw.add_argument("--report", action="store_true", help="also write report.html with figures (ecnlab report)")
    sw.set_defaults(func=_cmd_sweep)

    rep = sub.add_parser("report", help="write report.html with figures for an ecnlab run or sweep directory")
    rep.add_argument("dir", help="the --out directory of ecnlab run or ecnlab sweep")
    rep.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    rep.set_defaults(func=_cmd_report)

    from .reproduce.command import add_parser as reproduce_parser  # the catalog's own options

    reproduce_parser(sub)
    return p


def _sigterm_as_interrupt() -> None:
    """Let `kill` stop a command as Ctrl-C does: a sweep's workers terminated, finished runs
    kept, temporary directories removed (outdir.py), exit 130."""
    import signal

    def handler(signum, frame):
        raise KeyboardInterrupt

    try:
        signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread
        pass


def _bench(rest: list[str]) -> int:
    """`ecnlab bench ...` runs the benchmark suite of a source checkout (benches/run.py);
    `ecnlab bench estimate ...` the estimate's calibration against the exact simulator
    (benches/estimate.py, issue 34)."""
    import subprocess
    from pathlib import Path as _P

    name = "estimate.py" if rest[:1] == ["estimate"] else "run.py"
    rest = rest[1:] if name == "estimate.py" else rest
    script = _P(__file__).resolve().parents[2] / "benches" / name
    if not script.exists():
        sys.stderr.write(f"ecnlab: error: the benchmark suite (benches/{name}) ships with the source repository only\n")
        return 2
    return subprocess.call([sys.executable, str(script), *rest])


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except BrokenPipeError:
        return stdout_closed()


def _main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv:
        build_parser().print_help()
        return 0
    if argv[:1] == ["emulate"]:
        # The emulator has its own option parser (python/ecnlab/emulate.py).
        from .emulate import main as emulate_main

        return emulate_main(argv[1:])
    if argv[:1] == ["validate"]:
        from .validation import main as validate_main

        return validate_main(argv[1:])
    if argv[:1] == ["bench"]:
        return _bench(argv[1:])
    if argv[:1] == ["advise"]:  # its own options (python/ecnlab/advise/cli.py), errors handled below
        args = argparse.Namespace(cmd="advise", func=_cmd_advise, rest=argv[1:])
    elif argv[:1] == ["estimate"]:  # its own options (python/ecnlab/estimate/cli.py)
        args = argparse.Namespace(cmd="estimate", func=_cmd_estimate, rest=argv[1:])
    else:
        args = build_parser().parse_args(argv)
    _sigterm_as_interrupt()
    try:
        return args.func(args)
    except BaseException as e:  # noqa: BLE001 - one line and a status for everything (exits.py)
        return exit_status(e)

if __name__ == "__main__":
    sys.exit(main())
