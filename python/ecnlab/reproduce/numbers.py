"""The papers' quoted numbers, each written once: ``papers/<paper>.toml`` holds one table per
number (value, unit, section, the sentence it is in, the baseline it is against, the point
it is at), and the catalog's claims, figures and notes read them from here (``TCN``,
``ECNSHARP``, ``DUALQ``: id -> ``Number``).

The quotes are verbatim (whitespace aside): ``tests/test_reproduce_numbers.py`` finds each in
the paper's text where the papers are at hand (``ECNLAB_PAPERS``, or a ``shared/papers``
folder beside the repository), and checks the tables' form everywhere."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

__all__ = ["Number", "load", "ratio_of", "similar_as", "TCN", "ECNSHARP", "DUALQ", "PAPERS", "normalized"]


@dataclass(frozen=True)
class Number:
    """One number a paper quotes. ``at``: the point of the entry's grid it is at (e.g.
    ``{"load": 0.9}``), None where the paper names none ("up to X %"); ``point_from``: how
    the point was read where the sentence itself does not give it."""

    id: str
    paper: str
    value: float
    unit: str
    section: str
    quote: str
    baseline: str | None = None
    at: dict[str, Any] | None = None
    point_from: str | None = None
    #: Half the last digit the paper prints (Table I's 0.0005), or what an adjective allows
    #: ("almost maximum"): no magnitude band is narrower.
    precision: float = 0.0
    #: The numbers of the tables this one is computed from (a ratio of two, a "similar"
    #: measured by the paper's own "within"), empty for a number of the tables.
    derived: tuple[str, ...] = ()
    file: str = field(default="", compare=False)

    def cite(self) -> str:
        """The section and the sentence, as a note ends with them."""
        return f'{self.section}: "{self.quote}"'

    def at_text(self) -> str:
        """The point in words, e.g. "load 90 %", "" without one."""
        if not self.at:
            return ""
        return ", ".join(f"load {v:.0%}" if k == "load" else f"{k} {v}" for k, v in self.at.items())


def normalized(text: str) -> str:
    """Whitespace collapsed: how a quote is matched against a paper's text."""
    return re.sub(r"\s+", " ", text).strip()


_FIELDS = {"value", "values", "unit", "units", "section", "quote", "baseline", "at", "point_from", "precision"}


def load(name: str) -> dict[str, Number]:
    """``papers/<name>.toml`` as id -> Number; a table of ``values`` (with ``units``) gives
    one Number per column, ``<id>.<column>``. A malformed table raises ValueError naming it."""
    doc = tomllib.loads(resources.files(__package__).joinpath("papers", f"{name}.toml").read_text())
    paper, file = doc["paper"], doc["file"]
    out: dict[str, Number] = {}
    for key, t in doc.items():
        if not isinstance(t, dict):
            continue
        extra = set(t) - _FIELDS
        missing = [f for f in ("section", "quote") if not isinstance(t.get(f), str) or not t[f].strip()]
        if extra or missing or (("value" in t) == ("values" in t)):
            raise ValueError(f"papers/{name}.toml: [{key}]: unknown {sorted(extra)}, missing {missing}, "
                             "or not exactly one of value / values")
        common = dict(paper=paper, section=t["section"], quote=t["quote"], baseline=t.get("baseline"),
                      at=t.get("at"), point_from=t.get("point_from"), precision=float(t.get("precision", 0.0)),
                      file=file)
        if "value" in t:
            out[key] = Number(id=key, value=float(t["value"]), unit=t["unit"], **common)
        else:
            for col, v in t["values"].items():
                out[f"{key}.{col}"] = Number(id=f"{key}.{col}", value=float(v), unit=t["units"][col], **common)
    return out


TCN = load("tcn")
ECNSHARP = load("ecnsharp")
DUALQ = load("dualq")
PAPERS = {"tcn": TCN, "ecnsharp": ECNSHARP, "dualq": DUALQ}


def ratio_of(new: Number, old: Number, id: str) -> Number:
    """A ratio of two quoted numbers (``new / old``), as a claim judges it: its sentence is
    theirs, its value computed, not written again."""
    quote = new.quote if new.quote == old.quote else f"{new.quote} ... {old.quote}"
    section = new.section if new.section == old.section else f"{new.section}, {old.section}"
    return Number(id=id, paper=new.paper, value=new.value / old.value, unit="ratio", section=section, quote=quote,
                  baseline=old.id, at=new.at or old.at, derived=(new.id, old.id), file=new.file)


def similar_as(word: Number, within: Number) -> Number:
    """A paper's "similar" (``word``: its sentence, no number) measured by the same paper's own
    "within X %" for such a comparison (``within``): judged as "within X %", the one rule of
    every "within". TCN quantifies it with its large flows' "within 2.8%" (§6.1.2), ECN# with
    its overall FCT's "within 4.2%" (§5.2.1)."""
    section = word.section if word.section == within.section else f"{word.section}, {within.section}"
    return Number(id=f"{word.id}~{within.id}", paper=word.paper, value=within.value, unit="%",
                  section=section, quote=word.quote, baseline=word.baseline,
                  at=word.at, derived=(word.id, within.id), file=word.file)
