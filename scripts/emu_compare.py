#!/usr/bin/env python3
"""Run one scenario with the simulator and on the emulated switch, and compare.

    sudo .venv/bin/python scripts/emu_compare.py tcn-static --schemes tcn,per_queue --runs 3 [--rate 100Mbit]

For each marking scheme: the emulation runs ``--runs`` times; the simulator runs the *same
scaled scenario* once (the ``scenario.json`` the emulation wrote, so both are in the
emulated time base), with ``transport.cc = ecn_star`` when the emulation fell back from
DCTCP (no DCTCP in the kernel: flows then run Cubic with RFC 3168 ECN; ECN* is the
simulator's nearest transport). Figures are shown unscaled (the original scenario's time
base: goodputs x s, times / s).

Prints a Markdown table per scheme (per-queue goodput: simulated, each emulated run, the
ratio of their mean, and whether it is within ``--goodput-tol``; probe-RTT median: same)
and the share of the WFQ queues (``--wfq-queues``) in each run; writes everything to
``OUT/compare.json`` and ``OUT/compare.md``. Exit status 0 whatever the figures: this is a
measurement, not a test. See crates/ecnlab-emu/README.md for what to expect and why the
probe RTTs differ.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

from ecnlab import api
from ecnlab import emulate as emu


def _queues(summary: dict, port: str) -> dict[int, float]:
    return {q["queue"]: q["goodput_bps"] for q in summary["queues"] if q["port"] == port}


def compare_scheme(scenario: str, sets: list[str], scheme: str, runs: int, rate: str, out: Path,
                   port: str, quiet: bool, fallback_cc: str = "cubic") -> dict:
    overrides = [*sets, f"marking.scheme={scheme}"]
    emu_runs = []
    for k in range(runs):
        d = out / scheme / f"emulated-{k + 1}"
        s = emu.emulate(scenario, d, overrides, rate=rate, dctcp_fallback=fallback_cc)
        emu_runs.append(s)
        if not quiet:
            p50 = s["probe_rtt"]["p50_us"]
            fct = s["fct"]["all"]["avg_us"]
            print(f"  {scheme} run {k + 1}: {json.dumps({q: round(g / 1e6, 1) for q, g in _queues(s, port).items()})} "
                  f"Mbit/s" + (f", probe p50 {p50:.0f} us" if p50 else "") + (f", FCT avg {fct:.0f} us" if fct else ""),
                  file=sys.stderr)
    first = emu_runs[0]
    factor = first["emulation"]["scale"]["factor"]
    scaled = json.loads((out / scheme / "emulated-1" / "scenario.json").read_text())
    fallback = any(v.get("fallback") for v in first["emulation"]["cc"].values())
    sim_doc = api.resolve(scaled, ["transport.cc=ecn_star"] if fallback else [])
    res = api.run(sim_doc)
    res.write(out / scheme / "simulated")
    sim = res.summary
    dilate = first["emulation"]["scale"]["mode"] == "dilate"
    g_unscale = factor if dilate else 1.0  # goodput x s back to the original time base
    t_unscale = 1 / factor if dilate else 1.0
    sim_q = _queues(sim, port)
    rows = []
    for q in sorted(sim_q):
        e = [_queues(s, port).get(q, 0.0) for s in emu_runs]
        if sim_q[q] == 0 and not any(e):
            continue
        mean = statistics.fmean(e)
        rows.append({"queue": q, "sim_mbps": sim_q[q] * g_unscale / 1e6, "emu_mbps": [x * g_unscale / 1e6 for x in e],
                     "ratio": mean / sim_q[q] if sim_q[q] else None,
                     "ratios": [x / sim_q[q] if sim_q[q] else None for x in e]})
    rtt_sim = sim["probe_rtt"]["p50_us"]
    rtt_emu = [s["probe_rtt"]["p50_us"] for s in emu_runs]
    return {
        "scheme": scheme, "factor": factor, "mode": first["emulation"]["scale"]["mode"],
        "sim_cc": sim_doc.get("transport", {}).get("cc"), "emu_cc": first["emulation"]["cc"],
        "queues": rows,
        "probe_p50": {"sim_us": rtt_sim * t_unscale if rtt_sim else None,
                      "emu_us": [x * t_unscale if x else None for x in rtt_emu],
                      "ratio": statistics.fmean(rtt_emu) / rtt_sim if rtt_sim and all(rtt_emu) else None},
        "probe_p99": {"sim_us": (sim["probe_rtt"]["p99_us"] or 0) * t_unscale,
                      "emu_us": [(s["probe_rtt"]["p99_us"] or 0) * t_unscale for s in emu_runs]},
        "socket_drops": [s["emulation"]["socket_drops"] for s in emu_runs],
        # [[traffic]] scenarios: FCTs per size class (avg and p99, unscaled).
        "fct": {c: {"sim": {k: (sim["fct"][c][k] or 0) * t_unscale for k in ("avg_us", "p99_us")} | {"count": sim["fct"][c]["count"]},
                    "emu": [{k: (s["fct"][c][k] or 0) * t_unscale for k in ("avg_us", "p99_us")} | {"count": s["fct"][c]["count"]}
                            for s in emu_runs]}
                for c in ("all", "small", "medium", "large") if sim["fct"][c]["count"]},
    }


def wfq_share(result: dict, wfq: list[int]) -> list[float | None]:
    """Per run: |a - b| / mean(a, b) of the two WFQ queues' goodputs."""
    by_q = {r["queue"]: r["emu_mbps"] for r in result["queues"]}
    if len(wfq) != 2 or not all(q in by_q for q in wfq):
        return []
    out = []
    for a, b in zip(by_q[wfq[0]], by_q[wfq[1]]):
        out.append(abs(a - b) / ((a + b) / 2) if a + b > 0 else None)
    return out


