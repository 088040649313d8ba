"""`ecnlab list --keys` and `ecnlab schema`: one source (the Rust config structs) for the key
list, the editors' JSON Schema and the parser."""

import json
import tomllib

import jsonschema
import pytest

from conftest import run_cli
from ecnlab import _core, keys
from ecnlab.scenario import builtin_names, builtin_path

SCHEMA = keys.schema()
VALIDATOR = jsonschema.Draft7Validator(SCHEMA)
KEYS = keys.keys(SCHEMA)


def _dotted(doc, prefix="", out=None):
    """Every key of a scenario document as `--set` and `list --keys` write it (N for a list
    index), values not descended into when they are not tables."""
    out = set() if out is None else out
    for k, v in doc.items():
        key = f"{prefix}.{k}" if prefix else k
        if isinstance(v, dict):
            _dotted(v, key, out)
        elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            for x in v:
                _dotted(x, f"{key}.N", out)
        else:
            out.add(key)
    return out


def _builtin(name):
    return tomllib.loads(builtin_path(name).read_text())


def test_the_schema_is_a_valid_draft_07_schema():
    jsonschema.Draft7Validator.check_schema(SCHEMA)
    out = run_cli("schema").stdout
    assert json.loads(out) == SCHEMA


@pytest.mark.parametrize("name", builtin_names())
def test_every_builtin_key_is_listed_and_valid_against_the_schema(name):
    doc = _builtin(name)
    listed = {k.key for k in KEYS}
    missing = _dotted(doc) - listed
    assert not missing, f"{name}: keys not in list --keys: {sorted(missing)}"
    errors = [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in VALIDATOR.iter_errors(doc)]
    assert not errors, f"{name}: {errors[:5]}"


def test_list_keys_prints_every_key_with_type_and_default():
    out = run_cli("list", "--keys").stdout
    for k in KEYS:
        assert f"  {k.key} " in out, k.key
    for line in ["topology.link_rate", "traffic.N.load", "rtt_variation.delay.dist", "probes.N.interval",
                 "transport.sack", "marking.dualq.scalable.min_th", "metrics.warmup"]:
        assert line in out, line
    tcn = next(line for line in out.splitlines() if line.lstrip().startswith("marking.tcn.threshold "))
    assert 'time = "78us"' in tcn and "Sojourn" in tcn
    # Profiles: a key only one profile takes is marked, and --profile shows that profile.
    assert "[linux]" in next(line for line in out.splitlines() if "transport.sack " in line)
    tb = run_cli("list", "--keys", "--profile", "textbook").stdout
    assert "transport.sack " not in tb and "transport.partial_ack_rto " in tb
    assert 'time = "5ms"' in next(line for line in tb.splitlines() if "transport.rto_min " in line)
    # -v: whole doc comments, and each documented choice of an enum.
    v = run_cli("list", "--keys", "-v").stdout
    assert "ecn_sharp: ECN#" in v and "RFC 6298 §2.4 suggests 1 s" in v


def test_every_key_has_a_description():
    # A doc comment on the Rust field is its description: a new field needs one.
    bare = [k.key for k in KEYS if not k.description.strip()]
    assert not bare, bare


@pytest.mark.parametrize("edit", [
    ("marking", "tcn", "treshold"),  # a misspelt key inside a scheme's table
    ("topology", "hostz"),  # inside a tagged table
    ("switch", "bufer"),
    ("flows", 0, "szie"),
    ("transport", "sak"),
])
def test_a_misspelt_key_is_rejected_by_the_schema(edit):
    doc = _builtin("tcn-static")
    node = doc
    for part in edit[:-1]:
        node = node[part]
    node[edit[-1]] = "1us"
    assert not VALIDATOR.is_valid(doc)


def test_the_schema_refuses_what_the_parser_refuses():
    doc = _builtin("tcn-static")
    bad = [("marking", "scheme", "tcnn"), ("marking", "tcn", "threshold", 100), ("topology", "kind", "stra"),
           ("transport", "partial_ack_rto", "impatient")]  # a textbook-only key under linux
    for *path, value in bad:
        d = json.loads(json.dumps(doc))
        node = d
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = value
        assert not VALIDATOR.is_valid(d), path
        with pytest.raises(ValueError):
            _core.validate_json(json.dumps(d))
    d = json.loads(json.dumps(doc))
    d["transport"] = {"profile": "textbook", "partial_ack_rto": "impatient"}
    assert VALIDATOR.is_valid(d)


@pytest.mark.parametrize("kind, ok, bad", [
    ("time", ["78us", "1.5ms", "0", "10 s", "1min", "2µs", "1e3ns"], ["100", "5 parsecs", "-1us", "", "us"]),
    ("size", ["96KB", "1.5KiB", "65p", "0", "4MB"], ["96", "1Kb", "-3KB"]),
    ("rate", ["10Gbps", "25G", "100Mbit", "1Gbit/s", "0"], ["10", "1GBps", "fast"]),
])
def test_unit_patterns_agree_with_the_parser(kind, ok, bad):
    name = {"time": "Duration", "size": "ByteSize", "rate": "Rate"}[kind]
    v = jsonschema.Draft7Validator(SCHEMA["definitions"][name])
    for text in ok:
        assert v.is_valid(text), text
        if not text.endswith("p"):  # packets need a scenario's MTU
            _core.parse_unit(kind, text)
    for text in bad:
        assert not v.is_valid(text), text
        with pytest.raises(ValueError):
            _core.parse_unit(kind, text)
    assert v.is_valid(0) and not v.is_valid(100)


def test_schema_defaults_equal_the_cores():
    by_key = {k.key: k for k in KEYS}
    rows = []

    def flatten(prefix, v):
        if isinstance(v, dict):
            for k, x in v.items():
                flatten(f"{prefix}.{k}" if prefix else k, x)
        else:
            rows.append((prefix, v))

    flatten("", json.loads(_core.defaults_json()))
    assert len(rows) > 80
    for key, value in rows:
        assert key in by_key, key
        assert by_key[key].default == value, (key, by_key[key].default, value)


def test_a_key_left_out_of_a_written_table_gets_the_listed_default():
    # Each table written empty (`[marking.tcn]` and nothing under it) in a scenario that
    # writes no other: serde fills it from the type's defaults, which must be the ones
    # `list --keys` shows (an absent table's are checked above).
    by_key = {k.key: k for k in KEYS}
    base = {k: v for k, v in _builtin("tcn-static").items()
            if k not in ("switch", "marking", "transport", "host", "metrics")}

    def tables(v, path=()):
        if isinstance(v, dict):
            if path:
                yield path
            for k, x in v.items():
                yield from tables(x, (*path, k))

    checked = 0
    for path in tables(json.loads(_core.defaults_json())):
        doc = json.loads(json.dumps(base))
        node = doc
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = {}
        got = json.loads(_core.resolve_json(json.dumps(doc)))
        for part in path:
            got = got[part]
        for k, v in got.items():
            key = ".".join((*path, k))
            if key in by_key and not isinstance(v, dict):
                assert v == by_key[key].default, (key, v, by_key[key].default)
                checked += 1
    assert checked > 80
