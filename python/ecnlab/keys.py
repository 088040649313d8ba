"""Every key of a scenario file (`ecnlab list --keys`), read from the core's JSON Schema
(`ecnlab schema`, `_core.schema_json`), which is derived from the Rust config structs: their
doc comments are the descriptions, their defaults the defaults. Nothing here knows a key by
name, so the list, an editor's schema and the parser cannot disagree."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from . import _core

#: A key without a default: the file must give it.
REQUIRED = object()

_UNITS = {"Duration": "time", "ByteSize": "size", "Rate": "rate"}


@dataclass(frozen=True)
class Key:
    key: str  # as --set writes it; N stands for a list index (flows.N.size)
    type: str  # time, size, rate, fraction, integer, number, bool, string, a | b, list of ...
    default: Any  # REQUIRED, None (none), or the value as in a scenario file
    description: str  # the whole doc comment
    when: str = ""  # "kind = star": the key belongs to one variant of a tagged table
    profile: str = ""  # "linux" / "textbook": a [transport] key only that profile takes
    textbook_default: Any = REQUIRED  # where `textbook`'s default differs from `default`
    choices: tuple = ()  # (value, description) of each documented choice of an enum

    def summary(self) -> str:
        """The description's first sentence (two when the first only says "`linux` only.")."""
        text = self.description.strip().split("\n\n")[0].replace("\n", " ")
        out = ""
        while text and len(out) < 20:
            m = _SENTENCE.match(text)
            part, text = (m.group(1), text[m.end():]) if m else (text, "")
            out = f"{out} {part}".strip()
        return out


# A sentence ends at a full stop followed by a capital, a backquote or the end (not "e.g.",
# "Alg. 1", "Eq. 3").
_SENTENCE = re.compile(r"(.+?(?<!e\.g)(?<!i\.e)\.)(\s+(?=[A-Z`(\"])|\s*$)")


def schema() -> dict:
    return json.loads(_core.schema_json())


def keys(sch: dict | None = None) -> list[Key]:
    """Every key, in the order of the schema (the structs' field order)."""
    sch = sch or schema()
    out: list[Key] = []
    _walk(sch, sch, "", out, "")
    return out


def _deref(sch: dict, node: dict) -> tuple[dict, str]:
    """The schema `node` stands for, and its definition name if it is one: through `$ref`,
    a one-element `allOf` and an optional's `anyOf [X, null]`, keeping `node`'s own
    description and default."""
    own = {k: node[k] for k in ("description", "default") if k in node}
    name = ""
    while True:
        if "$ref" in node:
            name = node["$ref"].rsplit("/", 1)[-1]
            node = sch["definitions"][name]
        elif len(node.get("allOf", ())) == 1:
            node = node["allOf"][0]
        elif "anyOf" in node and any(x.get("type") == "null" for x in node["anyOf"]):
            rest = [x for x in node["anyOf"] if x.get("type") != "null"]
            if len(rest) != 1:
                break
            node = rest[0]
        else:
            break
    return {**node, **own}, name


def _tag(node: dict) -> str | None:
    """The tag of an internally tagged enum (`kind`, `dist`), or None."""
    variants = node.get("oneOf") or []
    if not variants or not all(v.get("type") == "object" for v in variants):
        return None
    tags = {k for k, p in variants[0].get("properties", {}).items() if "const" in p}
    return next(iter(tags)) if len(tags) == 1 else None


def type_name(sch: dict, node: dict) -> str:
    node, name = _deref(sch, node)
    if name in _UNITS:
        return _UNITS[name]
    if "enum" in node:
        return " | ".join(map(str, node["enum"]))
    if "oneOf" in node and all("const" in v or "enum" in v for v in node["oneOf"]):
        return " | ".join(str(c) for v in node["oneOf"] for c in v.get("enum", [v.get("const")]))
    if "anyOf" in node:
        kinds = {x.get("type") for x in node["anyOf"]}
        if kinds == {"number", "string"}:
            return "fraction"
        return " or ".join(type_name(sch, x) for x in node["anyOf"])
    t = node.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), "null")
    if t == "array":
        items = node.get("items", node.get("prefixItems"))
        if isinstance(items, list):
            return "list of [" + ", ".join(type_name(sch, x) for x in items) + "]"
        return "list of " + (type_name(sch, items) if items else "values")
    return {"boolean": "bool", "object": "table"}.get(t, t or "value")


