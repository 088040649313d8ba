"""The recommendation as each target platform takes it: one file per platform, in the
platform's own units and grammar, for the operator's switch as described (queues, strict and
weighted ones with their weights, the DSCP map, which queues carry ECN, the ports).

Each file begins with a one-line human summary of what it sets ("TCN, T = 20 us on queues
1-7") and lists what it could not express; SONiC's config_db JSON cannot hold a comment at
its top level (only tables), so its summary and notes are in ``config/NOTES.md``, which
repeats every file's. A scheme a platform cannot express (sojourn-time marking on a
queue-length-only platform; MQ-ECN and the dual AQM anywhere) gets the best validated scheme
that platform can express instead, and the file says so.

One module per platform, each with the documentation it follows in its docstring: ``tc``
(tc-ets(8), tc-red(8), tc-codel(8), tc-u32(8)), ``sonic`` (the SONiC YANG models),
``junos`` (Junos class-of-service), ``nvue`` (Cumulus Linux 5 NVUE)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import words

PLATFORMS = ("sonic", "tc", "nvue", "junos")
FILES = {"sonic": "sonic-config_db.json", "tc": "tc.sh", "nvue": "nvue.sh", "junos": "junos.conf"}
QUEUE_LENGTH = ("per_queue", "dctcp_red", "red")  # schemes on a queue's bytes
SOJOURN = ("tcn", "ecn_sharp", "codel")


@dataclass
class Switch:
    """The operator's switch as the files configure it."""

    queues: int
    scheduler: str
    strict: tuple[int, ...]
    weights: dict[int, int]
    ecn_queues: tuple[int, ...]
    dscp_to_queue: list[int]
    default_queue: int
    buffer_bytes: int
    rate_bps: int
    ports: tuple[str, ...]
    quantum_bytes: int = 1500
    buffer_given: bool = True


@dataclass
class Rendered:
    """One platform's file: its text, and what it could not express."""

    text: str
    summary: str
    missing: list[str] = field(default_factory=list)


def summary(scheme: str, params: dict[str, Any], sw: Switch) -> str:
    """``TCN, T = 20 us on queues 1-7``."""
    return f"{words.name(scheme)}, {words.params(params)} on {words.queues(sw.ecn_queues)}"


def supports(platform: str, scheme: str, sw: Switch | None = None) -> str | None:
    """None if the platform can express the scheme, else why not."""
    if scheme == "mq_ecn":
        return "MQ-ECN's per-queue threshold follows the scheduler's round time; no platform here has it"
    if scheme == "dualq":
        return "the dual AQM's two RED instances in one queue, by ECN capability, have no equivalent here"
    if scheme not in QUEUE_LENGTH + SOJOURN:
        return f"{scheme} has no equivalent here"
    if platform in ("sonic", "nvue") and scheme not in QUEUE_LENGTH:
        return (f"{'SONiC WRED_PROFILE' if platform == 'sonic' else 'NVUE congestion-control'} marks on a queue's "
                f"length (bytes) only; {words.name(scheme)} marks on sojourn time")
    if platform == "junos" and scheme == "codel":
        return "Junos latency-ecn is an instantaneous sojourn threshold; CoDel's control law has no equivalent"
    if platform == "junos" and scheme in QUEUE_LENGTH and sw is not None and not sw.buffer_given:
        return ("Junos drop profiles take fill levels in percent of a queue's buffer; give the port buffer "
                "(--buffer) to compute them")
    return None


def render(platform: str, scheme: str, params: dict[str, Any], sw: Switch) -> Rendered:
    from . import junos, nvue, sonic, tc

    return {"sonic": sonic.render, "tc": tc.render, "nvue": nvue.render, "junos": junos.render}[platform](
        scheme, params, sw)


def _comment(platform: str, lines: list[str]) -> str:
    if platform == "junos":
        return "".join(f"/* {x.replace('*/', '* /')} */\n" for x in lines)
    return "".join(f"# {x}\n" for x in lines)


def write_configs(out_dir: Path, platforms: list[str], ranked: list[tuple[str, dict[str, Any]]], sw: Switch,
                  unchecked: str | None = None, edges: dict[str, str] | None = None) -> dict[str, dict[str, Any]]:
    """One file per platform for the best-ranked scheme it can express; ``ranked`` is
    (scheme, params) best first, ``edges`` the schemes whose best point is at the edge of the
    sweep ("lowest" / "highest"). ``unchecked`` says why no simulated check ranked them
    ("--validate none", or validation's "no answer"): they are then the papers' starting
    points, in the order asked for, and every file says so in its first lines. Returns
    {platform: {file, scheme, summary, note, missing}}."""
    validated = unchecked is None
    out_dir.mkdir(parents=True, exist_ok=True)
    result, notes_md = {}, ["# ecnlab advise: the platform files", ""]
    for plat in platforms:
        best = ranked[0][0]
        why = supports(plat, best, sw)
        pick = next(((s, p) for s, p in ranked if supports(plat, s, sw) is None), None)
        note = ""
        if why:
            first = f"the recommended {best}" if validated else f"{best} (the first of --schemes; {unchecked})"
            note = f"{first} has no equivalent on {plat}: {why}."
            edge = (edges or {}).get(pick[0]) if pick else None
            if pick and validated:
                note += f" The best validated scheme {plat} can express is {pick[0]}, below."
                if edge:
                    note += f" Its best point is the {edge} factor swept, so its optimum may lie beyond it."
            elif pick:
                note += (f" The first of --schemes {plat} can express is {pick[0]}, below, at its papers' starting "
                         f"point (unchecked).")
            else:
                note += f" None of the {'validated ' if validated else ''}schemes has one; nothing to configure."
        f = out_dir / FILES[plat]
        r = render(plat, *pick, sw) if pick else Rendered("", "nothing to configure")
        missing = ([note] if note else []) + r.missing
        if plat == "sonic":
            f.write_text(r.text or "{}\n")
        else:
            body = r.text
            shebang, rest = body.split("\n", 1) if body.startswith("#!") else ("", body)
            head = _comment(plat, [f"ecnlab advise: {r.summary}"]
                            + ([f"NOT VALIDATED ({unchecked}): the papers' starting point, not a recommendation"]
                               if r.text and not validated else [])
                            + (["What this file could not express:"] + [f"- {m}" for m in missing] if missing else []))
            f.write_text((shebang + "\n" if shebang else "") + head + rest)
        result[plat] = {"file": f"config/{f.name}", "scheme": pick[0] if pick else None, "summary": r.summary,
                        "note": note, "missing": missing, "unchecked": unchecked}
        unvalidated = [f"Not validated ({unchecked}): the papers' starting point, not a recommendation.", ""]
        notes_md += ([f"## {f.name}", "", r.summary, ""] + (unvalidated if not validated else [])
                     + (["Not expressed:", ""] + [f"- {m}" for m in missing] + [""] if missing else []))
    (out_dir / "NOTES.md").write_text("\n".join(notes_md))
    return result
