"""The ``ecnlab advise`` command line (its own parser, registered in ``ecnlab.cli``)."""

from __future__ import annotations

import argparse

from ..commandline import positive as _positive  # an integer >= 1, else one line


def build_parser(parser_class=argparse.ArgumentParser) -> argparse.ArgumentParser:
    p = parser_class(prog="ecnlab advise", description="Starting ECN marking parameters from the papers' rules, "
                     "checked in simulation, ranked, and written as switch configuration.")
    p.add_argument("--link-rate", required=True, help="e.g. 100Gbps")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--rtt-file", help="RTT samples, one per line with its unit (120us), or ping output")
    g.add_argument("--rtt", help="percentiles, e.g. p50=30us,p90=90us,p99=250us (also min=, mean=)")
    p.add_argument("--queues", type=_positive, default=8)
    p.add_argument("--scheduler", default="sp_dwrr", help="sp_dwrr | dwrr | wfq | sp_wfq | sp | wrr")
    p.add_argument("--transport", default="dctcp", help="dctcp | ecn_star | newreno | dcqcn | ...")
    p.add_argument("--workload", default="websearch", help="a built-in CDF (websearch, datamining, ...) or a file")
    p.add_argument("--load", type=float, default=0.7)
    p.add_argument("--topology", default="star", choices=["star"], help="the check's topology (star)")
    p.add_argument("--senders", type=_positive, default=8, help="hosts sending to the bottleneck port (default 8)")
    p.add_argument("--buffer", help="the port's buffer (default: 4 x the largest threshold swept, >= 1MB)")
    p.add_argument("--schemes", default="tcn,ecn_sharp,per_queue", help="comma-separated marking schemes")
    p.add_argument("--platform", action="append", help="sonic | tc | nvue | junos (repeatable; default all)")
    p.add_argument("--validate", default="quick", help="quick (minutes) | full | none")
    p.add_argument("--flows", type=_positive, help="flows per run (default: 500 quick, 3000 full)")
    p.add_argument("--seeds", type=_positive, help="seeds per point (default: 5 quick, 10 full)")
    p.add_argument("--jobs", type=_positive, help="parallel runs (default: all cores)")
    p.add_argument("--out", required=True, help="result directory")
    p.add_argument("-q", "--quiet", action="store_true")
    return p


def run(a: argparse.Namespace) -> int:
    from . import Inputs, advise
    from .rtt import from_file, from_percentiles

    rtt = from_file(a.rtt_file) if a.rtt_file else from_percentiles(a.rtt)
    plats = []
    for p in a.platform or ["sonic", "tc", "nvue", "junos"]:
        plats.extend(x.strip() for x in p.split(",") if x.strip())
    inp = Inputs(link_rate=a.link_rate, rtt=rtt, queues=a.queues, scheduler=a.scheduler, transport=a.transport,
                 workload=a.workload, load=a.load, schemes=tuple(s.strip() for s in a.schemes.split(",") if s.strip()),
                 platforms=tuple(plats), validate=a.validate, senders=a.senders, buffer=a.buffer, flows=a.flows,
                 seeds=a.seeds, jobs=a.jobs)
    adv = advise(inp, a.out, progress=not a.quiet)
    if not a.quiet:
        rec = adv["recommendation"]
        for e in adv["schemes"]:
            params = ", ".join(f"{k.split('.')[-1]}={v}" for k, v in e["params"].items())
            print(f"{e['scheme']:<10} start {params}  ({e['source']})")
            for why in e.get("not_run", ()):
                print(f"{'':<10} not run: {why}")
        if rec:
            params = ", ".join(f"{k}={v}" for k, v in rec["params"].items())
            print(f"recommendation: {rec['scheme']} {params}")
            print(f"  {rec['verdict']}")
        print(f"advice in {a.out}/ (advice.json, report.html, scenario.toml, config/)")
    return 0
