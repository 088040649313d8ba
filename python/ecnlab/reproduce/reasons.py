"""``results/reasons.toml``: why each claim the committed results do not show is not.

One ``[[reason]]`` per claim, keyed by entry, claim id and the scale it was judged at,
with a category (``WHY``) and a text with numbers. It is written by whoever reads the
results, not computed; ``reasons_problems`` lists the claims without one and the reasons
whose claim is now shown, so that the file cannot silently go stale. The pages
(``report.py``) and the committed results (``results.py``) both read it here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..inputs import ScenarioError, parse_toml, read_text

REASONS = "reasons.toml"
# Why a claim is not shown: the categories issue 17 asks every such claim to carry.
WHY = {"cannot-hold": "the paper's claim cannot hold as stated",
       "under-specified": "the paper leaves the set-up it depends on unstated",
       "unexplained": "a difference ecnlab cannot explain",
       "scale": "too few flows or seeds at this scale to judge",
       "unsound-baseline": "it rests on an unsound baseline"}
UNJUDGED = ("not shown", "not evaluated")  # the statuses a claim needs a reason for


def load_reasons(root: str | Path) -> dict[tuple[str, str, str], dict[str, str]]:
    """``root/reasons.toml`` as {(entry, claim, scale): {"category", "text"}} (empty if the
    file does not exist); a malformed entry raises ScenarioError naming it."""
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
        key = (r["entry"], r["claim"], r["scale"])
        if key in out:
            raise ScenarioError(f"{where}: a second reason for {'/'.join(key)}")
        out[key] = {"category": r["category"], "text": r["text"]}
    return out


def reasons_problems(reasons: dict[tuple[str, str, str], dict[str, str]], claims: list[dict[str, Any]],
                     scales: dict[str, str]) -> list[str]:
    """Claims (as ``regenerate`` returns them) not shown or not evaluated without a reason, and
    reasons that name no such claim at the scale shown: empty when the file is current."""
    unjudged = {(c["experiment"], c["id"], scales[c["experiment"]]) for c in claims if c["status"] in UNJUDGED}
    return ([f"{'/'.join(k)}: not shown, no reason in {REASONS}" for k in sorted(unjudged - reasons.keys())]
            + [f"{'/'.join(k)}: a reason, but the claim is shown or absent" for k in sorted(reasons.keys() - unjudged)])
