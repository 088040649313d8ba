"""``ecnlab reproduce``: the command's options and what it does with them (the catalog's own
part of the CLI; ``ecnlab.cli`` hands the subcommand to ``add_parser`` and ``run``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..scenario import ScenarioError


def add_parser(sub: Any) -> argparse.ArgumentParser:
    from ..commandline import positive

    rp = sub.add_parser("reproduce", help="run paper experiments of the catalog and report paper vs ecnlab")
    rp.add_argument("ids", nargs="*", metavar="ID", help="catalog entries (ecnlab reproduce --list)")
    rp.add_argument("--all", action="store_true", help="the whole catalog, with an index page")
    rp.add_argument("--list", action="store_true", help="list the catalog entries")
    rp.add_argument("--out", help="result directory (default: out/<ID> or out/reproduce-<scale>)")
    rp.add_argument("--scale", choices=["quick", "paper"], default="quick",
                    help="quick: minutes on a laptop (default); paper: the papers' sizes")
    rp.add_argument("--seeds", type=positive, help="number of seeds (default: the entry's)")
    rp.add_argument("--jobs", type=positive, help="local worker processes (default: all cores)")
    rp.add_argument("--cluster", metavar="tcp://HOST:PORT", help="run on a Dask scheduler")
    rp.add_argument("--markdown", metavar="FILE", help="also write the claims table as Markdown (REPRODUCTION.md)")
    rp.add_argument("--where", action="append", metavar="KEY=V[,V]",
                    help="run only the grid points whose parameter KEY takes one of the values (repeatable, e.g. "
                         "--where load=0.9); runs already in --out are reused, so a wider subset later adds to them")
    rp.add_argument("--save", metavar="RESULTS", help="also copy each entry's results.csv, per-run data "
                    "(runs.json.gz), claims.json, experiment.json and figures into RESULTS/<scale>/<id>/ (the "
                    "committed results); points saved there for this build are not run again (a run in parts, "
                    "across machines)")
    rp.add_argument("--from", dest="from_", metavar="RESULTS", help="run nothing: judge every claim again from the "
                    "committed results in RESULTS (paper scale preferred) and rebuild the reports (and --markdown); "
                    "with ids, only those entries")
    rp.add_argument("--status", action="store_true", help="run nothing: how much of the grid the store --out holds "
                    "for this build, per entry (a background --all run's progress); with --save, also those RESULTS "
                    "holds")
    rp.add_argument("-q", "--quiet", action="store_true", help="no progress and no summary")
    rp.set_defaults(func=run)
    return rp


def run(a: argparse.Namespace) -> int:
    from . import CATALOG, reproduce

    if a.list:
        for e in CATALOG.values():
            print(f"  {e.id:<22} {e.paper}, {e.figures}: {e.title}")
        return 0
    unknown = [i for i in a.ids if i not in CATALOG]
    if unknown:
        import difflib

        near = difflib.get_close_matches(unknown[0], list(CATALOG), n=1)
        hint = f" (did you mean '{near[0]}'?)" if near else ""
        raise ScenarioError(f"no catalog entry '{unknown[0]}'{hint}; ecnlab reproduce --list shows them")
    if a.from_:
        return _from(a)
    if a.all and a.ids:
        raise ScenarioError("give catalog ids or --all, not both")
    if not a.all and not a.ids:
        raise ScenarioError("give a catalog id (ecnlab reproduce --list) or --all")
    ids = None if a.all else (a.ids[0] if len(a.ids) == 1 else a.ids)
    out = a.out or (f"out/reproduce-{a.scale}" if a.all else f"out/{a.ids[0]}")
    if a.status:
        from .runner import status

        for line in status(ids, Path(out), a.scale, a.seeds, save=a.save):
            print(line)
        return 0
    r = reproduce(ids, out=out, scale=a.scale, seeds=a.seeds, jobs=a.jobs, cluster=a.cluster,
                  progress=not a.quiet, markdown=a.markdown, where=a.where, save=a.save)
    if not a.quiet:
        c = r.claims
        for exp_id, m in r.manifests.items():
            cl = c[c["experiment"] == exp_id]
            if m["status"] == "not run":
                print(f"{exp_id}: not run: {m['reason']}")
                continue
            shown = int((cl["status"] == "shown").sum())
            print(f"{exp_id}: {shown}/{len(cl)} claims shown ({m['runs']['ok']}/{m['runs']['total']} runs ok, "
                  f"{m['wall_time_s']:.0f} s)")
        page = "index.html" if ids is None or not isinstance(ids, str) else "report.html"
        print(f"report: {Path(out) / page}")
    return 0


def _from(a: argparse.Namespace) -> int:
    if a.all or a.where or a.save or a.status:
        raise ScenarioError("--from judges the saved results again: give no --all, --where, --save or --status "
                            "(ids to judge only those entries)")
    from .reasons import REASONS, load_reasons, reasons_problems
    from .results import regenerate

    manifests, claims = regenerate(a.from_, a.markdown, ids=a.ids or None)
    reasons = {k: v for k, v in load_reasons(a.from_).items() if not a.ids or k[0] in a.ids}
    stale = reasons_problems(reasons, claims, {m["id"]: m["scale"] for m in manifests})
    if stale:  # the tables are written; the reasons file needs its reader's attention
        print(f"ecnlab: warning: {Path(a.from_) / REASONS} is not current ({len(stale)}): "
              + "; ".join(stale[:5]) + (" ..." if len(stale) > 5 else ""), file=sys.stderr)
    if not a.quiet:
        shown = sum(1 for c in claims if c["status"] == "shown")
        print(f"{len(manifests)} entries, {shown}/{len(claims)} claims shown; report: {Path(a.from_) / 'index.html'}")
    return 0