def _choices(sch: dict, node: dict) -> tuple:
    node, _ = _deref(sch, node)
    return tuple((v["const"], v["description"]) for v in node.get("oneOf", ())
                 if "const" in v and v.get("description"))


def _walk(sch: dict, node: dict, prefix: str, out: list, when: str) -> None:
    node, _ = _deref(sch, node)
    tag = _tag(node)
    if tag:  # a tagged table: the tag, then each variant's keys
        choices = [v["properties"][tag]["const"] for v in node["oneOf"]]
        desc = node.get("description", "")
        out.append(Key(f"{prefix}.{tag}", " | ".join(choices), REQUIRED, desc, when))
        for v in node["oneOf"]:
            _walk(sch, {**v, "properties": {k: p for k, p in v["properties"].items() if k != tag}},
                  prefix, out, f"{tag} = {v['properties'][tag]['const']}")
        return
    required = set(node.get("required", ()))
    for k, p in node.get("properties", {}).items():
        key = f"{prefix}.{k}" if prefix else k
        q, q_name = _deref(sch, p)
        desc = p.get("description") or ("" if q_name in _UNITS else q.get("description", ""))
        items = q.get("items")
        if q.get("properties") or _tag(q):
            _walk(sch, p, key, out, when)
        elif q.get("type") == "array" and isinstance(items, dict) and _is_table(sch, items):
            _walk(sch, items, f"{key}.N", out, when)
        else:
            # A leaf's own default is what a key left out gets, whether its table is written
            # or not (tests/test_keys_schema.py checks both against the core).
            default = p["default"] if "default" in p else REQUIRED if k in required else None
            out.append(Key(key, type_name(sch, p), default, desc, when, p.get("x-profile", ""),
                           p.get("x-textbook-default", REQUIRED), _choices(sch, p)))


def _is_table(sch: dict, node: dict) -> bool:
    node, _ = _deref(sch, node)
    return bool(node.get("properties")) or _tag(node) is not None


def show_default(k: Key, profile: str | None = None) -> str:
    d = k.default
    if profile == "textbook" and k.textbook_default is not REQUIRED:
        d = k.textbook_default
    if d is REQUIRED:
        return "(required)"
    if d is None:
        return "(none)"
    text = json.dumps(d, ensure_ascii=False)
    if profile is None and k.textbook_default is not REQUIRED:
        text += f" (textbook: {json.dumps(k.textbook_default, ensure_ascii=False)})"
    return text


def render(profile: str | None = None, verbose: bool = False) -> list[str]:
    """The lines of `ecnlab list --keys [--profile P] [-v]`."""
    ks = [k for k in keys() if not (profile and k.profile and k.profile != profile)]
    w = max(len(k.key) for k in ks)
    lines = [
        "Keys of a scenario file, and of --set (N: a list index, flows.0.size; 'kind = ...': only",
        "in that kind of table; [linux]/[textbook]: a [transport] key only that profile takes):",
    ]
    for k in ks:
        notes = [f"[{k.when}]"] if k.when else []
        if k.profile:
            notes.append(f"[{k.profile}]")
        head = f"  {k.key:<{w}}  {k.type} = {show_default(k, profile)}"
        lines.append(f"{head}  {' '.join(notes + [k.summary()])}".rstrip())
        if verbose and k.description.strip() and k.description.strip() != k.summary():
            for para in k.description.strip().split("\n"):
                lines.append(f"  {'':<{w}}      {para}")
        if verbose:
            for value, desc in k.choices:
                lines.append(f"  {'':<{w}}      {value}: {' '.join(desc.split())}")
    return lines
