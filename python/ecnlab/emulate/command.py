"""``ecnlab emulate``'s command line (and the entry of the agent and reaper processes)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..commandline import Parser as _Parser, blame_set as _blame_set, fmt_rate
from ..exits import exit_status
from ..scenario import ScenarioError
from .namespaces import _reaper_main
from .agent import _agent_main
from .run import emulate


def _print_summary(s: dict[str, Any], out: Path) -> None:
    e = s["emulation"]
    sc = e["scale"]
    print(f"{s['scenario']} (emulated, seed {s['seed']}): {s['sim_time_s']:.2f} s in {s['wall_time_s']:.1f} s wall, "
          f"{s['packet_hops']:,} frames forwarded, {e['socket_drops']} socket drops; "
          f"rates / {sc['factor']:g} ({sc['mode']}), kernel {e['kernel']}")
    for name, c in e["cc"].items():
        how = (f"{c['kernel']} with ECN (fallback: the kernel refused ecnlab's BPF algorithm)" if c.get("fallback")
               else f"{c['kernel']} ({c['implementation']})" if c.get("implementation") else c["kernel"])
        print(f"  cc {name}: {how}")
    for w in e["warnings"]:
        print(f"  note: {w}")
    if s["queues"]:
        print(f"  {'port':<10} {'queue':>5} {'goodput':>12} {'avg qlen':>10} {'max qlen':>10} {'sojourn':>10} {'marks':>8} {'drops':>7}")
        for q in s["queues"]:
            soj = f"{q['avg_sojourn_us']:.0f}us" if q["avg_sojourn_us"] is not None else "-"
            print(f"  {q['port']:<10} {q['queue']:>5} {fmt_rate(q['goodput_bps']):>12} {q['avg_qlen_bytes'] / 1e3:>8.1f}KB "
                  f"{q['max_qlen_bytes'] / 1e3:>8.1f}KB {soj:>10} {q['marks']:>8} {q['drops']:>7}")
    f = s["fct"]["all"]
    if f["count"]:
        print(f"  FCT all: n={f['count']} avg {f['avg_us']:.1f} us, p99 {f['p99_us']:.1f} us; unfinished {s['flows']['unfinished']}")
    r = s["probe_rtt"]
    if r.get("count"):
        line = f"  probe RTT: n={r['count']} avg {r['avg_us']:.1f} us, p50 {r['p50_us']:.1f} us, p99 {r['p99_us']:.1f} us"
        u = e.get("unscaled", {}).get("probe_rtt")
        if u:
            line += f" (unscaled: avg {u['avg_us']:.1f}, p50 {u['p50_us']:.1f}, p99 {u['p99_us']:.1f} us)"
        print(line)
    print(f"  receiver CE packets {e['receiver_ce_packets']}; results in {out}/")


def build_parser(prog: str = "ecnlab emulate") -> argparse.ArgumentParser:
    p = _Parser(prog=prog, description="Run a scenario on real Linux TCP through the emulated switch "
                                       "(needs root; builds network namespaces and removes them afterwards).")
    p.add_argument("scenario", nargs="?", default="tcn-static", help="built-in name or TOML file (default: tcn-static)")
    p.add_argument("--out", help="result directory (default: out/<scenario>-emu)")
    p.add_argument("--seed", type=int, help="master seed (default: the scenario's)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a scenario key (repeatable)")
    p.add_argument("--rate", default="auto",
                   help="host link rate to emulate, e.g. 100Mbit; 'auto' = 100 Mbit/s if the scenario is faster; "
                        "'none' = the scenario's rate")
    p.add_argument("--scale", choices=["dilate", "rate"], default="dilate",
                   help="dilate: times x s as rates / s (default); rate: rates and queue thresholds / s, times kept")
    p.add_argument("--pcap", metavar="PORT", help="capture switch port PORT (host index or s0->hN) to a pcap file")
    p.add_argument("--burst", help="shaper bucket (default: max(2.5KB, 100 us at the port's rate))")
    p.add_argument("--no-link-delay", action="store_true", help="do not emulate propagation delays with netem")
    p.add_argument("--no-host-shaping", action="store_true", help="do not limit hosts to their link rate")
    p.add_argument("--allow-fallback", action="store_true",
                   help="if the kernel refuses ecnlab's BPF DCTCP, run DCTCP flows with --dctcp-fallback and ECN "
                        "instead of stopping (the summary records it)")
    p.add_argument("--dctcp-fallback", choices=["reno", "cubic"], default="cubic",
                   help="the fallback of --allow-fallback (default: cubic with ECN)")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    return p


def main(argv: list[str] | None = None) -> int:
    """``ecnlab emulate ...``. Exit status: 0 ok, 2 user error (one line on stderr),
    1 internal error, 130 interrupted."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--agent"]:
        return _agent_main(argv[1])
    if argv[:1] == ["--reaper"]:
        return _reaper_main(argv[1])
    a = build_parser().parse_args(argv)
    try:
        out = Path(a.out) if a.out else None
        if out is None:
            from ..api import resolve

            name = resolve(a.scenario, a.set).get("name", Path(a.scenario).stem)
            out = Path("out") / f"{name}-emu"
        s = emulate(a.scenario, out, a.set, a.seed, a.pcap, rate=a.rate, scale=a.scale, burst=a.burst,
                    link_delay=not a.no_link_delay, host_shaping=not a.no_host_shaping,
                    allow_fallback=a.allow_fallback, dctcp_fallback=a.dctcp_fallback, quiet=a.quiet)
        if not a.quiet:
            _print_summary(s, out)
        return 0
    except ScenarioError as e:
        return exit_status(_blame_set(e, a.set))
    except BaseException as e:  # noqa: BLE001 - one line and a status (ecnlab/exits.py)
        return exit_status(e, cleanup=" (namespaces removed)")


if __name__ == "__main__":
    sys.exit(main())
