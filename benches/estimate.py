"""The estimate judged against the exact simulator (issue 34): each calibration fabric with
each marking scheme, run exactly (``ecnlab run``) and estimated (``ecnlab estimate``), side
by side; the error of the average and p99 FCT slowdown per size bucket, the ranking of the
schemes by each (does the estimate pick the same one?), and the speed-up.

    nice -n 19 .venv/bin/python benches/estimate.py [--quick] [--only NAME] [--out DIR]

Writes ``DIR/estimate-latest.json`` and ``.md`` (default ``benches/results``). Slowdowns
are read from both ``flows.csv`` the same way (flows started after the warm-up that finished,
FCT over ideal FCT, size buckets of ``_core.fct_classes()``), so that the only difference is
the method. Both commands run on one worker (``--workers 1``): the speed-up is of the method,
on one core; the estimate's link simulations also run in parallel (``--workers N``, Dask).
Nothing here is tuned to the exact run: the estimate runs with its defaults.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ECNLAB = Path(sys.executable).parent / "ecnlab"

# The schemes compared, at each fabric's settings (a marking threshold of about one
# bandwidth-delay product's worth of the fabric's queueing at its host rate).
SCHEMES = {
    "tcn": lambda f: ["marking.scheme=tcn", f"marking.tcn.threshold={f['tcn_threshold']}"],
    "per_queue": lambda f: ["marking.scheme=per_queue", f"marking.threshold.k={f['k']}"],
    "ecn_sharp": lambda f: ["marking.scheme=ecn_sharp", f"marking.ecn_sharp.ins_target={f['ins_target']}",
                            f"marking.ecn_sharp.pst_target={f['pst_target']}",
                            f"marking.ecn_sharp.pst_interval={f['pst_interval']}"],
}

# The fabrics the exact simulator finishes in minutes. 100 KB at 100 Gbps is 8 us.
FABRICS = {
    "ft128": {
        "what": "k = 8 fat-tree, 128 hosts, 100 Gbps hosts / 400 Gbps fabric, web search 50 %, 4,000 flows",
        "scenario": str(HERE / "fabrics" / "ft128.toml"), "set": [],
        "k": "100KB", "tcn_threshold": "8us", "ins_target": "16us", "pst_target": "8us", "pst_interval": "40us",
        "quick": ["traffic.0.flows=600"],
    },
    "clos128-skewed": {
        "what": "Clos, 4 pods x 2 leaves x 16 hosts (128), 2 spines per pod: 2:1 oversubscribed at the leaves, "
                "100/400 Gbps, rack-skewed web search (Zipf skew 1), 50 %, 4,000 flows",
        "scenario": str(HERE / "fabrics" / "cl128.toml"),
        "set": ["topology.spines_per_pod=2", "traffic.0.pattern=rack_skewed", "traffic.0.skew=1.0"],
        "k": "100KB", "tcn_threshold": "8us", "ins_target": "16us", "pst_target": "8us", "pst_interval": "40us",
        "quick": ["traffic.0.flows=600"],
    },
    # The cause of ft128's largest errors, removed: a sender's NIC queue is unmarked, and its
    # link simulation has no switch downstream to mark its flows (the exact run has), so
    # DCTCP's windows grow there until the NIC's buffer drops. With the switch's queue and
    # marking on the hosts' links (ns-2's set-up, host.nic_marking) no queue is unmarked.
    "ft128-nic-marking": {
        "what": "ft128 with host.nic_marking = true (the hosts' links carry the switch's queue and marking)",
        "scenario": str(HERE / "fabrics" / "ft128.toml"), "set": ["host.nic_marking=true"],
        "k": "100KB", "tcn_threshold": "8us", "ins_target": "16us", "pst_target": "8us", "pst_interval": "40us",
        "quick": ["traffic.0.flows=600"],
    },
    "tcn-leafspine-reduced": {
        "what": "the TCN leaf-spine (144 hosts, 10 Gbps, SP + 7 DWRR, PIAS, persistent connections, 90 % load) "
                "at a tenth of its flows (5,000)",
        "scenario": "tcn-leafspine",
        "set": ["traffic.0.flows=1429", "traffic.1.flows=1429", "traffic.2.flows=1428", "traffic.3.flows=714"],
        "k": "97.5KB", "tcn_threshold": "78us", "ins_target": "156us", "pst_target": "78us",
        "pst_interval": "400us",
        "quick": ["traffic.0.flows=143", "traffic.1.flows=143", "traffic.2.flows=143", "traffic.3.flows=71"],
    },
}


def _classes():
    from ecnlab import _core

    return [tuple(c) for c in _core.fct_classes()]  # (name, above, up_to)


def slowdowns(out: Path, warmup_s: float) -> dict[str, dict[str, float | int | None]]:
    """Average and p99 slowdown per size bucket of a result directory's flows.csv."""
    rows = list(csv.DictReader((out / "flows.csv").open()))
    res = {}
    for name, above, up_to in _classes():
        v = sorted(float(r["slowdown"]) for r in rows
                   if r["slowdown"] and r["size"] and float(r["start_s"]) >= warmup_s
                   and (above is None or int(r["size"]) > above) and (up_to is None or int(r["size"]) <= up_to))
        p99 = v[min(len(v) - 1, math.ceil(0.99 * len(v)) - 1)] if v else None
        res[name] = {"n": len(v), "avg": sum(v) / len(v) if v else None, "p99": p99}
    res["unfinished"] = sum(1 for r in rows if r["size"] and r["start_s"] and not r["fct_us"])
    return res


