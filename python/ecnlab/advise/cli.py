"""The ``ecnlab advise`` command line (its own parser, registered in ``ecnlab.cli``): the
flags, and what it prints. The first line printed is the verdict in words, with its
interval and seeds; numbers are rounded for people (``words.py``), ``advice.json`` keeps
what a program reads."""

from __future__ import annotations

import argparse
from typing import Any

from ..commandline import positive as _positive  # an integer >= 1, else one line
from . import words


def build_parser(parser_class=argparse.ArgumentParser) -> argparse.ArgumentParser:
    p = parser_class(prog="ecnlab advise", description="Which ECN marking scheme and parameters for your switch: "
                     "starting points from the papers' rules, validated on sound simulated runs until the answer "
                     "is decisive, written as switch configuration.")
    p.add_argument("--scenario", help="the network to advise on: a scenario file (any topology run takes: star, dumbbell, "
                   "leaf-spine, fat-tree, Clos, a topology file) or a built-in name; the flags below override what "
                   "they name")
    p.add_argument("--link-rate", help="e.g. 100Gbps (the hosts' links)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--rtt-file", help="RTT samples, one per line with its unit (120us), or ping output")
    g.add_argument("--rtt", help="percentiles, e.g. p50=30us,p90=90us,p99=250us (also min=, mean=)")
    p.add_argument("--queues", type=_positive, help="queues per port (default 8)")
    p.add_argument("--scheduler", help="sp_dwrr (default) | dwrr | wfq | sp_wfq | sp | wrr")
    p.add_argument("--weights", help="the weighted queues' weights in queue order, e.g. 4,2,1,1")
    p.add_argument("--strict", type=int, help="strict-priority queues (queues 0..N-1) of sp_dwrr / sp_wfq")
    p.add_argument("--dscp-map", help="DSCP=QUEUE, e.g. 46=0,26=1,0-25=2 (unlisted DSCPs: the first weighted queue)")
    p.add_argument("--ecn-queues", help="queues that carry ECN, e.g. 1-7 (default: every weighted queue)")
    p.add_argument("--traffic", help="classes as CLASS=WORKLOAD@LOAD, e.g. 26=websearch@40%%,10=datamining@20%% "
                   "(CLASS a DSCP; LOAD of the receivers' links)")
    p.add_argument("--workload", default="websearch", help="without --traffic: one workload over the weighted queues")
    p.add_argument("--load", default="0.7", help="without --traffic: its load, 0.7 or 70%%")
    p.add_argument("--transport", help="dctcp (default) | ecn_star | newreno | cubic | dcqcn | ...")
    p.add_argument("--buffer", help="the port's buffer, e.g. 500KB (default: twice the largest threshold swept)")
    p.add_argument("--ports", help="the switch's port names for the configs, e.g. Ethernet0,Ethernet4")
    p.add_argument("--topology", default="star", choices=["star"], help="without --scenario: a star")
    p.add_argument("--senders", type=_positive, help="hosts sending to the bottleneck port of the star (default 8)")
    p.add_argument("--schemes", default="tcn,ecn_sharp,per_queue", help="comma-separated marking schemes")
    p.add_argument("--platform", action="append", help="sonic | tc | nvue | junos (repeatable; default all)")
    p.add_argument("--validate", default="quick", help="quick (minutes) | full | none")
    p.add_argument("--metric", default="small_avg", help="the ranking metric: small_avg (default) | small_p99 | "
                   "all_avg | large_avg")
    p.add_argument("--budget", help="most the validation may cost: runs (200runs) or a time (10min); default "
                   "200 runs quick, 600 full")
    p.add_argument("--flows", type=_positive, help="flows per run (default: 500 quick, 3000 full)")
    p.add_argument("--seeds", type=_positive, help="screening seeds per point (default: 3 quick, 5 full)")
    p.add_argument("--jobs", type=_positive, help="parallel runs (default: all cores)")
    p.add_argument("--out", required=True, help="result directory")
    p.add_argument("-q", "--quiet", action="store_true")
    return p


