"""ecnlab benchmark suite: ecnlab vs ns-3 3.44 on the same scenarios, plus a scaling table.

    .venv/bin/python benches/run.py                 # everything (ns-3 venv created on first use)
    .venv/bin/python benches/run.py --quick --no-ns3   # tiny scale, ecnlab only (CI smoke test)
    .venv/bin/python benches/run.py --only dctcp-8long --repeat 3

Writes benches/results/latest.json and benches/results/latest.md (unless --out-dir is given).
Scenarios are defined once, as data, in benches/scenarios.py; generated traffic is drawn once
(benches/traffic.py) into a trace CSV that both simulators replay. ns-3 runs in its own
virtualenv (benches/.venv-ns3, `pip install ns3`), never as a dependency of ecnlab.
"""

from __future__ import annotations

import argparse
import json
import os
import math
import platform
import random
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import scenarios as S  # noqa: E402
import traffic as T  # noqa: E402

NS3_VENV = HERE / ".venv-ns3"
NS3_PY = NS3_VENV / "bin" / "python"
LAST_CPU_S = None


def ecnlab_cmd() -> list[str]:
    exe = Path(sys.executable).parent / "ecnlab"
    if exe.exists():
        return [str(exe)]
    return [sys.executable, "-m", "ecnlab"]


def timed(cmd: list[str], cwd: Path | None = None) -> tuple[float, float, str]:
    """Run cmd; return (process wall s, peak RSS MB of the child, stdout+stderr).

    The child's user+system CPU seconds (from /usr/bin/time) are left in LAST_CPU_S: on a
    shared 2-core machine CPU time is less noisy than wall time."""
    global LAST_CPU_S
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    # ru_maxrss of RUSAGE_CHILDREN is the max over all waited children so far; use
    # /usr/bin/time -v when present for a per-run figure.
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stdout[-2000:]}\n{p.stderr[-4000:]}")
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
    rss = int(m.group(1)) / 1024 if m else float("nan")
    u = re.search(r"User time \(seconds\): ([\d.]+)", p.stderr)
    sy = re.search(r"System time \(seconds\): ([\d.]+)", p.stderr)
    LAST_CPU_S = float(u.group(1)) + float(sy.group(1)) if u and sy else None
    return wall, rss, p.stdout + p.stderr


def time_prefix() -> list[str]:
    return ["/usr/bin/time", "-v"] if Path("/usr/bin/time").exists() else []


def run_ecnlab(scenario: str, out: Path, sets: list[str] = (), repeat: int = 2, once_if_over_s: float = 1e9) -> dict:
    """Run ecnlab `repeat` times; keep the fastest (by the simulator's own wall time). A run
    longer than `once_if_over_s` is not repeated."""
    best = None
    walls = []
    for _ in range(repeat):
        if best is not None and best["run_wall_s"] > once_if_over_s:
            break
        cmd = time_prefix() + ecnlab_cmd() + ["run", scenario, "--out", str(out)]
        for s in sets:
            cmd += ["--set", s]
        wall, rss, _ = timed(cmd)
        summ = json.loads((out / "summary.json").read_text())
        r = {"run_wall_s": summ["wall_time_s"], "process_wall_s": wall, "peak_rss_mb": rss,
             "process_cpu_s": LAST_CPU_S,
             "events": summ["events"], "packet_hops": summ["packet_hops"], "sim_time_s": summ["sim_time_s"],
             "summary": summ}
        walls.append(r["run_wall_s"])
        if best is None or r["run_wall_s"] < best["run_wall_s"]:
            best = r
    best["all_run_wall_s"] = sorted(walls)
    return best


def ensure_ns3() -> None:
    if NS3_PY.exists():
        chk = subprocess.run([str(NS3_PY), "-c", "import importlib.util,sys; sys.exit(importlib.util.find_spec('ns') is None)"])
        if chk.returncode == 0:
            return
    print("creating benches/.venv-ns3 and installing ns3 from PyPI (about 2 minutes) ...", flush=True)
    subprocess.run([sys.executable, "-m", "venv", str(NS3_VENV)], check=True)
    subprocess.run([str(NS3_PY), "-m", "pip", "install", "-q", "ns3==3.44.*"], check=True)


def run_ns3(cfg: dict, work: Path, repeat: int) -> dict:
    cfg_path = work / "ns3-config.json"
    cfg_path.write_text(json.dumps(cfg, indent=1))
    best = None
    walls = []
    for _ in range(repeat):
        out = work / "ns3-result.json"
        wall, rss, _ = timed(time_prefix() + [str(NS3_PY), str(HERE / "ns3_driver.py"), str(cfg_path), str(out)])
        r = json.loads(out.read_text())
        r["process_wall_s"] = wall
        r["process_cpu_s"] = LAST_CPU_S
        if rss == rss:  # /usr/bin/time figure for the whole process
            r["peak_rss_mb"] = rss
        walls.append(r["run_wall_s"])
        if best is None or r["run_wall_s"] < best["run_wall_s"]:
            best = r
    best["all_run_wall_s"] = sorted(walls)
    return best


def rates(r: dict) -> dict:
    w = r["run_wall_s"]
    return {"wall_s": w, "events_per_s": r["events"] / w, "hops_per_s": r["packet_hops"] / w,
            "sim_s_per_wall_s": r["sim_time_s"] / w, "peak_rss_mb": r["peak_rss_mb"],
            "events": r["events"], "packet_hops": r["packet_hops"], "sim_time_s": r["sim_time_s"],
            "process_wall_s": r["process_wall_s"], "process_cpu_s": r.get("process_cpu_s"),
            "all_run_wall_s": r.get("all_run_wall_s")}


