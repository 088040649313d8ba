"""The advice from what validation found: the verdict (``verdict.py``), how many runs were
unsound and why, each scheme's points, the recommendation with the operator's metrics, the
platform files, ``scenario.toml``, ``advice.json`` and the report."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from . import metrics, words
from .grid import GridPoint
from .options import METRICS, Inputs, record
from .network import Network
from .platforms import Switch, supports, write_configs
from .rules import Skip, Start
from .validate import Outcome
from .verdict import Verdict, decisive, equivalent, undecided


def switch_of(net: Network, buffer_given: bool) -> Switch:
    quantum = net.doc.get("switch", {}).get("scheduler", {}).get("quantum", "1.5KB")
    from .. import _core

    return Switch(net.queues, net.scheduler, net.strict, net.weights, net.ecn_queues, net.dscp_to_queue,
                  net.default_queue, net.buffer_bytes, net.rate_bps, net.ports, _core.parse_unit("size", str(quantum)),
                  buffer_given)


def _expressible(scheme: str, inp: Inputs, sw: Switch) -> int:
    return sum(supports(p, scheme, sw) is None for p in inp.platforms)


def _simplicity(scheme: str) -> int:
    from . import SIMPLICITY

    return SIMPLICITY.index(scheme) if scheme in SIMPLICITY else len(SIMPLICITY)


def conclude(o: Outcome | None, inp: Inputs, net: Network, sw: Switch) -> tuple[Verdict, str | None]:
    """The verdict, and the scheme recommended (None: nothing validated)."""
    what = METRICS[inp.metric][1]
    qs = words.queues(net.ecn_queues)
    if o is None:
        return Verdict("none", "no simulated check (--validate none): the papers' starting points, untested"), None
    if o.leader is None:
        return Verdict("none", f"no answer: {o.why_end}; see why the runs were unsound below"), None
    label = {s: p.label for s, p in o.candidates.items()}
    if o.end == "sole":
        left = [f"{words.name(s)}: {why}" for s, (why, _) in o.out.items()]
        return Verdict("sole", f"{label[o.leader]} on {qs}: the only scheme with sound runs"
                       + (f" ({'; '.join(left)})" if left else ""), label[o.leader]), o.leader
    if o.end == "decisive":
        closest = min((s for s, (_, d) in o.out.items() if d is not None), key=lambda s: o.out[s][1].mean)
        d = o.out[closest][1]
        text = decisive(label[o.leader], qs, label[closest], d, what)
        unsound = [words.name(s) for s, (_, dd) in o.out.items() if dd is None]
        if unsound:
            text += f"; {' and '.join(unsound)} left the race with an unsound run (see soundness)"
        return Verdict("decisive", text, label[o.leader], label[closest], d), o.leader
    left = [s for s in o.alive if s != o.leader]
    diffs = {s: _diff(o, s) for s in left}
    if o.end == "equivalent":
        group = [o.leader] + left
        pick = min(group, key=lambda s: (-_expressible(s, inp, sw), _simplicity(s), s))
        other = o.leader if pick != o.leader else max(left, key=lambda s: abs(diffs[s].mean))
        d = diffs[other if pick == o.leader else pick]
        versus = " and ".join([label[other]] + [label[s] for s in group if s not in (pick, other)])
        counts = ", ".join(f"{words.name(s)} {_expressible(s, inp, sw)}" for s in group)
        why = (f"by what your {len(inp.platforms)} platforms express ({counts}), then by simplicity "
               f"({' < '.join(words.name(s) for s in sorted(group, key=_simplicity))})")
        return Verdict("equivalent", equivalent(label[pick], qs, versus, d, what, why), label[pick],
                       label[other], d), pick
    closest = min(left, key=lambda s: diffs[s].mean)
    return Verdict("undecided", undecided(label[o.leader], qs, label[closest], diffs[closest], what, o.why_end),
                   label[o.leader], label[closest], diffs[closest], o.why_end), o.leader


def _diff(o: Outcome, s: str):
    from .verdict import Difference

    return Difference.of(o.values(o.candidates[o.leader]), o.values(o.candidates[s]))


def soundness_of(o: Outcome | None) -> dict[str, Any]:
    """How many runs were unsound, and why (by rule, with an example)."""
    from .sound import SET_ASIDE

    aside = {"rules": SET_ASIDE, "runs": Counter()}
    if o is None:
        return {"runs": 0, "unsound": 0, "failed": 0, "by_rule": {}, "examples": {}, "set_aside": aside}
    by_rule, examples = Counter(), {}
    unsound = failed = 0
    for r in o.runs.values():
        if r.verdict is None:
            failed += 1
            continue
        if r.verdict.flags:
            unsound += 1
        for rule in {rule for rule, _ in r.verdict.flags}:
            by_rule[rule] += 1
        for rule, text in r.verdict.flags:
            examples.setdefault(rule, f"{r.point.label}, seed {r.seed}: {text}")
        for rule in {rule for rule, _ in r.verdict.aside}:
            aside["runs"][rule] += 1
    aside["runs"] = dict(aside["runs"])
    return {"runs": len(o.runs), "unsound": unsound, "failed": failed, "by_rule": dict(by_rule),
            "examples": examples, "set_aside": aside}


def _point_entry(p: GridPoint, o: Outcome | None, column: str) -> dict[str, Any]:
    e = p.as_dict()
    if o is None or p.skip:
        return e
    runs = o.point_runs(p)
    e["runs"] = [{"seed": r.seed, "key": r.dir.name if r.dir else None, "value": r.value,
                  "sound": r.sound, "flags": [t for _, t in r.verdict.flags] if r.verdict else [],
                  **({"error": r.error} if r.error else {})} for r in runs]
    screen = [r.value for r in runs if r.seed in o.screen and r.sound]
    e["metric"] = metrics.interval(screen)
    e["sound"] = all(r.sound for r in runs if r.seed in o.screen)
    return e


def _scheme_entries(starts: list[Start], skips: list[Skip], pts: list[GridPoint], o: Outcome | None,
                    column: str) -> list[dict[str, Any]]:
    out = []
    for s in starts:
        e: dict[str, Any] = {"scheme": s.scheme, "name": words.name(s.scheme), "start": s.params, "rule": s.rule,
                             "source": s.source, "points": [_point_entry(p, o, column) for p in pts
                                                            if p.scheme == s.scheme]}
        if s.note:
            e["note"] = s.note
        if o is not None:
            c = o.candidates.get(s.scheme)
            e["candidate"] = c.as_dict() if c else None
            e["race"] = ("winner" if s.scheme == o.leader and o.end in ("decisive", "sole") else
                         f"out: {o.out[s.scheme][0]}" if s.scheme in o.out else
                         "in the race" if s.scheme in o.alive else "no sound point")
            d = o.out.get(s.scheme, (None, None))[1]
            if d is not None:
                e["race_difference"] = d.as_dict()
            if c:
                e["candidate_value"] = metrics.interval(o.values(c).values())
        out.append(e)
    out += [{"scheme": k.scheme, "name": words.name(k.scheme), "skipped": k.why} for k in skips]
    return out


def point_metrics(o: Outcome, p: GridPoint, net: Network) -> dict[str, Any]:
    runs = [metrics.run_metrics(r.dir, net) for r in o.point_runs(p) if r.sound]
    drop_places = sorted({k for m in runs for k in m["drops"]["at"]})
    for m in runs:  # a place without drops in a run: 0 there
        m["drops"]["at"] = {k: m["drops"]["at"].get(k, 0) for k in drop_places}
    return metrics.aggregate(runs)


def compose(out: Path, inp: Inputs, net: Network, starts: list[Start], skips: list[Skip], pts: list[GridPoint],
            o: Outcome | None, engine: str) -> dict[str, Any]:
    """Write the advice into ``out`` and return ``advice.json``'s content."""
    from . import final_scenario
    from .report import write_advice_report

    sw = switch_of(net, inp.buffer is not None)
    column = METRICS[inp.metric][0]
    verdict, best = conclude(o, inp, net, sw)
    schemes = _scheme_entries(starts, skips, pts, o, column)
    cm = {s: point_metrics(o, p, net) for s, p in o.candidates.items()} if o else {}
    for e in schemes:
        if e["scheme"] in cm:
            e["candidate_metrics"] = cm[e["scheme"]]
    off = max((m.get("drops", {}).get("marks_off_ecn_queues", {}).get("mean") or 0 for m in cm.values()), default=0)
    if off:
        net.notes.append(f"the simulation marks every queue (a scheme has no per-queue switch in ecnlab), and queues "
                         f"without ECN in the files were marked {off:.3g} times per run: their traffic saw marking "
                         f"the switch will not do")
    rec = None
    if best is not None:
        p = o.candidates[best]
        rec = {"scheme": best, "name": words.name(best), "params": p.params, "label": p.label, "factor": p.factor,
               "metrics": cm[best]}
        rival = next((s for s, p2 in o.candidates.items() if s != best and p2.label == verdict.versus), None)
        if rival:
            rp = o.candidates[rival]
            rec["versus"] = {"scheme": rival, "label": rp.label, "params": rp.params, "metrics": cm[rival]}
    order = ([(best, o.candidates[best].params)] if best else []) + sorted(
        ((s, p.params) for s, p in (o.candidates.items() if o else ()) if s != best),
        key=lambda sp: min((r.value for r in o.point_runs(o.candidates[sp[0]]) if r.sound), default=1e300))
    order += [(s.scheme, s.params) for s in starts if s.scheme not in {x for x, _ in order}]
    edges = {s: e for s, p in (o.candidates.items() if o else ()) if (e := _edge(p, pts))}
    if best in edges:
        p = o.candidates[best]
        net.notes.append(f"{p.label} is the {edges[best]} point swept ({p.factor:g} x its rule): the best threshold may "
                         f"lie {'below' if edges[best] == 'lowest' else 'above'} it")
    unchecked = None if best is not None else "--validate none" if o is None else f"validation gave no answer: {o.why_end}"
    config = write_configs(out / "config", list(inp.platforms), order, sw, unchecked=unchecked, edges=edges) if order else {}
    if "sonic" in inp.platforms and config.get("sonic", {}).get("scheme"):
        from .platforms.sonic import render_legacy

        s = config["sonic"]["scheme"]
        (out / "config" / "sonic-config_db-legacy.json").write_text(render_legacy(s, dict(order)[s], sw))
    advice = {"verdict": verdict.as_dict(), "inputs": record(inp), "network": net.describe(),
              "validation": {"engine": engine, "metric": {"name": inp.metric, "column": column,
                                                                       "words": METRICS[inp.metric][1]},
                             "screening_seeds": o.screen if o else [], "end": o.end if o else "none",
                             "discarded_seeds": {str(k): v for k, v in o.discarded.items()} if o else {},
                             "edges": edges,
                             "why_end": o.why_end if o else "", "race": o.history if o else [],
                             "flows_per_run": _flows(net)},
              "soundness": {**soundness_of(o), "rules": _rules_text()},
              "schemes": schemes, "recommendation": rec, "config": config}
    if rec or starts:
        scheme, params = (rec["scheme"], rec["params"]) if rec else (starts[0].scheme, starts[0].params)
        (out / "scenario.toml").write_text(final_scenario(net, scheme, params, f"ecnlab advise: {verdict.text}"))
    (out / "advice.json").write_text(json.dumps(advice, indent=2, default=str) + "\n")
    write_advice_report(out, advice)
    return advice


def _edge(p: GridPoint, pts: list[GridPoint]) -> str | None:
    fs = sorted(x.factor for x in pts if x.scheme == p.scheme and not x.skip)
    if len(fs) < 2:
        return None
    return "lowest" if p.factor == fs[0] else "highest" if p.factor == fs[-1] else None


def _flows(net: Network) -> int:
    return sum(int(t.get("flows", 0)) for t in net.doc.get("traffic", []) if t.get("kind", "poisson") == "poisson")


def _rules_text() -> str:
    from .sound import rules_in_words

    return rules_in_words()
