"""``ecnlab validate``: the simulator checked against the kernel.

Read first: crates/ecnlab-emu/README.md (what the emulated path is, and how it differs
from the simulated one). A scenario runs twice: on real Linux TCP through the emulated
switch (``ecnlab emulate``: for ``cc = "dctcp"`` ecnlab's BPF DCTCP in the kernel, never a
fallback) and in the simulator with the Linux host profile (``transport.profile=linux``,
the same congestion control). The simulator runs the very scenario the emulation ran (its
``scenario.json``, scaled to the emulated rate), so both are in one time base; figures are
shown in the original scenario's (goodputs x s, times / s, s the scale factor).

Each compared figure is a row ``{metric, sim, emu, ratio, band, within}``: ratio is
emu / sim, and the band, fixed here per kind of figure with its reason (``BANDS``), is
what the emulated path's known differences allow. ``DIR/validate.json`` has the rows,
``DIR/validate.md`` the table (also printed), ``DIR/validate.png`` the figure; the runs
are in ``DIR/emulated[-k]/`` and ``DIR/simulated/``. Exit status 0 if every row is within
its band, 4 if not, 2 for bad input, 1 for an internal error.

``--sim-profile textbook`` runs the simulator's textbook hosts instead
(``transport.profile=textbook``; on a core without host profiles, its only hosts).

(The module is ``validation``: ``ecnlab.validate`` is the API's scenario check.)
"""

from __future__ import annotations

import json
import os
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import _core

EXIT_OUTSIDE = 4


@dataclass(frozen=True)
class Band:
    """What emu / sim may be (``lo``..``hi``), or for a figure that is itself a relative
    difference, how far emu - sim may be (``abs_max``). ``slack``: an absolute difference
    below which two counts are the same (few events differ by chance)."""

    why: str
    lo: float | None = None
    hi: float | None = None
    abs_max: float | None = None
    slack: float = 0.0

    def within(self, sim: float | None, emu: float | None) -> bool:
        if sim is None or emu is None:
            return False
        if self.abs_max is not None:
            return abs(emu - sim) <= self.abs_max
        if abs(emu - sim) <= self.slack:
            return True
        if sim == 0:
            return False
        return self.lo <= emu / sim <= self.hi

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"why": self.why}
        if self.abs_max is not None:
            d["abs_max"] = self.abs_max
        else:
            d["lo"], d["hi"] = self.lo, self.hi
        if self.slack:
            d["slack"] = self.slack
        return d

    def text(self) -> str:
        if self.abs_max is not None:
            return f"|emu-sim| <= {self.abs_max:g}"
        return f"{self.lo:g}..{self.hi:g}"