def ecnlab_observables(sc: dict, summ: dict) -> dict:
    obs = {}
    p = sc["compare"]["port_to_host"]
    if p is not None:
        q = [q for q in summ["queues"] if q["port"].endswith(f"->h{p}")]
        obs["goodput_bps"] = sum(x["goodput_bps"] for x in q)
        obs["avg_qlen_bytes"] = sum(x["avg_qlen_bytes"] for x in q)
        obs["drops"] = sum(x["drops"] for x in q)
        obs["marks"] = sum(x["marks"] for x in q)
    if sc["compare"]["fct"]:
        obs["fct"] = summ["fct"]
        obs["flows"] = summ["flows"]
    return obs


def ns3_observables(sc: dict, r: dict) -> dict:
    obs = {}
    if sc["compare"]["port_to_host"] is not None:
        obs["goodput_bps"] = r["bottleneck"]["goodput_bps"]
        obs["avg_qlen_bytes"] = r["bottleneck"]["avg_qlen_bytes"]
        obs["drops"] = r["bottleneck"].get("drops")
        obs["marks"] = r["bottleneck"].get("marks")
    if sc["compare"]["fct"]:
        obs["fct"] = r["fct"]
        obs["flows"] = r["flows"]
    return obs


def agreement(sc: dict, e: dict, n: dict) -> list[dict]:
    items = []

    def item(name, a, b, tol):
        if a is None or b is None:
            return
        rel = abs(a - b) / abs(b) if b else (0.0 if a == 0 else float("inf"))
        items.append({"item": name, "ecnlab": a, "ns3": b, "rel_diff": rel, "tol": tol,
                      "verdict": "PASS" if rel <= tol else "FAIL"})

    if sc["compare"]["goodput"]:
        item("bottleneck goodput (bps)", e["goodput_bps"], n["goodput_bps"], 0.02)
    if sc["compare"]["qlen"]:
        item("bottleneck mean queue (bytes)", e["avg_qlen_bytes"], n["avg_qlen_bytes"], 0.10)
    for k in ("drops", "marks"):  # context, not a pass/fail criterion
        if e.get(k) is not None and n.get(k) is not None:
            items.append({"item": f"bottleneck {k} (packets)", "ecnlab": e[k], "ns3": n[k],
                          "rel_diff": abs(e[k] - n[k]) / n[k] if n[k] else 0.0, "tol": None, "verdict": "info"})
    if sc["compare"]["fct"]:
        for cls in ("all", "small", "medium", "large"):
            a, b = e["fct"][cls], n["fct"][cls]
            if a["count"] and b["count"]:
                item(f"FCT avg {cls} (us) [n={a['count']}/{b['count']}]", a["avg_us"], b["avg_us"], 0.10)
    return items


def run_shared(name: str, args, work_root: Path) -> dict:
    sc = S.resolve(name, args.quick)
    work = work_root / name
    work.mkdir(parents=True, exist_ok=True)
    trace = None
    if "traffic" in sc:
        rows = T.generate(sc)
        trace = work / "flows-trace.csv"
        T.write_trace(rows, trace)
        trace = str(trace)
    toml = work / "ecnlab.toml"
    toml.write_text(S.ecnlab_toml(sc, trace))
    print(f"[{name}] ecnlab ...", flush=True)
    e = run_ecnlab(str(toml), work / "ecnlab-out", repeat=args.repeat)
    res = {"scenario": name, "description": sc["description"], "ecnlab": rates(e),
           "ecnlab_observables": ecnlab_observables(sc, e["summary"])}
    n = None
    if not args.no_ns3:
        print(f"[{name}] ns-3 ...", flush=True)
        n = run_ns3(ns3_cfg(sc, trace, args), work, repeat=args.ns3_repeat)
        res["ns3"] = rates(n)
        res["ns3"]["import_s"] = n.get("import_s")
        res["ns3"]["peak_rss_mb_before_run"] = n.get("peak_rss_mb_before_run")
        res["ns3_observables"] = ns3_observables(sc, n)
        res["ratio_hops_per_s"] = res["ecnlab"]["hops_per_s"] / res["ns3"]["hops_per_s"]
        res["ratio_wall"] = res["ns3"]["wall_s"] / res["ecnlab"]["wall_s"]
        res["agreement"] = agreement(sc, res["ecnlab_observables"], res["ns3_observables"])
    if sc.get("chaotic") and "traffic" in sc and not args.no_jitter:
        res["jitter"] = run_jittered(sc, args, work, rows, e, n)
    return res


def ns3_cfg(sc: dict, trace: str | None, args) -> dict:
    """The driver's config, with any --ns3-option KEY=JSON (diagnostic switches) applied."""
    cfg = S.ns3_config(sc, trace)
    for kv in args.ns3_option or []:
        k, v = kv.split("=", 1)
        cfg[k] = json.loads(v)
    return cfg


# ---------------------------------------------------------------- chaotic scenarios: jittered draws

def jitter_rows(rows: list, draw: int, lo_ns: int, hi_ns: int) -> list:
    """Draw 0: the trace itself. Draw d > 0: every flow's start moved later by a whole number
    of nanoseconds, uniform in [lo_ns, hi_ns], from a stream seeded by d alone (so draw d is
    the same trace for both simulators and for every run of the suite). Sizes, endpoints and
    classes are untouched; starts are written to the nanosecond, so the shift is exact."""
    if draw == 0:
        return rows
    rng = random.Random(f"bench-jitter-{draw}")
    return [(round(r[0] + rng.randint(lo_ns, hi_ns) * 1e-9, 9),) + tuple(r[1:]) for r in rows]


