#!/usr/bin/env python3
"""Run one scenario with the simulator and on the emulated switch, and compare.

    sudo .venv/bin/python scripts/emu_compare.py tcn-static --set marking.scheme=tcn [--rate 100Mbit]

The simulator runs the *same scaled scenario* the emulation ran (``scenario.json`` of the
emulation), so both are in the emulated time base; the table also shows the ratio
emulated / simulated per queue goodput and for the probe-RTT median. See
crates/ecnlab-emu/README.md for what to expect and why the RTTs differ.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ecnlab import api
from ecnlab import emulate as emu


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    p.add_argument("scenario")
    p.add_argument("--set", action="append", default=[])
    p.add_argument("--rate", default="auto")
    p.add_argument("--sim-cc", default=None,
                   help="transport.cc for the simulator (default: ecn_star when the emulation fell back from "
                        "dctcp, else the scenario's)")
    p.add_argument("--out", default="out/emu-compare")
    a = p.parse_args(argv)
    out = Path(a.out)
    s_emu = emu.emulate(a.scenario, out / "emulated", a.set, rate=a.rate)
    scaled = json.loads((out / "emulated" / "scenario.json").read_text())
    cc = a.sim_cc
    if cc is None and any(v.get("fallback") for v in s_emu["emulation"]["cc"].values()):
        cc = "ecn_star"
    sim_doc = api.resolve(scaled, [f"transport.cc={cc}"] if cc else [])
    res = api.run(sim_doc)
    res.write(out / "simulated")
    s_sim = res.summary
    sim_q = {(q["port"], q["queue"]): q for q in s_sim["queues"]}
    print(f"{'port':<10} {'queue':>5} {'emulated':>12} {'simulated':>12} {'ratio':>7}")
    for q in s_emu["queues"]:
        sq = sim_q.get((q["port"], q["queue"]))
        if not sq or (q["goodput_bps"] == 0 and sq["goodput_bps"] == 0):
            continue
        ratio = q["goodput_bps"] / sq["goodput_bps"] if sq["goodput_bps"] else float("nan")
        print(f"{q['port']:<10} {q['queue']:>5} {q['goodput_bps'] / 1e6:>9.1f} Mb {sq['goodput_bps'] / 1e6:>9.1f} Mb "
              f"{ratio:>7.3f}")
    re_, rs = s_emu["probe_rtt"], s_sim["probe_rtt"]
    if re_["count"] and rs["count"]:
        print(f"probe RTT p50: emulated {re_['p50_us']:.0f} us, simulated {rs['p50_us']:.0f} us, "
              f"ratio {re_['p50_us'] / rs['p50_us']:.2f}; p99 {re_['p99_us']:.0f} vs {rs['p99_us']:.0f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
