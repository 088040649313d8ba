"""Scenario files: finding them, reading them, and applying ``--set key=value`` overrides.

A scenario is a TOML document (see ``ecnlab list --keys`` and the built-ins in
``ecnlab/scenarios/``), or the same document as JSON (a ``.json`` file: a run's
``scenario.json``, run again). This module only reads TOML and edits the resulting dict; the typed
validation (unknown keys, wrong types, impossible values) happens once, in the Rust core,
so the same rules hold for the CLI, the Python API and sweeps.
"""

from __future__ import annotations

import copy
import difflib
import json
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any, Iterable

# The error of every wrong input, and the readers' limits (inputs.py), under the names
# this module has always given them.
from .inputs import TOO_DEEP, ScenarioError, check_plain  # noqa: F401
from .inputs import parse_json, parse_toml, read_text


def _builtin_dir() -> Path:
    return Path(str(resources.files("ecnlab") / "scenarios"))


def builtin_names() -> list[str]:
    """Names of the built-in scenarios, sorted."""
    return sorted(p.stem for p in _builtin_dir().glob("*.toml"))


def builtin_path(name: str) -> Path:
    return _builtin_dir() / f"{name}.toml"


def load(name_or_path: str | Path) -> dict[str, Any]:
    """Read a scenario from a file path or a built-in name."""
    p = Path(name_or_path)
    try:
        exists = p.exists() or p.is_symlink()  # a dangling or looping link: the reader says which
    except (OSError, ValueError):  # a name too long for a path, a NUL byte: no such file
        exists = False
    if not exists:
        name = str(name_or_path)
        if name in builtin_names():
            p = builtin_path(name)
        else:
            near = difflib.get_close_matches(name, builtin_names(), n=1)
            hint = f" (did you mean '{near[0]}'?)" if near else f" (built-in: {', '.join(builtin_names())})"
            raise ScenarioError(f"no scenario file or built-in scenario named '{name}'{hint}")
    text = read_text(p, "scenario")
    if p.suffix == ".json":  # a run's scenario.json, to run again: the same document as the TOML gives
        doc = parse_json(text, str(p))
        if not isinstance(doc, dict):
            raise ScenarioError(f"{p}: a scenario is a JSON object (a table), not {type(doc).__name__}")
    else:
        doc = parse_toml(text, str(p))
    try:
        check_plain(doc)
    except ValueError as e:
        raise ScenarioError(f"{p}: {e}") from None
    _resolve_paths(doc, p.resolve().parent)
    return doc


def _resolve_paths(doc: dict[str, Any], base: Path) -> None:
    """Files a scenario names (a CDF, a trace, a traffic matrix, a topology file) are
    relative to the scenario file."""
    tables = doc.get("traffic", []) if isinstance(doc.get("traffic"), list) else []
    if isinstance(doc.get("topology"), dict):
        tables = [*tables, doc["topology"]]
    for t in tables:
        if not isinstance(t, dict):
            continue
        for key in ("cdf", "file", "matrix"):
            v = t.get(key)
            if isinstance(v, str) and ("/" in v or "." in v) and not Path(v).is_absolute():
                cand = base / v
                try:
                    if cand.exists():
                        t[key] = str(cand)
                except OSError:  # e.g. a name too long for a path: the core says what is wrong
                    pass


def _parse_value(text: str) -> Any:
    """A TOML literal (number, bool, string, array, inline table), else the raw string.
    RecursionError for arrays nested ~1,000 deep (the caller names the key)."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except ValueError:  # not TOML (TOMLDecodeError), or an integer of more than 4300 digits
        return text


def set_key(doc: dict[str, Any], assignment: str) -> None:
    """Apply one ``a.b.c=value`` override in place. List elements are addressed by index
    (``flows.1.count=16``)."""
    if "=" not in assignment:
        raise ScenarioError(f"--set {assignment}: expected key=value")
    key, raw = assignment.split("=", 1)
    key = key.strip()
    parts = key.split(".")
    if not key or any(not s for s in parts):
        raise ScenarioError(f"--set {assignment}: empty key")
    node: Any = doc
    for i, part in enumerate(parts[:-1]):
        where = ".".join(parts[: i + 1])
        if isinstance(node, list):
            node = node[_index(node, part, where)]
        elif isinstance(node, dict):
            if part not in node:
                node[part] = {}
            node = node[part]
        else:
            raise ScenarioError(f"--set {key}: '{'.'.join(parts[:i])}' is a value, not a table")
        if not isinstance(node, (dict, list)):
            raise ScenarioError(f"--set {key}: '{where}' is a value, not a table")
    last = parts[-1]
    try:
        value = _parse_value(raw.strip())
        check_plain(value, key)
    except RecursionError:
        raise ScenarioError(f"--set {key}: {TOO_DEEP}") from None
    except ValueError as e:
        raise ScenarioError(f"--set {e}") from None
    if isinstance(node, list):
        node[_index(node, last, key)] = value
    else:
        node[last] = value


def _index(lst: list, part: str, where: str) -> int:
    try:
        i = int(part)
    except ValueError:
        raise ScenarioError(f"--set {where}: '{part}' is not a list index") from None
    if not -len(lst) <= i < len(lst):
        raise ScenarioError(f"--set {where}: index {i} out of range (the list has {len(lst)} entries)")
    return i


def with_overrides(doc: dict[str, Any], assignments: Iterable[str]) -> dict[str, Any]:
    """A copy of ``doc`` with every override applied, in order."""
    out = copy.deepcopy(doc)
    for a in assignments:
        set_key(out, a)
    return out


def to_json(doc: dict[str, Any]) -> str:
    """The document as the core reads it; ValueError (``check_plain``) for what it cannot hold."""
    check_plain(doc)
    return json.dumps(doc, allow_nan=False)


def describe(name: str) -> tuple[str, str]:
    """(description, claim) of a built-in scenario."""
    d = load(name)
    return d.get("description", ""), d.get("claim", "")