def chaos_observables(sim: str, sc: dict, r: dict) -> dict:
    """One draw's aggregates, by item name: mean FCT per size class (judged), and switch-port
    drops, data-segment marks and sender timeouts (context). `r` is ecnlab's summary.json or
    the ns-3 driver's result."""
    out = {}
    fct = r["fct"]
    for cls in ("all", "small", "medium", "large"):
        if fct[cls]["count"]:
            out[f"FCT avg {cls} (us)"] = fct[cls]["avg_us"]
    if sim == "ecnlab":
        sw = [q for q in r["queues"] if not q["port"].startswith("h")]
        out["switch drops (packets)"] = sum(q["drops"] for q in sw)
        # ecnlab's pure ACKs are not ECT: every mark is on a data segment
        out["switch data marks (packets)"] = sum(q["marks"] for q in sw)
        out["unfinished flows"] = r["flows"].get("unfinished", 0)
        out["timeouts (ecnlab: every expiry; ns-3: CA_LOSS entries)"] = r["flows"].get("timeouts")
    else:
        out["switch drops (packets)"] = sum(v["data"] + v["ctl"] for k, v in r["port_drops"].items()
                                            if not k.startswith("h"))
        if sc["marking"]["scheme"] == "tcn":
            out["switch data marks (packets)"] = r["tcn_marked_data"]
        out["unfinished flows"] = r["flows"].get("unfinished", 0)
        out["timeouts (ecnlab: every expiry; ns-3: CA_LOSS entries)"] = r["flows"].get("rto_entries")
    return out


def run_jittered(sc: dict, args, work: Path, rows: list, e0: dict, n0: dict | None) -> dict:
    """Run the chaotic scenario's jittered draws (draw 0 = the speed runs above, reused) and
    judge agreement on their means (`jitter_agreement`)."""
    ch = sc["chaotic"]
    ne = args.draws_ecnlab or ch["ecnlab_draws"]
    nn = 0 if n0 is None else (args.draws_ns3 or ch["ns3_draws"])
    lo, hi = ch.get("jitter_ns", [1, 10])
    draws = {"ecnlab": [chaos_observables("ecnlab", sc, e0["summary"])],
             "ns3": [chaos_observables("ns3", sc, n0)] if n0 is not None else []}
    for d in range(1, max(ne, nn)):
        dw = work / f"draw-{d}"
        dw.mkdir(exist_ok=True)
        trace = dw / "flows-trace.csv"
        T.write_trace(jitter_rows(rows, d, lo, hi), trace)
        if d < ne:
            toml = dw / "ecnlab.toml"
            toml.write_text(S.ecnlab_toml(sc, str(trace)))
            print(f"[{sc['name']}] draw {d}: ecnlab ...", flush=True)
            r = run_ecnlab(str(toml), dw / "ecnlab-out", repeat=1)
            draws["ecnlab"].append(chaos_observables("ecnlab", sc, r["summary"]))
        if d < nn:
            print(f"[{sc['name']}] draw {d}: ns-3 ...", flush=True)
            r = run_ns3(ns3_cfg(sc, str(trace), args), dw, repeat=1)
            draws["ns3"].append(chaos_observables("ns3", sc, r))
    return {"jitter_ns": [lo, hi], "draws": draws, "rule": JITTER_RULE,
            "agreement": jitter_agreement(draws["ecnlab"], draws["ns3"])}


# Two-sided 95 % Student-t quantiles by degrees of freedom (1..30; beyond, 1.96 is close enough).
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
        2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]

JITTER_RULE = (
    "Judged on the means over the draws: PASS when the relative difference of the two means, "
    "(ecnlab - ns-3) / ns-3, is within the tolerance (10 % for FCT, as the single-draw table), FAIL "
    "otherwise. The Welch 95 % interval of that difference (the two means' standard errors combined, "
    "Welch-Satterthwaite degrees of freedom, relative to ns-3's mean) says how firm the verdict is: "
    "'not firm' when it reaches across the tolerance. Why this rule: the point estimate is the best "
    "single answer the draws give, and with ns-3's few draws the alternatives decide by the sample "
    "size, not the simulators: 'within tolerance plus the interval' passes differences of 20-30 % on "
    "small flows (3 ns-3 draws, sd ~5-8 %), so it could hardly fail, and 'interval inside the "
    "tolerance' (equivalence) could hardly pass.")


def mean_sd(v: list) -> tuple[float, float | None]:
    m = sum(v) / len(v)
    return m, (math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1)) if len(v) > 1 else None)