def inputs_of(a: argparse.Namespace):
    from . import Inputs
    from .options import parse_budget, parse_dscp_map, parse_ports, parse_queue_set, parse_traffic, parse_weights
    from .rtt import from_file, from_percentiles

    defaults = build_parser()
    given = {k: v for k, v in vars(a).items() if v is not None and k not in ("out", "quiet")
             and v != defaults.get_default(k)}  # what was typed
    plats = []
    for p in a.platform or ["sonic", "tc", "nvue", "junos"]:
        plats.extend(x.strip() for x in p.split(",") if x.strip())
    return Inputs(link_rate=a.link_rate, rtt=from_file(a.rtt_file) if a.rtt_file else
                  from_percentiles(a.rtt) if a.rtt else None, scenario=a.scenario, queues=a.queues,
                  scheduler=a.scheduler, weights=parse_weights(a.weights) if a.weights else None, strict=a.strict,
                  dscp_map=parse_dscp_map(a.dscp_map) if a.dscp_map else None,
                  traffic=parse_traffic(a.traffic) if a.traffic else None, buffer=a.buffer,
                  ports=parse_ports(a.ports) if a.ports else None,
                  ecn_queues=parse_queue_set(a.ecn_queues) if a.ecn_queues else None, transport=a.transport,
                  workload=a.workload, load=a.load, senders=a.senders,
                  schemes=tuple(s.strip() for s in a.schemes.split(",") if s.strip()), platforms=tuple(plats),
                  validate=a.validate, metric=a.metric, budget=parse_budget(a.budget) if a.budget else None,
                  flows=a.flows, seeds=a.seeds, jobs=a.jobs, given={k: str(v) for k, v in given.items()})


def _m(m: dict[str, Any] | None, show=words.time_us) -> str:
    if not m or m.get("mean") is None:
        return "–"
    return show(m["mean"])


def lines(adv: dict[str, Any], out: str) -> list[str]:
    """What advise prints: the verdict first."""
    v, s, rec = adv["verdict"], adv["soundness"], adv["recommendation"]
    out_lines = [v["text"]]
    if s["runs"]:
        why = ", ".join(f"{rule.replace('_', ' ')} {n}" for rule, n in sorted(s["by_rule"].items()))
        out_lines.append(f"runs: {s['runs']}, of which {s['unsound']} unsound (never ranked)"
                         + (f": {why}" if why else "") + (f"; {s['failed']} failed" if s["failed"] else ""))
    aside = s.get("set_aside", {}).get("runs", {})
    for rule, n in aside.items():
        out_lines.append(f"  ({n} runs flagged {rule.replace('_', ' ')}: not a reason to set a run aside here, "
                         f"advice.json soundness.set_aside says why)")
    if any(e.get("candidate") for e in adv["schemes"]):
        out_lines.append(f"each scheme's best point, {adv['validation']['metric']['words']} (mean over its paired seeds):")
    for e in adv["schemes"]:
        if e.get("skipped"):
            out_lines.append(f"skipped {e['name']}: {e['skipped']}")
            continue
        for p in e["points"]:
            if p.get("not_run"):
                out_lines.append(f"not run: {p['label']}: {p['not_run']}")
        cand = e.get("candidate")
        if cand:
            v = e["candidate_value"]
            race = e.get("race", "")
            if e.get("race_difference"):
                d = e["race_difference"]["other_higher_pct"]
                race = f"out: {d['mean']:.1f} % higher (95 % interval {d['lo']:.1f} to {d['hi']:.1f} %)"
            out_lines.append(f"  {e['name']}, {words.params({cand['axis']['key']: cand['params'][cand['axis']['key']]})}"
                             f": {_m(v)} over {v['n']} seeds; {race}")
        elif "race" in e:
            out_lines.append(f"  {e['name']}: no sound point")
    if rec:
        m = rec["metrics"]
        out_lines.append(f"recommendation: {words.name(rec['scheme'])}, {words.params(rec['params'])} on "
                         f"{words.queues(adv['network']['ecn_queues'])}")
        out_lines.append(f"  small flows: avg {_m(m['fct']['small']['avg_us'])}, p99 {_m(m['fct']['small']['p99_us'])};"
                         f" large flows: avg {_m(m['fct']['large']['avg_us'])}; drops: "
                         f"{_m(m['drops']['switch'], words.number)} at switches, "
                         f"{_m(m['drops']['nic'], words.number)} at host NICs (mean per run)")
    out_lines.append(f"host NICs: {adv['network']['host_nics']}")
    for n in adv["network"]["notes"]:
        out_lines.append(f"note: {n}")
    out_lines.append(f"advice in {out}/ (advice.json, report.html, scenario.toml, config/)")
    return out_lines


def run(a: argparse.Namespace) -> int:
    from . import advise

    adv = advise(inputs_of(a), a.out, progress=not a.quiet)
    if not a.quiet:
        print("\n".join(lines(adv, a.out)))
    return 0