def markdown(results: list[dict], tol: float, wfq: list[int]) -> str:
    lines = []
    for r in results:
        n = len(r["probe_p50"]["emu_us"])
        lines.append(f"### {r['scheme']} (emulated x{n}, rates / {r['factor']:g} {r['mode']}; "
                     f"kernel cc {', '.join(v['kernel'] for v in r['emu_cc'].values())}, simulator cc {r['sim_cc']})")
        lines.append("")
        lines.append("| queue | `ecnlab run` Mbit/s | `ecnlab emulate` Mbit/s (runs) | emulate / run | within "
                     f"{tol:.0%} |")
        lines.append("|---|---:|---|---:|---|")
        for q in r["queues"]:
            runs = " / ".join(f"{x:.0f}" for x in q["emu_mbps"])
            ok = "yes" if q["ratio"] is not None and abs(q["ratio"] - 1) <= tol else "no"
            ratio = f"{q['ratio']:.3f}" if q["ratio"] is not None else "-"
            lines.append(f"| {q['queue']} | {q['sim_mbps']:.0f} | {runs} | {ratio} | {ok} |")
        p = r["probe_p50"]
        if p["sim_us"]:
            emu_p = " / ".join(f"{x:.0f}" for x in p["emu_us"] if x)
            ratio = f"{p['ratio']:.2f}" if p["ratio"] else "-"
            lines.append(f"| probe RTT p50 (us) | {p['sim_us']:.0f} | {emu_p} | {ratio} | |")
            p99 = r["probe_p99"]
            lines.append(f"| probe RTT p99 (us) | {p99['sim_us']:.0f} | {' / '.join(f'{x:.0f}' for x in p99['emu_us'])} | | |")
        for c, f in r.get("fct", {}).items():
            for k in ("avg_us", "p99_us"):
                e = [x[k] for x in f["emu"]]
                ratio = statistics.fmean(e) / f["sim"][k] if f["sim"][k] else float("nan")
                lines.append(f"| FCT {c} {k[:-3]} (us, n={f['sim']['count']}) | {f['sim'][k]:.0f} | "
                             f"{' / '.join(f'{x:.0f}' for x in e)} | {ratio:.2f} | |")
        sh = wfq_share(r, wfq)
        if sh:
            lines.append("")
            lines.append(f"WFQ queues {wfq[0]} and {wfq[1]}: |difference| / mean per run = "
                         + ", ".join(f"{x:.1%}" for x in sh if x is not None)
                         + f"; socket drops {r['socket_drops']}")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    p.add_argument("scenario")
    p.add_argument("--set", action="append", default=[])
    p.add_argument("--schemes", default="tcn", help="comma-separated marking.scheme values (default: tcn)")
    p.add_argument("--runs", type=int, default=1, help="emulation runs per scheme (default 1)")
    p.add_argument("--rate", default="auto")
    p.add_argument("--port", default="s0->h0", help="switch port whose queues are compared (default s0->h0)")
    p.add_argument("--wfq-queues", default="1,2", help="the two queues whose share is checked (default 1,2)")
    p.add_argument("--goodput-tol", type=float, default=0.10)
    p.add_argument("--dctcp-fallback", choices=["cubic", "reno"], default="cubic",
                   help="kernel cc for cc=dctcp when the kernel has none (reno = the simulator's ECN*)")
    p.add_argument("--out", default="out/emu-compare")
    p.add_argument("-q", "--quiet", action="store_true")
    a = p.parse_args(argv)
    out = Path(a.out)
    wfq = [int(x) for x in a.wfq_queues.split(",") if x.strip()]
    results = [compare_scheme(a.scenario, a.set, s.strip(), a.runs, a.rate, out, a.port, a.quiet, a.dctcp_fallback)
               for s in a.schemes.split(",") if s.strip()]
    for r in results:
        r["wfq_share"] = wfq_share(r, wfq)
    md = markdown(results, a.goodput_tol, wfq)
    out.mkdir(parents=True, exist_ok=True)
    (out / "compare.json").write_text(json.dumps(results, indent=1) + "\n")
    (out / "compare.md").write_text(md + "\n")
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