BANDS: dict[str, Band] = {
    "goodput": Band(
        "the switch's token bucket runs at 99.5 % of line rate and counts the 14-byte Ethernet header, so its "
        "payload capacity is 0.986 of the simulated link's, and a queue that gets what a strict-priority flow "
        "leaves loses more (0.97 in tcn-static); senders wait for a CPU on a loaded machine",
        lo=0.85, hi=1.10),
    "probe_p50": Band(
        "the emulated base RTT lacks the simulator's store-and-forward delays (a 1500 B packet per hop: 12 us "
        "of the 250 us in tcn-static at 1 Gbit/s) and adds the switch's timer wake-up latency; queueing "
        "itself is the compared part",
        lo=0.75, hi=1.25),
    "probe_p99": Band(
        "tails add the machine's scheduling (descheduled senders and switch, softirq work deferred to "
        "ksoftirqd) to the queue",
        lo=0.6, hi=2.0),
    "marks": Band(
        "the token bucket (a 2.5 KB bucket) and the event loop's wake-ups release frames in small bursts the "
        "simulator's exact serialization does not have, moving the queue across thresholds more often; "
        "counts below 50 apart are chance",
        lo=0.5, hi=2.0, slack=50),
    "flow_spread": Band(
        "(max - min) / mean of the goodputs of flows sharing a queue; real flows also differ by their CPU's "
        "scheduling, so the spreads may differ by 0.15 of the mean",
        abs_max=0.15),
    "fct_avg": Band(
        "short messages are dominated by the base RTT (no store-and-forward in the emulation) and by the "
        "host stack's latency, which the simulator does not have",
        lo=0.7, hi=1.4),
    "fct_p99": Band(
        "tails add the machine's scheduling to the FCT, and the kernel's loss recovery (RACK, tail-loss "
        "probes) differs from the model's",
        lo=0.5, hi=2.0),
    "train_mean": Band(
        "a train is what one ACK releases (the segments it acknowledges plus the window's growth, in skbs of "
        "tcp_tso_autosize's size): a mean of about 5 moves by one segment, 20-25 %, when ACKs acknowledge 2 "
        "segments instead of 3 (the kernel's quick and delayed ACKs against the model's); the kernel's tbf "
        "releases the segments of a GSO skb with gaps of 0.7-1.6 serialization times (its 3 KB bucket, its "
        "watchdog timer), and two kernel flows sharing a link split it unequally (README, Disagreements)",
        lo=0.67, hi=1.5),
    "train_p90": Band("as the mean: the tail of the same bursts, in whole segments", lo=0.67, hi=1.5),
    "syn_time": Band(
        "the SYN timer (TCP_TIMEOUT_INIT, 1 s, and its backoff: tcp_retransmit_timer) runs on the timer "
        "wheel, which rounds a timeout of 64 jiffies or more up to its level's granularity, at most 1/8 "
        "late (kernel/time/timer.c); the SYN-ACK and the first data add one base RTT: -1 % to +13 %, or 5 ms",
        lo=0.99, hi=1.13, slack=5.0),
    "tlp_time": Band(
        "the probe timeout (tcp_schedule_loss_probe: 2 SRTT + rto_min with one segment out, else 2 SRTT + "
        "2 ms; at most the RTO) from an SRTT that includes the host stack's latency and the switch's "
        "wake-ups, which the simulated RTT does not have: 20 % or 2 ms (the kernel's jiffies are not "
        "allowed for: the simulator leaves them out, tcp/linux/recovery.rs, and a row shows what they cost)",
        lo=0.8, hi=1.25, slack=2.0),
    "loss_events": Band(
        "under [faults] the switch loses known segments, once each, on an otherwise lossless path: each sender's "
        "recovery events are then whole numbers fixed by its loss detection (one tail loss probe per lost tail "
        "segment and no timeout, RFC 8985 §7), counted by the simulator and by the kernel's own MIB "
        "(TcpExtTCPLossProbes, TcpExtTCPTimeouts); any difference is a different rule",
        abs_max=0.0),
}

# What the simulator is told of the kernel's hosts beyond the scenario: the emulation's
# veths run with GRO off (emulate/namespaces.py `_offloads_off`; a veth has no NAPI to
# coalesce in unless GRO is asked for), so its receivers ACK segment by segment as the
# kernel's delayed-ACK rule says. TSO needs nothing: TCP builds GSO skbs whatever the device
# (net/core/sock.c `sk_setup_caps` sets NETIF_F_GSO for every TCP socket) of
# tcp_tso_autosize's size up to the veth's gso_max_size, 64 KiB, the simulator's host.tso.
ALIGNED: dict[str, tuple[Any, str]] = {
    "host.gro": (False, "the emulated hosts' veths run without GRO"),
}

# TCP frames the emulated switch records at its ingress for the wire rows (trains, SYNs,
# probes): about 70 bytes each in switch-stats.json.
CAPTURE_FRAMES = 300_000


def _queues(summary: dict[str, Any]) -> dict[tuple[str, int], dict[str, Any]]:
    return {(q["port"], q["queue"]): q for q in summary["queues"]}


def _mean(xs: list[float | None]) -> float | None:
    xs = [x for x in xs if x is not None]
    return statistics.fmean(xs) if xs else None


def _spread(goodputs: list[float]) -> float | None:
    m = statistics.fmean(goodputs) if goodputs else 0.0
    return (max(goodputs) - min(goodputs)) / m if m > 0 else None


