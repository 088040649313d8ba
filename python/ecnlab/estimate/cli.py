"""The ``ecnlab estimate`` command line (its own parser, registered in ``ecnlab.cli``)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from ..commandline import Parser, blame_set, positive
from ..scenario import ScenarioError
from . import DEFAULT_THRESHOLD, WINDOW_CAPS


def _distance(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text[:40]}' is not a number") from None
    if not v >= 0 or v == float("inf"):
        raise argparse.ArgumentTypeError(f"{text[:40]} must be a distance >= 0")
    return v


def build_parser(parser_class=Parser) -> argparse.ArgumentParser:
    p = parser_class(prog="ecnlab estimate",
                     description="Estimate a fabric's FCTs after Parsimon: one simulation per directed link, alike "
                                 "links clustered, delays added along each flow's path (approximate; see the README).")
    p.add_argument("scenario", help="built-in name or TOML file")
    p.add_argument("--out", required=True, help="result directory (summary.json, flows.csv, links.csv, scenario.json)")
    p.add_argument("--seed", type=int, help="master seed (default: the scenario's)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a scenario key (repeatable)")
    p.add_argument("--cluster", metavar="ADDR",
                   help="run the link simulations on this Dask scheduler (tcp://HOST:PORT; 'local' starts a "
                        "LocalCluster of --workers processes); default: this machine's cores")
    p.add_argument("--workers", type=positive,
                   help="parallel simulations on this machine, and the threads routing the flows (default: all "
                        "cores); with --cluster local, the LocalCluster's processes (the flows then routed on all "
                        "cores)")
    p.add_argument("--threshold", type=_distance, default=DEFAULT_THRESHOLD,
                   help=f"clustering distance below which links share a simulation (default {DEFAULT_THRESHOLD}; "
                        "0: every link simulated)")
    p.add_argument("--max-hosts", type=positive, default=1000,
                   help="senders (or receivers) of one link simulation before hosts are merged (default 1000)")
    p.add_argument("--window-cap", choices=WINDOW_CAPS, default=WINDOW_CAPS[0],
                   help="nics (default): the link simulation of a host's unmarked NIC caps its senders' windows at "
                        "the largest BDP of its flows' paths (no switch after it marks them, as in the fabric); "
                        "off: the scenario's windows")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    return p


class _Progress:
    """``done/total simulations`` on a terminal's stderr, twice a second."""

    def __init__(self):
        self.last = 0.0
        self.shown = False

    def __call__(self, done: int, total: int) -> None:
        t = time.monotonic()
        if t - self.last < 0.5 and done < total:
            return
        self.last = t
        sys.stderr.write(f"\r  {done}/{total} simulations\x1b[K")
        sys.stderr.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


def run(a: argparse.Namespace) -> int:
    from . import estimate

    prog = _Progress() if not a.quiet and sys.stderr.isatty() else None
    try:
        s = estimate(a.scenario, a.out, seed=a.seed, overrides=a.set, cluster=a.cluster, workers=a.workers,
                     threshold=a.threshold, max_hosts=a.max_hosts, window_cap=a.window_cap,
                     progress=prog)
    except ScenarioError as e:
        raise blame_set(e, a.set) from None
    finally:
        if prog:
            prog.close()
    if not a.quiet:
        _print(s, Path(a.out))
    return 0


def _print(s: dict, out: Path) -> None:
    e = s["estimate"]
    st = e["stages_s"]
    print(f"{s['scenario']} (seed {s['seed']}): estimated {s['sim_time_s']:.3f} s in {s['wall_time_s']:.2f} s wall "
          f"(approximate): {e['links']} links, {e['link_simulations']} link simulations "
          f"(clustering threshold {e['clustering']['threshold']:g}), {e['alone_simulations']} alone")
    print("  stages: " + ", ".join(f"{k} {v:.2f} s" for k, v in st.items()))
    f = s["fct"]
    for c in ("all", "small", "medium", "large"):
        if f[c]["count"]:
            print(f"  FCT {c:<6} n={f[c]['count']:<7} avg {f[c]['avg_us']:10.1f} us  p99 {f[c]['p99_us']:10.1f} us  "
                  f"slowdown avg {f[c]['avg_slowdown']:.2f} p99 {f[c]['p99_slowdown']:.2f}")
    print(f"  unfinished {s['flows']['unfinished']}, not started {s['flows']['not_started']}")
    sound = s.get("soundness")
    if sound and not sound["sound"]:
        print(f"  not sound ({len(sound['flags'])} flags, summary.json's soundness):")
        for fl in sound["flags"][:5]:
            print(f"    {fl['rule']}: {fl['text']}")
    print(f"  results in {out}/")