def jitter_agreement(de: list[dict], dn: list[dict], tol: float = 0.10) -> list[dict]:
    """Per item: both simulators' mean, sd and n over their draws, the relative difference of the
    means, its Welch 95 % interval, and the verdict (JITTER_RULE). FCT items are judged; drops,
    marks and unfinished flows are context (verdict "info")."""
    items = []
    for key in de[0]:
        ve = [d[key] for d in de if d.get(key) is not None]
        vn = [d[key] for d in dn if d.get(key) is not None]
        if not ve:
            continue
        me, se_ = mean_sd(ve)
        it = {"item": key, "ecnlab_mean": me, "ecnlab_sd": se_, "ecnlab_n": len(ve),
              "ns3_mean": None, "ns3_sd": None, "ns3_n": len(vn), "rel_diff": None, "ci95": None,
              "tol": tol if key.startswith("FCT") else None, "verdict": "-"}
        if vn:
            mn, sn = mean_sd(vn)
            it.update(ns3_mean=mn, ns3_sd=sn)
            if mn:
                rel = (me - mn) / mn
                it["rel_diff"] = rel
                if se_ is not None and sn is not None:
                    a, b = se_ ** 2 / len(ve), sn ** 2 / len(vn)
                    if a + b > 0:
                        df = (a + b) ** 2 / (a ** 2 / (len(ve) - 1) + b ** 2 / (len(vn) - 1))
                        t = T975[min(int(df), 30) - 1] if df >= 1 else T975[0]
                        h = t * math.sqrt(a + b) / mn
                        it["ci95"] = [rel - h, rel + h]
                if it["tol"] is None:
                    it["verdict"] = "info"
                else:
                    ok = abs(rel) <= tol
                    ci = it["ci95"]
                    firm = ci is not None and ((ci[0] >= -tol and ci[1] <= tol) if ok else (ci[0] > tol or ci[1] < -tol))
                    it["verdict"] = ("PASS" if ok else "FAIL") + ("" if firm else " (not firm)")
        items.append(it)
    return items


# ---------------------------------------------------------------- ecnlab-only runs

LS_FLOWS = [0.2857142857, 0.2857142857, 0.2857142857, 0.1428571429]  # tcn-leafspine's 4 entries


def leafspine_sets(leaves: int, spines: int, hpl: int, flows: int) -> list[str]:
    sets = [f"topology.leaves={leaves}", f"topology.spines={spines}", f"topology.hosts_per_leaf={hpl}"]
    left = flows
    for i, share in enumerate(LS_FLOWS):
        k = left if i == len(LS_FLOWS) - 1 else int(round(flows * share))
        left -= k
        sets.append(f"traffic.{i}.flows={k}")
    return sets


def load_ecnlab_dir(d: Path) -> dict:
    """An earlier `ecnlab run` (summary.json, plus /usr/bin/time -v output in time.txt if present)."""
    summ = json.loads((d / "summary.json").read_text())
    t = (d / "time.txt").read_text() if (d / "time.txt").exists() else ""
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", t)
    u = re.search(r"User time \(seconds\): ([\d.]+)", t)
    sy = re.search(r"System time \(seconds\): ([\d.]+)", t)
    return {"run_wall_s": summ["wall_time_s"], "process_wall_s": None, "peak_rss_mb": int(m.group(1)) / 1024 if m else float("nan"),
            "process_cpu_s": float(u.group(1)) + float(sy.group(1)) if u and sy else None,
            "events": summ["events"], "packet_hops": summ["packet_hops"], "sim_time_s": summ["sim_time_s"],
            "summary": summ, "all_run_wall_s": [summ["wall_time_s"]], "imported_from": str(d)}


def mean_active_flows(run_dir: Path, sim_time_s: float) -> float | None:
    """Time-averaged number of flows in progress (sum of flow durations / simulated time): the
    working set that sets a packet-hop's cost, more than the number of flows in the run."""
    f = run_dir / "flows.csv"
    if not f.exists() or sim_time_s <= 0:
        return None
    import csv
    busy = 0.0
    with f.open() as fh:
        for r in csv.DictReader(fh):
            end = float(r["finish_s"]) if r.get("finish_s") else sim_time_s
            busy += max(0.0, end - float(r["start_s"]))
    return busy / sim_time_s


def run_full_scale(args, work_root: Path) -> dict:
    name = "tcn-leafspine-full"
    if args.full_from:
        e = load_ecnlab_dir(Path(args.full_from))
        s = e["summary"]
        return {"scenario": name, "description": "built-in tcn-leafspine: 144 hosts, 12x12, SP + 7 DWRR, TCN, DCTCP, "
                "PIAS, 90 % load, 50,000 flows; ecnlab only; one run, imported with --full-from",
                "ecnlab": rates(e), "fct": s["fct"], "flows": s["flows"]}
    sets = [] if not args.quick else leafspine_sets(12, 12, 12, 700)
    print(f"[{name}] ecnlab (built-in tcn-leafspine{' quick' if args.quick else ', 50,000 flows'}) ...", flush=True)
    e = run_ecnlab("tcn-leafspine", work_root / name, sets, repeat=args.repeat if args.quick else args.full_repeat)
    s = e["summary"]
    return {"scenario": name, "description": "built-in tcn-leafspine: 144 hosts, 12x12, SP + 7 DWRR, TCN, DCTCP, "
            "PIAS, 90 % load, " + ("700 flows (quick)" if args.quick else "50,000 flows") + "; ecnlab only",
            "ecnlab": rates(e), "fct": s["fct"], "flows": s["flows"],
            "mean_active_flows": mean_active_flows(work_root / name, s["sim_time_s"])}


# Sizes from the issue (hosts 16-1024, flows 1k-100k; the leaf-spine costs ~17-21 k packet-hops
# per flow); the 50,000-flow point is the full-scale run (tcn-leafspine-full).
SCALING_HOSTS = [(4, 4, 4), (8, 8, 8), (12, 12, 12), (16, 16, 16), (32, 32, 32)]  # 16, 64, 144, 256, 1024 hosts
SCALING_FLOWS = [3000, 10_000, 100_000]  # + 1000 (hosts axis, 144 hosts) and 50,000 (full scale)
SCALING_FIXED_FLOWS = 1000