def _flow_groups(doc: dict[str, Any]) -> dict[tuple[int, int], list[int]]:
    """Long-lived [[flows]] by (receiver, queue), in the order of their ids; the index of
    each among the long-lived flows (the simulator's ``long_flows`` order)."""
    from .emulate import classify, expand_flows

    groups: dict[tuple[int, int], list[int]] = {}
    k = 0
    for f in expand_flows(doc):
        if f["size"] is None:
            groups.setdefault((f["dst"], classify(doc, f["class"])), []).append(k)
            k += 1
    return groups


def rows(doc: dict[str, Any], sim: dict[str, Any], emus: list[dict[str, Any]], factor: float = 1.0,
         link_rate_bps: float | None = None) -> list[dict[str, Any]]:
    """The compared figures of one scenario (``doc``, as the runs ran it): ``sim`` the
    simulator's summary, ``emus`` the emulated runs' (averaged). ``factor``: goodputs x
    factor and times / factor give the original time base (dilated runs). Pure: no I/O."""
    from .emulate import resolve_scenario

    doc = resolve_scenario(doc)
    out: list[dict[str, Any]] = []

    def row(metric: str, kind: str, unit: str, s: float | None, e: float | None, runs: list | None = None) -> None:
        out.append(_row(metric, kind, unit, s, e, runs))

    # Goodput of each queue that carries data (over 1 % of the link rate on either side).
    sq = _queues(sim)
    eqs = [_queues(e) for e in emus]
    floor = 0.01 * (link_rate_bps or 0)
    for key in sorted(sq):
        runs = [eq.get(key, {}).get("goodput_bps", 0.0) for eq in eqs]
        s, e = sq[key]["goodput_bps"], _mean(runs)
        if max(s, e or 0) <= floor or (s == 0 and not e):
            continue
        row(f"goodput {key[0]} q{key[1]}", "goodput", "Mbit/s", s * factor / 1e6, e * factor / 1e6,
            [x * factor / 1e6 for x in runs])
    # Marks of every queue that marks on either side.
    for key in sorted(set(sq) | {k for eq in eqs for k in eq}):
        s = sq.get(key, {}).get("marks", 0)
        runs = [eq.get(key, {}).get("marks", 0) for eq in eqs]
        e = _mean(runs)
        if s or e:
            row(f"marks {key[0]} q{key[1]}", "marks", "packets", s, e, runs)
    # Probe RTTs, per probe.
    sp = {p["id"]: p for p in sim.get("probes", [])}
    for pid, p in sorted(sp.items()):
        for q, kind in (("p50_us", "probe_p50"), ("p99_us", "probe_p99")):
            runs = [next((x[q] for x in e.get("probes", []) if x["id"] == pid), None) for e in emus]
            s, e = p[q], _mean(runs)
            row(f"probe {pid} RTT {q[:3]} (h{p['src']}->h{p['dst']} class {p['class']})", kind, "us",
                s / factor if s is not None else None, e / factor if e is not None else None,
                [x / factor if x is not None else None for x in runs])
    # Goodput spread of long-lived flows sharing a queue.
    sim_g = sim.get("long_flows", {}).get("goodput_bps", [])
    for (dst, q), idx in sorted(_flow_groups(doc).items()):
        if len(idx) < 2 or max(idx) >= len(sim_g):
            continue
        ids = _long_flow_ids(doc)
        runs = []
        for e in emus:
            g = {f["id"]: f["goodput_bps"] for f in e["emulation"]["flows"]}
            runs.append(_spread([g.get(ids[i]) or 0.0 for i in idx]))
        row(f"flow goodput spread to h{dst} q{q} ({len(idx)} flows)", "flow_spread", "of mean",
            _spread([sim_g[i] for i in idx]), _mean(runs), runs)
    # FCT by size class, where both sides have sized flows.
    for c in (name for name, _, _ in _core.fct_classes()):
        sf = sim["fct"][c]
        efs = [e["fct"][c] for e in emus]
        if not sf["count"] or not all(x["count"] for x in efs):
            continue
        for q, kind in (("avg_us", "fct_avg"), ("p99_us", "fct_p99")):
            runs = [x[q] / factor for x in efs]
            row(f"FCT {c} {q[:3]} (n={sf['count']})", kind, "us", sf[q] / factor, _mean(runs), runs)
    return out


