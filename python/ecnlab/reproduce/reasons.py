"""Why a claim is not shown: ``results/reasons.toml``, one ``[[reason]]`` per claim the
committed results do not show, keyed by entry, claim id and the scale it was judged at, with
a category (``WHY``) and a text with numbers.

A reason that blames the paper carries its evidence: "cannot hold" and "under-specified"
quote the paper's sentence they rest on (``quote``, verbatim: the tests find it in the
paper's text where the papers are at hand) or say what the paper leaves out and where it was
looked for (``absent``). Where the paper does state the set-up, the reason is "unexplained"
and gives the numbers. The file is written by whoever reads the results, not computed;
``reasons_problems`` lists the claims without one and the reasons whose claim is now shown, so that
it cannot silently go stale."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..inputs import ScenarioError, parse_toml, read_text

REASONS = "reasons.toml"
WHY = {"cannot-hold": "the paper's claim cannot hold as stated",
       "under-specified": "the paper leaves the set-up it depends on unstated",
       "unexplained": "a difference ecnlab cannot explain",
       "scale": "too few flows or seeds at this scale to judge",
       "unsound-baseline": "it rests on an unsound baseline"}
# Categories that blame the paper, so must show the sentence or the absence they rest on.
NEEDS_EVIDENCE = ("cannot-hold", "under-specified")
#: The status a reason explains: "undecided" says why itself (the interval straddles the
#: band: more seeds), "not evaluated" and "not run" say what is missing in their note.
UNJUDGED = ("not shown",)
_PAPERS = ("tcn", "ecnsharp", "dualq")


def load_reasons(root: str | Path) -> dict[tuple[str, str, str], dict[str, str]]:
    """``root/reasons.toml`` as {(entry, claim, scale): {"category", "text", and "quote" (with
    "paper") or "absent"}} (empty without the file); a malformed entry raises ScenarioError."""
    path = Path(root) / REASONS
    if not path.exists():
        return {}
    doc = parse_toml(read_text(path, "reasons"), str(path))
    unknown = [k for k in doc if k != "reason"]
    if unknown:
        raise ScenarioError(f"{path}: unknown key `{unknown[0]}`: the file holds [[reason]] tables only")
    reasons = doc.get("reason", [])
    if not isinstance(reasons, list):
        raise ScenarioError(f"{path}: reason: expected [[reason]] tables, found a single value or table")
    out = {}
    for i, r in enumerate(reasons):
        where = f"{path}: reason[{i}]"
        if not isinstance(r, dict):
            raise ScenarioError(f"{where}: expected a table (entry, claim, scale, category, text)")
        missing = [k for k in ("entry", "claim", "scale", "category", "text") if not isinstance(r.get(k), str)]
        if missing:
            raise ScenarioError(f"{where}: missing or not text: {', '.join(missing)}")
        if r["category"] not in WHY:
            raise ScenarioError(f"{where}.category: '{r['category']}' is not one of {', '.join(WHY)}")
        if r["category"] in NEEDS_EVIDENCE and not (isinstance(r.get("quote"), str) or isinstance(r.get("absent"), str)):
            raise ScenarioError(f"{where}: a '{r['category']}' reason blames the paper: give the sentence it rests on "
                                "(quote) or what the paper leaves out and where it was looked for (absent)")
        if "quote" in r and r.get("paper") not in _PAPERS:
            raise ScenarioError(f"{where}.paper: the quote's paper, one of {', '.join(_PAPERS)}")
        key = (r["entry"], r["claim"], r["scale"])
        if key in out:
            raise ScenarioError(f"{where}: a second reason for {'/'.join(key)}")
        out[key] = {k: r[k] for k in ("category", "text", "quote", "paper", "absent") if k in r}
    return out


def reasons_problems(reasons: dict[tuple[str, str, str], dict[str, str]], claims: list[dict[str, Any]],
                     scales: dict[str, str]) -> list[str]:
    """Claims (with their ``experiment``) not shown without a reason, and reasons that name no
    such claim at the scale shown: empty when the file is current."""
    unjudged = {(c["experiment"], c["id"], scales[c["experiment"]]) for c in claims if c["status"] in UNJUDGED}
    return ([f"{'/'.join(k)}: not shown, no reason in {REASONS}" for k in sorted(unjudged - reasons.keys())]
            + [f"{'/'.join(k)}: a reason, but the claim is shown or absent" for k in sorted(reasons.keys() - unjudged)])


def text(why: dict[str, str]) -> str:
    """A reason as the tables lead a claim's note with it, its evidence quoted."""
    t = f"Why not shown ({why['category']}: {WHY[why['category']]}): {why['text']}"
    if why.get("quote"):
        t += f' (the paper: "{why["quote"]}")'
    elif why.get("absent"):
        t += f" (the paper does not say: {why['absent']})"
    return t
