"""Every kind of input file through its one reader (``ecnlab/inputs.py``): scenario files,
sweep files, advise's RTT file, the catalog's ``reasons.toml``, result directories given
to ``report``, trace CSVs (the core's reader). Special files, encodings, sizes, depth and
Python's integer digit limit, then property tests over generated damage: whatever the
damage, the command exits 2 with one line naming the file, or accepts the file; never an
internal error, a traceback or a hang."""

import contextlib
import io
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ecnlab.cli import main

from conftest import ECNLAB, ROOT, run_cli

SMALL = ["--set", "duration=2ms", "--set", "metrics.warmup=0s"]


def ecnlab(*args) -> tuple[int, str]:
    """``ecnlab ARGS`` in this process: (exit status, stderr)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            rc = main([str(a) for a in args])
        except SystemExit as e:  # argparse
            rc = e.code
    return rc, err.getvalue()


def assert_one_line(rc: int, err: str, names: str) -> None:
    assert rc == 2, (rc, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ecnlab: error: "), err
    assert names in lines[0], (names, err)
    assert "Traceback" not in err and "internal error" not in err


# --------------------------------------------------------------------------------------
# Special files and limits, for each kind


def _special(tmp_path: Path, kind: str) -> Path:
    p = tmp_path / f"special-{kind}"
    if kind == "fifo":
        os.mkfifo(p)
    elif kind == "dir":
        p.mkdir()
    elif kind == "zero":
        p.symlink_to("/dev/zero")
    elif kind == "loop":
        p.symlink_to(p)
    elif kind == "utf16":
        p.write_bytes("seed = 1\n".encode("utf-16"))
    elif kind == "latin1":
        p.write_bytes('name = "caf\xe9"\n'.encode("latin-1"))
    elif kind == "nul":
        p.write_bytes(b"seed = 1\n\0\n")
    elif kind == "huge":
        with open(p, "wb") as f:
            f.truncate(65 * 2**20)  # sparse: larger than any input file may be
    elif kind == "digits":
        p.write_text("seed = " + "9" * 5000 + "\n")
    elif kind == "deep":
        p.write_text("x = " + "[" * 5000 + "]" * 5000 + "\n")
    return p


SPECIAL = ["fifo", "dir", "zero", "loop", "utf16", "latin1", "nul", "huge", "digits", "deep"]


@pytest.mark.parametrize("kind", SPECIAL)
def test_a_scenario_file_that_is_no_scenario_is_one_line(tmp_path, kind):
    p = _special(tmp_path, kind)
    assert_one_line(*ecnlab("check", p), str(p))


@pytest.mark.parametrize("kind", SPECIAL)
def test_a_sweep_file_that_is_no_sweep_is_one_line(tmp_path, kind):
    p = _special(tmp_path, kind)
    assert_one_line(*ecnlab("sweep", p, "--dry-run"), str(p))


@pytest.mark.parametrize("kind", SPECIAL)
def test_an_rtt_file_that_is_no_rtt_file_is_one_line(tmp_path, kind):
    p = _special(tmp_path, kind)
    rc, err = ecnlab("advise", "--link-rate", "10Gbps", "--rtt-file", p, "--validate", "none", "--out",
                     tmp_path / "adv")
    assert_one_line(rc, err, str(p))
    assert not (tmp_path / "adv").exists()


def test_huge_integers_in_json_scenarios_are_one_line(tmp_path):
    """Python refuses to convert integers of more than 4300 digits: that was an internal
    error (ValueError), exit 1."""
    p = tmp_path / "big.json"
    p.write_text('{"seed": ' + "9" * 5000 + "}")
    assert_one_line(*ecnlab("check", p), "an integer of more than 100 digits")
    p.write_text('{"seed": ' + "9" * 200 + "}")
    assert_one_line(*ecnlab("check", p), "big.json: an integer of more than 100 digits")


def test_a_name_too_long_for_a_path_is_no_scenario(tmp_path):
    assert_one_line(*ecnlab("check", "a" * 5000), "no scenario file or built-in scenario named")


def test_an_rtt_file_of_comments_only_or_zero_samples_is_refused(tmp_path):
    p = tmp_path / "rtt.txt"
    p.write_text("# nothing measured\n\n")
    assert_one_line(*ecnlab("advise", "--link-rate", "10Gbps", "--rtt-file", p, "--validate", "none", "--out",
                            tmp_path / "a"), "no RTT samples")


@pytest.mark.parametrize("rtt", ["p50=0us,p99=100us", "min=0ns,p50=20us", "p50=20us,mean=0us"])
def test_rtt_percentiles_of_zero_are_refused_by_the_reader(tmp_path, rtt):
    """A zero percentile gave advice with zero thresholds, which `ecnlab run` then refused."""
    rc, err = ecnlab("advise", "--link-rate", "10Gbps", "--rtt", rtt, "--validate", "none", "--out", tmp_path / "a")
    assert_one_line(rc, err, "an RTT is positive")
    assert not (tmp_path / "a").exists()


def test_bidirectional_controls_are_escaped_in_the_error_line(tmp_path):
    """A right-to-left override echoed raw reorders the rest of the line on a terminal."""
    name = "evil\u202etxt.toml"
    rc, err = ecnlab("check", name)
    assert rc == 2 and "\u202e" not in err and "\\u{202e}" in err, err
    rc, err = ecnlab("sweep", "x.toml", "--jobs", "\u2066zero")  # argparse's own message
    assert rc == 2 and "\u2066" not in err and "\\u{2066}" in err, err


# --------------------------------------------------------------------------------------
# reasons.toml (where `reproduce --from` reads it)


@pytest.mark.parametrize("text, says", [
    ("reason = 3\n", "reason: expected [[reason]] tables"),
    ("reason = [1, 2]\n", "reason[0]: expected a table"),
    ("[reason]\nentry = 'x'\n", "reason: expected [[reason]] tables"),
    ("[[reason]]\nentry = 1\n", "missing or not text"),
    ("other = 1\n", "unknown key `other`"),
    ("reason = " + "[" * 3000 + "]" * 3000 + "\n", "nested more than 16"),
])
def test_a_damaged_reasons_file_is_one_line(tmp_path, text, says):
    from ecnlab.reproduce.reasons import load_reasons

    (tmp_path / "reasons.toml").write_text(text)
    from ecnlab.scenario import ScenarioError

    with pytest.raises(ScenarioError, match=says.replace("[", r"\[").replace("]", r"\]")):
        load_reasons(tmp_path)


def test_reasons_that_are_special_files_are_one_line(tmp_path):
    from ecnlab.reproduce.reasons import load_reasons
    from ecnlab.scenario import ScenarioError

    os.mkfifo(tmp_path / "reasons.toml")
    with pytest.raises(ScenarioError, match="not a regular file"):
        load_reasons(tmp_path)


# --------------------------------------------------------------------------------------
# Result directories given to `report`


@pytest.fixture(scope="module")
def a_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "r"
    run_cli("run", "tcn-static", *SMALL, "-q", "--out", out)
    return out


def _damaged_copy(a_run, tmp_path, name, content) -> Path:
    d = tmp_path / "r"
    shutil.copytree(a_run, d)
    if content is None:
        (d / name).unlink()
    else:
        (d / name).write_text(content) if isinstance(content, str) else (d / name).write_bytes(content)
    return d


SUMMARY_DAMAGE = [
    ("[]", "summary.json: a summary is a JSON object, not list"),
    ('{"scenario": "x"}', "missing field"),
    (None, "neither an ecnlab run"),
    ("{" * 3000 + "}" * 3000, "summary.json"),
    (b"\xff\xfe{}", "not UTF-8 text"),
    ("queues", "not valid JSON"),
]


@pytest.mark.parametrize("content, says", SUMMARY_DAMAGE)
def test_report_of_a_damaged_summary_is_one_line(a_run, tmp_path, content, says):
    d = _damaged_copy(a_run, tmp_path, "summary.json", content)
    assert_one_line(*ecnlab("report", d), says)
    assert not (d / "report.html").exists()


def test_report_of_a_summary_with_wrong_shapes_names_the_field(a_run, tmp_path):
    s = json.loads((a_run / "summary.json").read_text())
    s["queues"][0]["goodput_bps"] = "fast"
    d = _damaged_copy(a_run, tmp_path, "summary.json", json.dumps(s))
    assert_one_line(*ecnlab("report", d), "queues[0].goodput_bps")


@pytest.mark.parametrize("name, content, says", [
    ("flows.csv", "id,start_s,size,class,slowdown\n0,soon,1,0,1.0\n", "column 'start_s'"),
    ("timeseries.csv", "t_s,port,queue,avg_qlen_bytes,goodput_bps\n0,p,x,1,1\n", "column 'queue'"),
    ("flows.csv", b"id,start_s\n\xff\n", "not UTF-8"),
])
def test_report_of_damaged_csvs_is_one_line(a_run, tmp_path, name, content, says):
    d = _damaged_copy(a_run, tmp_path, name, content)
    assert_one_line(*ecnlab("report", d), says)


def test_report_of_a_damaged_sweep_table_is_one_line(tmp_path):
    d = tmp_path / "sw"
    d.mkdir()
    (d / "results.csv").write_bytes(b"scheme,seed,key,status\n\xff,1,k,ok\n")
    assert_one_line(*ecnlab("report", d), "results.csv: not UTF-8")


# --------------------------------------------------------------------------------------
# Trace CSVs (read by the core)


def test_a_trace_with_a_header_and_no_flow_is_refused(tmp_path):
    """It ran, with no traffic at all, into a complete-looking result."""
    trace = tmp_path / "flows.csv"
    trace.write_text("start,src,dst,size\n")
    scen = tmp_path / "t.toml"
    scen.write_text((ROOT / "python/ecnlab/scenarios/tcn-static.toml").read_text().split("[[flows]]")[0]
                    + '[[traffic]]\nkind = "trace"\nfile = "flows.csv"\n')
    rc, err = ecnlab("run", scen, "--out", tmp_path / "o", *SMALL)
    assert_one_line(rc, err, "a header and no flow")
    assert not (tmp_path / "o").exists()


# --------------------------------------------------------------------------------------
# Property tests: generated damage


def _valid_scenario_text() -> str:
    return (ROOT / "python/ecnlab/scenarios/tcn-static.toml").read_text()


VALUES = st.recursive(st.none() | st.booleans() | st.integers(min_value=-(10**130), max_value=10**130)
                      | st.floats(allow_nan=True) | st.text(max_size=20),
                      lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                      max_leaves=20)
DAMAGE = st.one_of(
    st.tuples(st.just("truncate"), st.floats(min_value=0, max_value=1)),
    st.tuples(st.just("retype"), st.integers(min_value=0, max_value=10**6), VALUES),
    st.tuples(st.just("encode"), st.sampled_from(["utf-16", "utf-32", "latin-1", "cp1252"])),
    st.tuples(st.just("bytes"), st.integers(min_value=0, max_value=10**6), st.binary(min_size=1, max_size=8)),
    st.tuples(st.just("huge"), st.integers(min_value=0, max_value=10**6), st.integers(min_value=21, max_value=6000)),
    st.tuples(st.just("deep"), st.integers(min_value=0, max_value=10**6), st.integers(min_value=10, max_value=3000)),
)


def _leaves(doc, path=()):
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _leaves(v, path + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _leaves(v, path + (i,))
    yield path


def _set(doc, path, value):
    if not path:
        return value
    node = doc
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = value
    return doc


def damage_json(doc, d) -> bytes:
    """``doc`` (JSON) with the damage ``d`` applied, as the bytes of a file."""
    kind = d[0]
    text = json.dumps(doc)
    if kind == "truncate":
        return text.encode()[: int(len(text) * d[1])]
    if kind == "encode":
        return text.replace('"', '"\u00e9', 1).encode(d[1], errors="replace")
    if kind == "bytes":
        b = text.encode()
        i = d[1] % (len(b) + 1)
        return b[:i] + d[2] + b[i:]
    paths = list(_leaves(doc))
    path = paths[d[1] % len(paths)]
    if kind == "retype":
        value = d[2]
    elif kind == "huge":
        value = "HUGE"
    else:
        value = "DEEP"
    text = json.dumps(_set(json.loads(text), path, value), allow_nan=True)
    text = text.replace('"HUGE"', "9" * d[2] if kind == "huge" else '"HUGE"')
    text = text.replace('"DEEP"', "[" * d[2] + "]" * d[2] if kind == "deep" else '"DEEP"')
    return text.encode()


def _toml_doc() -> dict:
    import tomllib

    return tomllib.loads(_valid_scenario_text())


def damage_toml(doc, d) -> bytes:
    import tomli_w

    kind = d[0]
    text = tomli_w.dumps(doc)
    if kind == "truncate":
        return text.encode()[: int(len(text) * d[1])]
    if kind == "encode":
        return text.replace('"', '"\u00e9', 1).encode(d[1], errors="replace")
    if kind == "bytes":
        b = text.encode()
        i = d[1] % (len(b) + 1)
        return b[:i] + d[2] + b[i:]
    lines = text.splitlines()
    i = d[1] % len(lines)
    if "=" not in lines[i]:
        return text.encode()
    key = lines[i].split("=", 1)[0]
    if kind == "retype":
        try:
            lit = tomli_w.dumps({"v": d[2]}).removeprefix("v = ").strip() if not isinstance(d[2], dict) else "{}"
        except (TypeError, ValueError):
            lit = "nan"
        lines[i] = f"{key}= {lit}" if lit and "\n" not in lit else lines[i]
    elif kind == "huge":
        lines[i] = f"{key}= {'9' * d[2]}"
    else:
        lines[i] = f"{key}= {'[' * d[2]}{']' * d[2]}"
    return ("\n".join(lines) + "\n").encode()


PROPERTY = settings(max_examples=int(os.environ.get("ECNLAB_PROPERTY_EXAMPLES", "40")), deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def _accepts_or_one_line(rc, err, name):
    assert rc in (0, 2), (rc, err)
    if rc == 2:
        assert_one_line(rc, err, name)


@PROPERTY
@given(d=DAMAGE, as_json=st.booleans())
def test_damaged_scenario_files_are_accepted_or_one_line(tmp_path, d, as_json):
    p = tmp_path / ("s.json" if as_json else "s.toml")
    p.write_bytes(damage_json(_toml_doc(), d) if as_json else damage_toml(_toml_doc(), d))
    _accepts_or_one_line(*ecnlab("check", p), "")


SWEEP = {"scenario": "tcn-static", "seeds": [1, 2], "set": {"duration": "2ms"},
         "grid": {"marking.scheme": ["tcn", "per_queue"]}, "zip": {"marking.tcn.threshold": ["20us", "40us"]},
         "cases": {"load": {"low": {"metrics.warmup": "0s"}, "high": {"metrics.warmup": "1ms"}}}}


@PROPERTY
@given(d=DAMAGE)
def test_damaged_sweep_files_are_accepted_or_one_line(tmp_path, d):
    p = tmp_path / "sw.toml"
    p.write_bytes(damage_toml(json.loads(json.dumps(SWEEP)), d))
    _accepts_or_one_line(*ecnlab("sweep", p, "--dry-run"), "")


@PROPERTY
@given(d=DAMAGE)
def test_damaged_summaries_are_reported_or_one_line(a_run, tmp_path_factory, d):
    dest = tmp_path_factory.mktemp("dmg") / "r"
    shutil.copytree(a_run, dest)
    (dest / "summary.json").write_bytes(damage_json(json.loads((a_run / "summary.json").read_text()), d))
    _accepts_or_one_line(*ecnlab("report", dest), "")


@PROPERTY
@given(d=DAMAGE)
def test_damaged_reasons_files_are_read_or_one_line(tmp_path_factory, d):
    from ecnlab.reproduce.reasons import load_reasons
    from ecnlab.scenario import ScenarioError

    root = tmp_path_factory.mktemp("reasons")
    doc = {"reason": [{"entry": "tcn-static", "claim": "c1", "scale": "quick", "category": "scale",
                       "text": "too few flows"}]}
    (root / "reasons.toml").write_bytes(damage_toml(doc, d))
    try:
        load_reasons(root)
    except ScenarioError as e:
        assert "\n" not in str(e) and str(root / "reasons.toml") in str(e)


@PROPERTY
@given(lines=st.lists(st.one_of(st.sampled_from(["120us", "0.2 ms", "64 bytes from h: icmp_seq=1 time=0.045 ms",
                                                "# c", "", "PING x", "5s"]),
                                st.text(max_size=12), st.binary(max_size=6).map(lambda b: b.decode("latin-1"))),
                      max_size=12))
def test_damaged_rtt_files_are_read_or_one_line(tmp_path_factory, lines):
    from ecnlab.advise.rtt import from_file
    from ecnlab.scenario import ScenarioError

    p = tmp_path_factory.mktemp("rtt") / "rtt.txt"
    p.write_bytes("\n".join(lines).encode("utf-8", errors="surrogateescape"))
    try:
        r = from_file(p)
        assert r.min_us > 0
    except ScenarioError as e:
        assert "\n" not in str(e) and str(p) in str(e)


@PROPERTY
@given(rows=st.lists(st.lists(st.one_of(st.integers(-5, 10**25), st.text(max_size=6), st.floats()), min_size=0,
                              max_size=6), max_size=5),
       header=st.sampled_from(["start,src,dst,size", "start,src,dst,size,class", "src,dst", ""]))
def test_damaged_traces_are_run_or_one_line(tmp_path_factory, rows, header):
    d = tmp_path_factory.mktemp("trace")
    (d / "flows.csv").write_text(header + "\n" + "\n".join(",".join(map(str, r)) for r in rows) + "\n")
    scen = d / "t.toml"
    scen.write_text(_valid_scenario_text().split("[[flows]]")[0]
                    + '[[traffic]]\nkind = "trace"\nfile = "flows.csv"\n')
    _accepts_or_one_line(*ecnlab("check", scen), "")


def test_a_run_time_series_beyond_the_input_limit_is_read_by_the_rows_kept(tmp_path):
    """ecnsharp-incast's 4.3 s at 10 us wrote 270 MB of timeseries.csv: whole, it is refused
    as any input file past 64 MB is; read with ``keep`` (RunFiles.timeseries_of), in chunks,
    only the rows kept are held, whatever the file's size."""
    from ecnlab.inputs import MAX_FILE_BYTES, ScenarioError, read_csv
    from ecnlab.reproduce.base import RunFiles

    row = "0.00001,s0->h0,1,1000000.0,1500,1500.0,1.2,1.0,0,0,\n"
    n = MAX_FILE_BYTES // len(row) + 1000
    with open(tmp_path / "timeseries.csv", "w") as f:
        f.write("t_s,port,queue,goodput_bps,qlen_bytes,avg_qlen_bytes,sojourn_us,busy_fraction,marks,drops,est_rate_bps\n")
        f.write(row * n)
        f.write("4.0,s0->h0,0,9e9,3000,3000.0,2.4,1.0,0,7,\n")
    assert (tmp_path / "timeseries.csv").stat().st_size > MAX_FILE_BYTES
    with pytest.raises(ScenarioError, match="larger than a CSV file can be"):
        read_csv(tmp_path / "timeseries.csv")
    got = RunFiles(tmp_path).timeseries_of("s0->h0", 0, (3.9, 4.1))
    assert len(got) == 1 and int(got["drops"].iloc[0]) == 7 and float(got["qlen_bytes"].iloc[0]) == 3000