def _row(metric: str, kind: str, unit: str, s: float | None, e: float | None, runs: list | None = None) -> dict:
    band = BANDS[kind]
    r = {"metric": metric, "kind": kind, "unit": unit, "sim": s, "emu": e,
         "ratio": (e / s) if s and e is not None else None, "band": band.as_dict(), "within": band.within(s, e)}
    if runs is not None and len(runs) > 1:
        r["emu_runs"] = runs
    return r


def fault_counter_rows(doc: dict[str, Any], sim: dict[str, Any], emus: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Under ``[faults] drop_byte``: the tail loss probes and retransmission timeouts of the
    whole run, the simulator's (``summary.json`` flows) against the kernels' MIB counters
    summed over the hosts (each emulated run's). Pure: no I/O."""
    if (doc.get("faults") or {}).get("drop_byte") is None:
        return []
    out = []
    for what, sim_keys, mib in (("tail loss probes sent", ("tlp_probes",), "TcpExtTCPLossProbes"),
                                ("retransmission timeouts", ("timeouts", "timeouts_after_finish"), "TcpExtTCPTimeouts")):
        s = float(sum(sim["flows"].get(k) or 0 for k in sim_keys))
        runs = [float(sum(h.get(mib, 0) for h in e["emulation"]["hosts"].values())) for e in emus]
        out.append(_row(f"{what}, all hosts (kernel: {mib})", "loss_events", "count", s, _mean(runs), runs))
    return out


# Trains counted per sending host when both sides have at least this many in the window.
MIN_TRAINS = 20


def _disturbed(emulation: dict[str, Any]) -> bool:
    """Whether the machine, not the models, may have moved an emulated run's figures: its
    measurement window stalled, or other processes, or the hypervisor (steal time), took the
    CPUs its timers needed, on average or in bursts that stalled the switch's own loop."""
    from .emulate import CONTENDED_CORES, STALLED_FRACTION, STOLEN_CORES

    stalls = (emulation.get("switch") or {}).get("stalls") or {}
    return (any("the machine stalled" in w for w in emulation["warnings"])
            or (emulation.get("others_cpu_cores") or 0.0) > CONTENDED_CORES
            or (emulation.get("stolen_cpu_cores") or 0.0) > STOLEN_CORES
            or (stalls.get("stalled_fraction") or 0.0) > STALLED_FRACTION)


def wire_rows(doc: dict[str, Any], sim: list, sim_window: tuple[int, int | None],
              emus: list[tuple[list, tuple[int, int | None]]]) -> list[dict[str, Any]]:
    """The rows of what the switch's ingress saw (``ecnlab.emulate.segments``): each
    sending host's train lengths in the measurement window, and under ``[faults]`` the SYN
    timer (``drop_syns``) and the lost segment's retransmission (``drop_byte``) of the first
    listed flow. ``sim``: the simulator's segments (its hosts' NIC captures), ``emus``: each
    emulated run's (the switch's ingress capture) with its window on its own clock. Times as
    run (the kernel's timers are not dilated). Pure: no I/O."""
    from .emulate import HEADER, expand_flows
    from .emulate import segments as sg

    out: list[dict[str, Any]] = []
    rate = _core.parse_unit("rate", doc["topology"]["link_rate"])
    senders = sorted({x.src for x in sim if x.payload > 0})
    for h in senders:
        st = sg.train_figures(sg.trains([x for x in sim if x.src == h], rate, *sim_window))
        ets = [sg.trains([x for x in segs if x.src == h], rate, *w) for segs, w in emus]
        if min(len(sg.trains([x for x in sim if x.src == h], rate, *sim_window)),
               *(len(t) for t in ets)) < MIN_TRAINS:
            continue
        efs = [sg.train_figures(t) for t in ets]
        for q, kind in (("mean", "train_mean"), ("p90", "train_p90")):
            runs = [f[q] for f in efs]
            out.append(_row(f"train length {q} (h{h}, data segments back to back)", kind, "segments", st[q],
                            _mean(runs), runs))
    flows = expand_flows(doc)
    faults = doc.get("faults") or {}
    ms = 1e-6
    if faults.get("drop_syns") and flows:
        src, dst = flows[0]["src"], flows[0]["dst"]
        so = sg.syn_timing(sim, src, dst)
        eos = [sg.syn_timing(segs, src, dst) for segs, _ in emus]
        names = [(f"SYN {k + 2} sent", lambda o, k=k: o["syns_ns"][k + 1] if len(o["syns_ns"]) > k + 1 else None)
                 for k in range(int(faults["drop_syns"]))]
        names += [("SYN-ACK seen", lambda o: o["synack_ns"]), ("first data sent", lambda o: o["first_data_ns"])]
        for what, get in names:
            s = get(so) if so else None
            runs = [(get(o) * ms if o and get(o) is not None else None) for o in eos]
            out.append(_row(f"{what} after the first SYN (h{src}->h{dst}, {faults['drop_syns']} SYNs lost)",
                            "syn_time", "ms", s * ms if s is not None else None, _mean(runs), runs))
    sized = [f for f in flows if f["size"]]
    if faults.get("drop_byte") is not None and sized:
        f, b = sized[0], _core.parse_unit("size", faults["drop_byte"])
        so = sg.retransmission_delay(sim, f["src"], f["dst"], b)
        eos = [sg.retransmission_delay(segs, f["src"], f["dst"], b + HEADER.size) for segs, _ in emus]
        for what, key in (("after its first transmission", "delay_ns"), ("after the last ACK before it",
                                                                          "after_last_ack_ns")):
            s = so[key] * ms if so and so[key] is not None else None
            runs = [o[key] * ms if o and o[key] is not None else None for o in eos]
            out.append(_row(f"lost segment (byte {b}, h{f['src']}->h{f['dst']}) sent again {what}", "tlp_time",
                            "ms", s, _mean(runs), runs))
    return out


def _long_flow_ids(doc: dict[str, Any]) -> list[int]:
    from .emulate import expand_flows

    return [f["id"] for f in expand_flows(doc) if f["size"] is None]


def table(result: dict[str, Any]) -> str:
    lines = [f"### {result['scenario']}: simulator ({result['sim_profile']} hosts, cc {result['sim_cc']}) "
             f"against the kernel ({', '.join(f'{k} -> {v}' for k, v in result['emu_cc'].items())}), "
             f"rates / {result['factor']:g}, {result['runs']} emulated run(s), shown unscaled", "",
             "| metric | sim | emu | emu / sim | band | within |", "|---|---:|---:|---:|---|---|"]
    for r in result["rows"]:
        fmt = (lambda x: "-" if x is None else f"{x:.3f}") if r["kind"] == "flow_spread" else \
            (lambda x: "-" if x is None else f"{x:.0f}" if abs(x) >= 10 else f"{x:.2f}")
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.2f}"
        lines.append(f"| {r['metric']} ({r['unit']}) | {fmt(r['sim'])} | {fmt(r['emu'])} | {ratio} | "
                     f"{BANDS[r['kind']].text()} | {'yes' if r['within'] else '**no**'} |")
    n_out = sum(not r["within"] for r in result["rows"])
    lines += ["", f"{len(result['rows']) - n_out} of {len(result['rows'])} rows within their band."]
    if result.get("disturbed_runs"):
        from .emulate import CONTENDED_CORES, STALLED_FRACTION, STOLEN_CORES

        lines.append(f"Emulated run(s) {result['disturbed_runs']} were disturbed by the machine (a measurement "
                     f"window off by over 10 %, other processes using over {CONTENDED_CORES:g} core, the "
                     f"hypervisor taking over {STOLEN_CORES:g}, or the switch's loop stalled over "
                     f"{STALLED_FRACTION:.1%} of the window; the run's warnings say which): rerun on a quieter "
                     "machine.")
    return "\n".join(lines)


def figure(result: dict[str, Any], path: Path) -> None:
    """emu / sim of every ratio row against its band; spreads as emu - sim."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rs = result["rows"]
    fig, ax = plt.subplots(figsize=(8, 0.3 * len(rs) + 1.2))
    for i, r in enumerate(rs):
        b = r["band"]
        if "abs_max" in b:
            x, lo, hi = (r["emu"] - r["sim"]) if r["emu"] is not None and r["sim"] is not None else None, \
                -b["abs_max"], b["abs_max"]
            x, lo, hi = (None if x is None else 1 + x), 1 + lo, 1 + hi
        else:
            x, lo, hi = r["ratio"], b["lo"], b["hi"]
        ax.plot([lo, hi], [i, i], color="0.8", linewidth=6, solid_capstyle="butt")
        if x is not None:
            ax.plot([x], [i], "o", color="tab:blue" if r["within"] else "tab:red")
    ax.axvline(1.0, color="0.5", linewidth=0.8)
    ax.set_yticks(range(len(rs)), [r["metric"] for r in rs], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("emulated / simulated (spreads: 1 + emulated - simulated); grey: band")
    ax.set_title(f"{result['scenario']}: kernel against simulator", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def profile_overrides(profile: str) -> list[str]:
    """The ``--set`` that makes the simulator run host profile ``profile``, always by name:
    ``linux`` is the core's default, so the textbook hosts must be asked for."""
    return [f"transport.profile={profile}"]


def validate(scenario: str | os.PathLike | dict[str, Any], out_dir: str | os.PathLike, overrides: list[str] = (),
             *, runs: int = 1, rate: str | None = "auto", seed: int | None = None, sim_profile: str = "linux",
             quiet: bool = True) -> dict[str, Any]:
    """Run both sides, write ``validate.json``/``.md``/``.png`` into ``out_dir``; returns
    the result (``rows``, ``within``). Raises EmulationError / ScenarioError."""
    from . import api
    from .outdir import result_dir

    # Both sides run the profile's resolved [transport]: the kernel's hosts take its
    # rto_min, initial window and delayed-ACK rule (emulate.host_stack), so that the
    # comparison is of the two stacks, not of two configurations.
    overrides = [*overrides, *profile_overrides(sim_profile or "textbook")]
    # The simulator's side is checked first: a scenario it refuses fails before minutes
    # of emulation, and before anything is written.
    api.validate(scenario, overrides)
    with result_dir(out_dir) as out:
        return _validate_into(out, scenario, overrides, runs, rate, seed, sim_profile, quiet)


def _validate_into(out: Path, scenario: str | os.PathLike | dict[str, Any], overrides: list[str], runs: int,
                   rate: str | None, seed: int | None, sim_profile: str, quiet: bool) -> dict[str, Any]:
    """``validate`` into ``out``, a new directory of its own."""
    from . import api
    from . import emulate as emu

    from .emulate import segments

    emus, captured = [], []
    for k in range(runs):
        d = out / ("emulated" if runs == 1 else f"emulated-{k + 1}")
        emus.append(emu.emulate(scenario, d, overrides, seed, rate=rate, quiet=quiet, capture_frames=CAPTURE_FRAMES))
        stats = json.loads((d / "emulation" / "switch-stats.json").read_text())
        captured.append((segments.from_emulation(stats), (stats["window"]["from_ns"], stats["window"]["to_ns"])))
    first = out / ("emulated" if runs == 1 else "emulated-1")
    # The very scenario the emulation ran: resolved by the core and scaled, with the
    # hosts' offloads as the kernel had them (ALIGNED).
    scaled = json.loads((first / "scenario.json").read_text())
    for key, (value, _why) in ALIGNED.items():
        section, name = key.split(".")
        if scaled[section].get(name) is not None:  # the textbook hosts have no offloads
            scaled[section][name] = value
    n = scaled["topology"]["hosts"]
    res = api.run(scaled, seed=emus[0]["seed"], pcap=[f"h{i}->s0" for i in range(n)])
    res.write_files(out / "simulated")
    sim_segs = sorted((x for data in res.pcaps.values() for x in segments.from_pcap(data)), key=lambda x: x.t_ns)
    sc = emus[0]["emulation"]["scale"]
    factor = sc["factor"] if sc["mode"] == "dilate" else 1.0
    rs = rows(scaled, res.summary, emus, factor, sc.get("scenario_link_rate_bps"))
    warmup = _core.parse_unit("time", scaled["metrics"]["warmup"])
    rs += wire_rows(scaled, sim_segs, (warmup, None), captured)
    rs += fault_counter_rows(scaled, res.summary, emus)
    result = {
        "scenario": emus[0]["scenario"], "seed": emus[0]["seed"], "runs": runs, "factor": sc["factor"],
        "mode": sc["mode"], "sim_profile": sim_profile or "textbook",
        "sim_cc": scaled["transport"]["cc"],
        "emu_cc": {k: v["kernel"] for k, v in emus[0]["emulation"]["cc"].items()},
        "kernel": emus[0]["emulation"]["kernel"],
        "load_average": list(os.getloadavg()),
        # Emulated runs the machine disturbed (emulate's warning): their figures are in the
        # rows, but a row outside its band may be the machine's, not the model's.
        "disturbed_runs": [k + 1 for k, e in enumerate(emus) if _disturbed(e["emulation"])],
        "within": all(r["within"] for r in rs),
        "aligned": {k: {"value": v, "why": why} for k, (v, why) in ALIGNED.items()
                    if scaled[k.split(".")[0]].get(k.split(".")[1]) == v},
        "capture_truncated": [k + 1 for k, (segs, _) in enumerate(captured) if len(segs) >= CAPTURE_FRAMES],
        "rows": rs,
        "bands": {k: b.as_dict() for k, b in BANDS.items()},
    }
    (out / "validate.json").write_text(json.dumps(result, indent=1) + "\n")
    (out / "validate.md").write_text(table(result) + "\n")
    figure(result, out / "validate.png")
    return result


def main(argv: list[str] | None = None) -> int:
    from .commandline import Parser
    from .exits import exit_status

    p = Parser(prog="ecnlab validate", description="Run a scenario in the simulator and on the kernel through the "
                                                    "emulated switch, and compare (root).")
    p.add_argument("scenario", help="built-in name or TOML file")
    p.add_argument("--out", help="result directory (default: out/<scenario>-validate)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a scenario key")
    p.add_argument("--seed", type=int)
    p.add_argument("--runs", type=int, default=1, help="emulated runs, averaged (default 1)")
    p.add_argument("--rate", default="auto", help="emulated host link rate (as ecnlab emulate; default auto)")
    p.add_argument("--sim-profile", default="linux",
                   help="the simulator's host profile: linux (default) or textbook (no transport.profile override)")
    p.add_argument("-q", "--quiet", action="store_true")
    a = p.parse_args(argv)
    if a.runs < 1:
        p.error("--runs must be at least 1")
    try:
        if a.out is None:
            from .api import resolve

            a.out = str(Path("out") / f"{resolve(a.scenario, a.set).get('name', Path(a.scenario).stem)}-validate")
        r = validate(a.scenario, a.out, a.set, runs=a.runs, rate=a.rate, seed=a.seed, sim_profile=a.sim_profile,
                     quiet=a.quiet)
    except BaseException as e:  # noqa: BLE001 - one line and a status (ecnlab/exits.py)
        return exit_status(e, cleanup=" (namespaces removed)")
    if not a.quiet:
        print(table(r))
        print(f"results in {Path(a.out)}/ (validate.json, validate.md, validate.png)")
    n_out = sum(not x["within"] for x in r["rows"])
    if n_out:
        sys.stderr.write(f"ecnlab: validate: {n_out} of {len(r['rows'])} rows outside their band\n")
        return EXIT_OUTSIDE
    return 0