def _run(cmd: list[str]) -> tuple[float, float]:
    """Run a command; its wall time and its children's CPU time (s)."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {p.stderr.strip()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def one(name: str, fab: dict, scheme: str, quick: bool, tmp: Path, window_cap: str = "nics") -> dict:
    sets = fab["set"] + SCHEMES[scheme](fab) + (fab["quick"] if quick else [])
    args = [fab["scenario"], *sum((["--set", s] for s in sets), []), "-q", "--seed", "1"]
    x, e = tmp / f"{name}-{scheme}-exact", tmp / f"{name}-{scheme}-estimate"
    xw, xc = _run([str(ECNLAB), "run", *args, "--out", str(x)])
    ew, ec = _run([str(ECNLAB), "estimate", *args, "--workers", "1", "--window-cap", window_cap, "--out", str(e)])
    sx, se = json.loads((x / "summary.json").read_text()), json.loads((e / "summary.json").read_text())
    warm = sx["measure_from_s"]
    est = se["estimate"]
    return {
        "fabric": name, "scheme": scheme, "set": sets,
        "exact": {"wall_s": xw, "cpu_s": xc, "packet_hops": sx["packet_hops"], "slowdown": slowdowns(x, warm),
                  "timeouts": sx["flows"]["timeouts"]},
        "estimate": {"wall_s": ew, "cpu_s": ec, "packet_hops": se["packet_hops"], "slowdown": slowdowns(e, warm),
                     "timeouts": se["flows"]["timeouts"], "links": est["links"],
                     "link_simulations": est["link_simulations"], "alone_simulations": est["alone_simulations"],
                     "stages_s": est["stages_s"], "paths": est["paths"], "window_cap": est["window_cap"]},
    }


def _err(e, x):
    return None if e is None or x is None or x == 0 else (e - x) / x


def table(results: list[dict]) -> str:
    lines = ["| fabric | scheme | bucket | n exact / est | avg slowdown exact / est (error) | "
             "p99 slowdown exact / est (error) |", "|---|---|---|---:|---:|---:|"]
    for r in results:
        for b in ("all", "small", "medium", "large"):
            x, e = r["exact"]["slowdown"][b], r["estimate"]["slowdown"][b]
            if not x["n"]:
                continue
            f = lambda v: "–" if v is None else f"{v:.2f}"  # noqa: E731
            pe = lambda v: "–" if v is None else f"{100 * v:+.1f} %"  # noqa: E731
            lines.append(f"| {r['fabric']} | {r['scheme']} | {b} | {x['n']} / {e['n']} | {f(x['avg'])} / "
                         f"{f(e['avg'])} ({pe(_err(e['avg'], x['avg']))}) | {f(x['p99'])} / {f(e['p99'])} "
                         f"({pe(_err(e['p99'], x['p99']))}) |")
    lines += ["", "| fabric | scheme | exact wall s (CPU) | estimate wall s (CPU) | speed-up (CPU) | exact packet-hops | "
              "estimate packet-hops | links / link sims / alone sims | unfinished exact / est |",
              "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        x, e = r["exact"], r["estimate"]
        lines.append(f"| {r['fabric']} | {r['scheme']} | {x['wall_s']:.1f} ({x['cpu_s']:.1f}) | {e['wall_s']:.1f} "
                     f"({e['cpu_s']:.1f}) | {x['cpu_s'] / max(e['cpu_s'], 1e-9):.2f}x | {x['packet_hops']:,} | "
                     f"{e['packet_hops']:,} | {e['links']} / {e['link_simulations']} / {e['alone_simulations']} | "
                     f"{x['slowdown']['unfinished']} / {e['slowdown']['unfinished']} |")
    lines += ["", "| fabric | by | exact ranking | estimate ranking | same best? |", "|---|---|---|---|---|"]
    for fab in dict.fromkeys(r["fabric"] for r in results):
        rs = [r for r in results if r["fabric"] == fab]
        for b, stat in (("all", "avg"), ("all", "p99"), ("small", "p99"), ("large", "avg")):
            def rank(kind):
                v = [(r[kind]["slowdown"][b][stat], r["scheme"]) for r in rs if r[kind]["slowdown"][b][stat] is not None]
                return [s for _, s in sorted(v)]
            rx, re_ = rank("exact"), rank("estimate")
            lines.append(f"| {fab} | {b} {stat} slowdown | {' < '.join(rx)} | {' < '.join(re_)} | "
                         f"{'yes' if rx[:1] == re_[:1] else 'NO'} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="a few hundred flows per fabric (a smoke run)")
    p.add_argument("--only", action="append", help="fabric name (repeatable)")
    p.add_argument("--schemes", default=",".join(SCHEMES), help="comma-separated")
    p.add_argument("--out", default=str(HERE / "results"), help="where estimate-latest.{json,md} go")
    p.add_argument("--add", action="store_true",
                   help="keep the earlier results of estimate-latest.json, replacing those run again")
    p.add_argument("--window-cap", choices=("nics", "off"), default="nics",
                   help="the estimate's --window-cap (default nics, the estimate's own default)")
    a = p.parse_args(argv)
    out = Path(a.out)
    stem = "estimate-quick" if a.quick else "estimate-latest"
    results = []
    if a.add and (out / f"{stem}.json").exists():
        results = json.loads((out / f"{stem}.json").read_text())["results"]
    with tempfile.TemporaryDirectory(prefix="ecnlab-estimate-bench-") as tmp:
        for name, fab in FABRICS.items():
            if a.only and name not in a.only:
                continue
            for scheme in a.schemes.split(","):
                r = one(name, fab, scheme, a.quick, Path(tmp), a.window_cap)
                results = [o for o in results if (o["fabric"], o["scheme"]) != (name, scheme)] + [r]
                print(f"{name} {scheme}: exact {r['exact']['wall_s']:.1f} s, estimate {r['estimate']['wall_s']:.1f} s",
                      file=sys.stderr)
    out.mkdir(parents=True, exist_ok=True)
    order = list(FABRICS)
    results.sort(key=lambda r: (order.index(r["fabric"]) if r["fabric"] in order else len(order), r["scheme"]))
    (out / f"{stem}.json").write_text(json.dumps({"fabrics": {k: v["what"] for k, v in FABRICS.items()},
                                                  "results": results}, indent=2) + "\n")
    md = table(results)
    (out / f"{stem}.md").write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
