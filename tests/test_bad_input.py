"""Bad scenario files: each one in tests/bad_inputs/scenarios/ starts with a line
``# expect: TEXT`` and must be rejected with exactly one line that names the file and
contains TEXT (the field path and what is wrong), exit status 2, and no result directory."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ecnlab.cli import main

CORPUS = Path(__file__).parent / "bad_inputs" / "scenarios"
FILES = sorted(CORPUS.glob("*.toml"))


def _expected(path: Path) -> str:
    first = path.read_text().splitlines()[0]
    assert first.startswith("# expect: "), f"{path.name}: first line must be '# expect: ...'"
    return first[len("# expect: "):].strip()


@pytest.fixture(autouse=True)
def _eight_gigabytes(monkeypatch):
    """The memory a scenario may take is the machine's; these tests fix it at 8 GB so that
    the cases beyond memory are refused on any machine."""
    monkeypatch.setenv("ECNLAB_MEMORY_LIMIT", str(8 * 10**9))


def test_the_corpus_is_large_enough():
    assert len(FILES) >= 40


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_bad_scenario_is_rejected_with_one_line(path: Path, capsys, tmp_path):
    out_dir = tmp_path / "out"
    rc = main(["run", str(path), "--out", str(out_dir), "-q"])
    err = capsys.readouterr().err
    assert rc == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    line = lines[0]
    assert line.startswith("ecnlab: error: "), line
    assert str(path) in line, f"the message does not name the file: {line}"
    assert _expected(path) in line, f"expected '{_expected(path)}' in: {line}"
    assert "Traceback" not in err and "panicked" not in err
    assert not out_dir.exists(), "a rejected scenario must not leave a result directory"


def test_did_you_mean_names_the_closest_key(capsys):
    rc = main(["check", str(CORPUS / "unknown-switch-key.toml")])
    assert rc == 2
    assert "(did you mean `buffer`?)" in capsys.readouterr().err


def test_a_bad_override_is_blamed_on_its_set(capsys):
    rc = main(["check", "tcn-static", "--set", "flows.0.size=0B"])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.strip() == (
        "ecnlab: error: tcn-static: flows[0].size: must be larger than 0 (set by --set flows.0.size=0B)"
    )


def test_the_real_command_exits_2_with_one_line(tmp_path):
    """The same through a real process: exit status, stderr, stdout, no directory."""
    exe = Path(__file__).resolve().parents[1] / ".venv" / "bin" / "ecnlab"
    cmd = [str(exe)] if exe.exists() else ["python", "-m", "ecnlab.cli"]
    bad = CORPUS / "threshold-above-buffer.toml"
    p = subprocess.run([*cmd, "run", str(bad), "--out", str(tmp_path / "o")], capture_output=True, text=True)
    assert p.returncode == 2
    assert p.stdout == ""
    assert p.stderr.count("\n") == 1 and str(bad) in p.stderr
    assert not (tmp_path / "o").exists()