def run_scaling(args, work_root: Path) -> list[dict]:
    rows = []
    if args.quick:
        host_pts, flow_pts, fixed_flows = [(4, 4, 4), (8, 8, 8)], [200, 400], 200
    else:
        host_pts, flow_pts, fixed_flows = SCALING_HOSTS, SCALING_FLOWS, SCALING_FIXED_FLOWS
    plan = [("hosts", l, s, h, fixed_flows) for (l, s, h) in host_pts]
    plan += [("flows", 12, 12, 12, f) for f in flow_pts]
    for axis, l, s, h, f in plan:
        label = f"scaling {axis}: {l * h} hosts, {f} flows"
        print(f"[{label}] ...", flush=True)
        run_dir = work_root / f"scale-{l}x{s}x{h}-{f}"
        e = run_ecnlab("tcn-leafspine", run_dir, leafspine_sets(l, s, h, f), repeat=args.repeat, once_if_over_s=60)
        r = rates(e)
        rows.append({"axis": axis, "hosts": l * h, "leaves": l, "spines": s, "hosts_per_leaf": h, "flows": f,
                     **{k: r[k] for k in ("wall_s", "events", "packet_hops", "hops_per_s", "events_per_s",
                                          "sim_time_s", "peak_rss_mb", "all_run_wall_s", "process_cpu_s")},
                     "ns_per_hop": r["wall_s"] / r["packet_hops"] * 1e9,
                     "mean_active_flows": mean_active_flows(run_dir, r["sim_time_s"])})
    return rows


# ---------------------------------------------------------------- report

def fmt(x, nd=2):
    if x is None:
        return "-"
    if isinstance(x, float):
        if abs(x) >= 1e6:
            return f"{x / 1e6:.{nd}f} M"
        if abs(x) >= 1e3:
            return f"{x / 1e3:.{nd}f} k"
        return f"{x:.{nd}f}"
    return str(x)


def tol_txt(tol) -> str:
    return "-" if tol is None else f"{tol * 100:.0f} %"


def stamp_legacy_rows(res: dict) -> None:
    """Rows of results written before each row carried its command: say so, with the date."""
    for row in res.get("shared", []) + res.get("full", []) + res.get("scaling", []):
        row.setdefault("command", f"an earlier run ({res.get('date', 'date unknown')}; see latest.json's history)")
        row.setdefault("date", res.get("date", ""))


def best_of_text(res: dict) -> str:
    """How many runs each figure is the best of, from the rows' own commands."""
    shared = res.get("shared", [])
    counts = {(r.get("repeat"), r.get("ns3_repeat")) for r in shared if r.get("repeat") is not None}
    if len(counts) == 1 and len(shared) == sum(r.get("repeat") is not None for r in shared):
        e, n = counts.pop()
        return f"Each figure of the shared scenarios is the best of {e} ecnlab runs and {n} ns-3 runs"
    return "Each figure is the best of one or more runs (its command, in latest.json, gives the count)"


def row_commands(res: dict) -> list[str]:
    """The distinct commands behind the rows of a (possibly merged) result, oldest first."""
    rows = res.get("shared", []) + res.get("full", []) + res.get("scaling", [])
    seen = {}
    for r in rows:
        if r.get("command"):
            seen.setdefault(r["command"], r.get("date", ""))
    return [c for c, _ in sorted(seen.items(), key=lambda kv: kv[1])] or [res["command"]]


def markdown(res: dict) -> str:
    cmds = row_commands(res)
    if len(cmds) == 1:
        head = [f"Command: `{cmds[0]}`  "]
    else:
        head = ["Merged from these commands (each row's command and date are in latest.json):", ""] + \
               [f"- `{c}`" for c in cmds] + [""]
    L = [f"# ecnlab benchmark results", ""] + head + [
         f"Date: {res['date']}; machine: {res['machine']}  ",
         "ecnlab: release build, single-threaded; wall = the simulator's event loop (`wall_time_s`), "
         "peak memory = whole process (`/usr/bin/time -v`).  ",
         "ns-3: 3.44 PyPI wheel (a release build with logging and asserts compiled in, not ns-3's `optimized` "
         "profile); wall = `Simulator::Run()` only (the `from ns import ns` import, ~700 MB and 10-40 s, "
         "is excluded); peak memory and process CPU = whole process including that import.  ",
         f"{best_of_text(res)} "
         "(2-core machine shared with other work: expect +-20 % noise; all runs are in latest.json).", ""]
    L += ["## ecnlab vs ns-3 on the same scenarios", "",
          "| scenario | simulator | wall (s) | events/s | packet-hops/s | sim s / wall s | peak mem (MB) | process CPU (s) | hops/s ratio ecnlab/ns-3 |",
          "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in res["shared"]:
        e = r["ecnlab"]
        L.append(f"| {r['scenario']} | ecnlab | {e['wall_s']:.3f} | {fmt(e['events_per_s'])} | {fmt(e['hops_per_s'])} | "
                 f"{e['sim_s_per_wall_s']:.3g} | {e['peak_rss_mb']:.0f} | {fmt(e.get('process_cpu_s'), 1)} | **{r['ratio_hops_per_s']:.0f}x** |"
                 if "ns3" in r else
                 f"| {r['scenario']} | ecnlab | {e['wall_s']:.3f} | {fmt(e['events_per_s'])} | {fmt(e['hops_per_s'])} | "
                 f"{e['sim_s_per_wall_s']:.3g} | {e['peak_rss_mb']:.0f} | {fmt(e.get('process_cpu_s'), 1)} | (ns-3 not run) |")
        if "ns3" in r:
            n = r["ns3"]
            L.append(f"| | ns-3 | {n['wall_s']:.2f} | {fmt(n['events_per_s'])} | {fmt(n['hops_per_s'])} | "
                     f"{n['sim_s_per_wall_s']:.3g} | {n['peak_rss_mb']:.0f} | {fmt(n.get('process_cpu_s'), 1)} | |")
    for r in res.get("full", []):
        e = r["ecnlab"]
        L.append(f"| {r['scenario']} | ecnlab | {e['wall_s']:.2f} | {fmt(e['events_per_s'])} | {fmt(e['hops_per_s'])} | "
                 f"{e['sim_s_per_wall_s']:.3g} | {e['peak_rss_mb']:.0f} | {fmt(e.get('process_cpu_s'), 1)} | ecnlab only |")
    L += ["", "Packet-hops counted per simulator: ecnlab counts its own; ns-3 counts PhyTxEnd on every "
          "point-to-point device (data, ACKs, and the handshake packets of its pre-established connections). "
          "Events are each simulator's own scheduler events and are not comparable one-to-one.", ""]
    if any("agreement" in r for r in res["shared"]):
        L += ["## Agreement of results (speed must not come from simulating less)", "",
              "| scenario | item | ecnlab | ns-3 | diff | tolerance | verdict |", "|---|---|---:|---:|---:|---:|---|"]
        for r in res["shared"]:
            for a in r.get("agreement", []):
                L.append(f"| {r['scenario']} | {a['item']} | {fmt(a['ecnlab'], 3)} | {fmt(a['ns3'], 3)} | "
                         f"{a['rel_diff'] * 100:.1f} % | {tol_txt(a['tol'])} | {a['verdict']} |")
        L += ["", "How the two are kept comparable (benches/scenarios.py docstring, ns3_driver.py): ns-3 connects each "
              "flow 20 ms before its start and replays the trace shifted by those 20 ms (times reported relative to "
              "the shift); its links run at nominal x 1502/1500 so that a full segment with ns-3's 2-byte PPP header "
              "is serialised in the same 1.2 us as ecnlab's; RED counts bytes (buffer and K) as ecnlab; its DCTCP cut "
              "is floored at min_cwnd segments and a loss halves the window (RFC 8257 §3.5, BenchDctcp); its senders "
              "fast-retransmit on the third duplicate ACK also in CA_CWR and stay in recovery when an ACK carries ECE "
              "(RFC 5681 §3.2 and Linux; ns-3 3.44 waits for the RTO and leaves recovery for CWR: BenchSocket), and "
              "fast-retransmit only when the ACK covers more than `recover` (RFC 6582 §3.2 step 1), with no "
              "emulated Reno SACKs kept past a cumulative ACK (ns-3 3.44 forgets `recover` and keeps them, so "
              "duplicate ACKs of go-back-N retransmissions chain spurious recoveries: BenchSocket); ecnlab "
              "uses RFC 6582's Impatient timer and Limited Transmit, as ns-3. Both cap a flow's flight at the 4 MB "
              "send buffer. Both count at most 2 segments per ACK in slow start, 1 after a timeout (RFC 3465 L = 2, §2.3; ns-3's TcpLinuxReno "
              "counts every segment a cumulative ACK covers, and after a timeout jumped from 1 segment to ssthresh "
              "on one ACK: BenchDctcp) and end fast recovery with cwnd = min(ssthresh, FlightSize + MSS) (RFC 6582 "
              "option 1; ns-3 3.44 sets ssthresh: BenchSocket). Known remaining differences: ns-3's queue disc does "
              "not see the one packet in its device queue; ns-3's window does not grow in CA_CWR; ns-3 sends pure "
              "ACKs ECT(0). Whole-run goodput of the Poisson scenarios "
              "is total bytes / last completion, and the large-flow class has 16-26 flows, so both move with a few "
              "flows. The leaf-spine runs lose packets at 90 % load; both simulators are chaotic there (ACK "
              "serialisation differs by nanoseconds and the runs part within ~1 ms), so per-flow results differ and "
              "only aggregates are compared; even these move from run to run: ecnlab's own tcn-leafspine-small with "
              "every flow start moved by 1-10 ns spreads by sd 3.1 % in mean FCT and 8.4 % in small-flow FCT "
              "(8 runs). So the chaotic scenarios are also judged over jittered draws of both simulators (the "
              "section below, when run); the single-draw verdicts above are one draw's. The residual an earlier "
              "session measured over such runs (ns-3's FCTs 6.7 % longer, small flows 15 %) and its diagnostics "
              "(one FIFO with TCN at 78 us: ns-3 +9.7 %; with RED within 3 %) are in the benches/scenarios.py "
              "docstring.", ""]
        if any(S.SCENARIOS.get(r["scenario"], {}).get("transport", {}).get("profile") == "linux" for r in res["shared"]):
            L += ["The `*-linux` rows are the other comparison (issue 16): ecnlab's `linux` host profile against ns-3 "
                  "with SACK and PRR (TcpPrrRecovery, also in CWR), delayed ACKs (every 2nd segment, 1 ms timer on "
                  "both; the driver adds Linux's quick-ACK for the first 16 segments and the immediate ACK of a "
                  "short segment), DCTCP alpha starting at 1 and its kernel floor of 2 segments, FCT ended when the "
                  "receiving application holds the flow's last byte on both (the textbook rows end it at the "
                  "sender's last ACK); none of the "
                  "NewReno-without-SACK alignments above (RFC 6582 `recover`, RFC 3465 L = 2, option-1 deflation) "
                  "applies. Remaining differences (ns-3's byte windows, its alpha and RTO formulas, ...) are listed "
                  "in the benches/scenarios.py docstring; benches/results/linux-profile.md discusses the results.", ""]
    L += jitter_markdown(res)
    for r in res["shared"] + res.get("full", []):
        L.append(f"- **{r['scenario']}**: {r['description']}")
    L.append("")
    if res.get("scaling"):
        def cpu(x):
            return f"{x:.1f}" if x else "-"

        def cpu_ns(x, hops):
            return f"{x / hops * 1e9:.0f}" if x else "-"

        def active(row):
            return f"{row['mean_active_flows']:.0f}" if row.get("mean_active_flows") is not None else "-"
        L += ["## ecnlab scaling (tcn-leafspine shape, built-in scenario with hosts / flows overridden)", "",
              "| axis | hosts (leaves x spines x hosts/leaf) | flows | wall (s) | process CPU (s) | packet-hops | hops/s (wall) "
              "| CPU ns per hop | mean active flows | sim time (s) | peak mem (MB) |",
              "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for s in res["scaling"]:
            L.append(f"| {s['axis']} | {s['hosts']} ({s['leaves']}x{s['spines']}x{s['hosts_per_leaf']}) | {s['flows']} | "
                     f"{s['wall_s']:.2f} | {cpu(s.get('process_cpu_s'))} | {fmt(float(s['packet_hops']))} | {fmt(s['hops_per_s'])} | "
                     f"{cpu_ns(s.get('process_cpu_s'), s['packet_hops'])} | {active(s)} | {s['sim_time_s']:.3f} | "
                     f"{s['peak_rss_mb']:.0f} |")
        for r in res.get("full", []):
            e = r["ecnlab"]
            L.append(f"| flows (full scale) | 144 (12x12x12) | {r['flows']['total']} | {e['wall_s']:.2f} | "
                     f"{cpu(e.get('process_cpu_s'))} | {fmt(float(e['packet_hops']))} | {fmt(e['hops_per_s'])} | "
                     f"{cpu_ns(e.get('process_cpu_s'), e['packet_hops'])} | {active(r)} | {e['sim_time_s']:.3f} | "
                     f"{e['peak_rss_mb']:.0f} |")
        L += ["", "Only the sizes listed were run; nothing is extrapolated. Wall = the event loop's own "
              "`wall_time_s`; process CPU = user + system time of the whole `ecnlab run` (set-up and output included), "
              "less sensitive than wall time to other jobs on this shared 2-core machine (they still share its caches). "
              "Mean active flows = sum of flow durations / simulated time: the cost of a packet-hop follows this working "
              "set (connections, busy ports, queued packets) more than the number of flows in the run. "
              "All runs are in latest.json.", ""]
    return "\n".join(L)


def jitter_markdown(res: dict) -> list[str]:
    """The chaotic scenarios' verdicts over jittered draws, and every draw's figures."""
    rows = [r for r in res["shared"] if r.get("jitter")]
    if not rows:
        return []

    def num(x, nd):
        return f"{x:,.{nd}f}"

    def ms(m, sd, n, nd):
        if m is None:
            return "-"
        return f"{num(m, nd)} ± {num(sd, nd) if sd is not None else '-'} (n={n})"

    def pct(x):
        return "-" if x is None else f"{x * 100:+.1f} %"

    L = ["## Agreement over jittered draws (chaotic scenarios)", "",
         "The leaf-spine scenarios at 90 % load are chaotic: one run of each simulator is one draw. Each "
         "simulator also ran the same trace with every flow start moved later by "
         f"{rows[0]['jitter']['jitter_ns'][0]}-{rows[0]['jitter']['jitter_ns'][1]} ns (a seeded draw per run, the "
         "same draws for both; draw 0 is the unjittered trace of the speed runs above). " + JITTER_RULE + " "
         "The interval covers the draws' noise only, not the model's sensitivity: ecnlab's own 8-draw mean FCT "
         "moves by 1.8-3.4 % on tcn-leafspine-small and 3.1-6.6 % on leafspine-1q-tcn when its ports get one "
         "packet more buffer or a TCN threshold 1.2 us higher or lower (2026-11-25, benches/scenarios.py "
         "docstring), so differences of that size are within what immaterial model details produce.", "",
         "| scenario | item | ecnlab mean ± sd (n) | ns-3 mean ± sd (n) | diff of means | 95 % interval | tolerance | verdict |",
         "|---|---|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        for a in r["jitter"]["agreement"]:
            nd = 0 if a["ecnlab_mean"] >= 100 or not a["item"].startswith("FCT") else 1
            ci = a["ci95"]
            L.append(f"| {r['scenario']} | {a['item']} | {ms(a['ecnlab_mean'], a['ecnlab_sd'], a['ecnlab_n'], nd)} | "
                     f"{ms(a['ns3_mean'], a['ns3_sd'], a['ns3_n'], nd)} | {pct(a['rel_diff'])} | "
                     f"{'-' if ci is None else f'{ci[0] * 100:+.1f} .. {ci[1] * 100:+.1f} %'} | {tol_txt(a['tol'])} | "
                     f"{a['verdict']} |")
    L += ["", "Every draw (FCT means in us):", "",
          "| scenario | simulator | draw | FCT all | small | medium | large | switch drops | data marks |",
          "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        for sim, label in (("ecnlab", "ecnlab"), ("ns3", "ns-3")):
            for i, d in enumerate(r["jitter"]["draws"][sim]):
                cells = [d.get(f"FCT avg {c} (us)") for c in ("all", "small", "medium", "large")]
                cells += [d.get("switch drops (packets)"), d.get("switch data marks (packets)")]
                L.append(f"| {r['scenario']} | {label} | {i} | " + " | ".join("-" if c is None else f"{c:,.0f}" for c in cells) + " |")
    return L + [""]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="tiny scale (seconds), for CI")
    ap.add_argument("--only", action="append", help="run only this scenario (repeatable): "
                    + ", ".join(list(S.SCENARIOS) + list(S.FULL_SCALE) + ["scaling"]))
    ap.add_argument("--no-ns3", action="store_true", help="ecnlab only")
    ap.add_argument("--repeat", type=int, default=2, help="ecnlab runs per measurement (best kept)")
    ap.add_argument("--ns3-repeat", type=int, default=2, help="ns-3 runs per measurement (best kept)")
    ap.add_argument("--merge", action="store_true",
                    help="keep the other scenarios' entries of an existing latest.json (run pieces separately)")
    ap.add_argument("--full-from", help="use an earlier `ecnlab run tcn-leafspine --out DIR` (DIR/summary.json, "
                    "DIR/time.txt from /usr/bin/time -v) instead of running the 50,000-flow scenario again")
    ap.add_argument("--full-repeat", type=int, default=1, help="runs of the full-scale leaf-spine (minutes each)")
    ap.add_argument("--out-dir", default=str(HERE / "results"), help="where latest.json / latest.md go")
    ap.add_argument("--report-only", action="store_true", help="re-render latest.md from latest.json")
    ap.add_argument("--no-jitter", action="store_true",
                    help="chaotic scenarios: judge the single draw only (no jittered draws)")
    ap.add_argument("--draws-ecnlab", type=int, default=0, help="chaotic scenarios: ecnlab draws (0: the scenario's)")
    ap.add_argument("--draws-ns3", type=int, default=0, help="chaotic scenarios: ns-3 draws (0: the scenario's)")
    ap.add_argument("--ns3-option", action="append", metavar="KEY=JSON",
                    help="set an ns-3 driver switch for this run (diagnostics, e.g. ns3_tcn_see_device_queue=true)")
    args = ap.parse_args(argv)
    if args.report_only:
        res = json.loads((Path(args.out_dir) / "latest.json").read_text())
        stamp_legacy_rows(res)
        work = Path(args.out_dir) / "work"  # fill in what older results lack, from their run directories
        for row in res.get("scaling", []):
            if row.get("mean_active_flows") is None:
                d = work / f"scale-{row['leaves']}x{row['spines']}x{row['hosts_per_leaf']}-{row['flows']}"
                row["mean_active_flows"] = mean_active_flows(d, row["sim_time_s"])
        for row in res.get("full", []):
            if row.get("mean_active_flows") is None:
                row["mean_active_flows"] = mean_active_flows(work / row["scenario"], row["ecnlab"]["sim_time_s"])
        (Path(args.out_dir) / "latest.json").write_text(json.dumps(res, indent=1, default=str))
        (Path(args.out_dir) / "latest.md").write_text(markdown(res))
        print(markdown(res))
        return 0

    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    work_root = out_dir / "work"
    work_root.mkdir(exist_ok=True)
    want = set(args.only or [])

    def sel(n: str) -> bool:
        # Diagnostic scenarios run only when named with --only.
        if S.SCENARIOS.get(n, {}).get("diagnostic"):
            return n in want
        return not want or n in want

    if not args.no_ns3 and any(sel(n) for n in S.SCENARIOS):
        ensure_ns3()
    res = {"command": " ".join(["benches/run.py"] + (argv if argv is not None else sys.argv[1:])),
           "date": time.strftime("%Y-%m-%d %H:%M:%S"), "machine": f"{platform.processor() or platform.machine()}, "
           f"{os.cpu_count()} CPUs, Linux {platform.release()}", "quick": args.quick, "repeat": args.repeat,
           "ns3_repeat": 0 if args.no_ns3 else args.ns3_repeat, "shared": [], "full": [], "scaling": []}
    # Every row carries the command and date that produced it, so a report merged from
    # several runs (--merge) says where each figure comes from.
    stamp = {"command": res["command"], "date": res["date"], "repeat": args.repeat, "ns3_repeat": res["ns3_repeat"]}
    for name in S.SCENARIOS:
        if sel(name):
            res["shared"].append({**run_shared(name, args, work_root), **stamp})
    if sel("tcn-leafspine-full"):
        res["full"].append({**run_full_scale(args, work_root), **stamp})
    if sel("scaling"):
        res["scaling"] = [{**row, **stamp} for row in run_scaling(args, work_root)]
    if args.merge and (out_dir / "latest.json").exists():
        old = json.loads((out_dir / "latest.json").read_text())
        stamp_legacy_rows(old)
        new_names = {r["scenario"] for r in res["shared"] + res["full"]}
        res["shared"] = [r for r in old.get("shared", []) if r["scenario"] not in new_names] + res["shared"]
        res["full"] = [r for r in old.get("full", []) if r["scenario"] not in new_names] + res["full"]
        if not res["scaling"]:
            res["scaling"] = old.get("scaling", [])
        res["command"] = "; ".join(row_commands(res))
    (out_dir / "latest.json").write_text(json.dumps(res, indent=1, default=str))
    md = markdown(res)
    (out_dir / "latest.md").write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
