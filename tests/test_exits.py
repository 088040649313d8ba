"""Every command ends through ecnlab.exits: the status and the one line per kind of failure."""

import pytest

from ecnlab.api import SimulationError
from ecnlab.exits import EmulationError, Terminated, exit_status
from ecnlab.scenario import ScenarioError


@pytest.mark.parametrize("exc, status, line", [
    (ScenarioError("my.toml: x.y: bad"), 2, "ecnlab: error: my.toml: x.y: bad\n"),
    (EmulationError("needs root"), 2, "ecnlab: error: needs root\n"),
    (KeyboardInterrupt(), 130, "ecnlab: interrupted (namespaces removed)\n"),
    (Terminated(15), 143, "ecnlab: terminated (namespaces removed)\n"),
    (SimulationError("counting audit failed at 5 ns"), 1, "ecnlab: internal error: counting audit failed at 5 ns\n"),
    (OSError("disk on fire\nsecond line"), 1, "ecnlab: internal error: OSError: disk on fire\n"),
])
def test_each_failure_has_its_status_and_one_line(capsys, monkeypatch, exc, status, line):
    monkeypatch.delenv("ECNLAB_DEBUG", raising=False)
    assert exit_status(exc, cleanup=" (namespaces removed)") == status
    assert capsys.readouterr().err == line


def test_a_huge_message_is_clipped():
    import io
    import contextlib

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert exit_status(ScenarioError("x" * 1_000_000)) == 2
    assert len(err.getvalue()) < 600


def test_system_exit_passes_through():
    with pytest.raises(SystemExit):
        exit_status(SystemExit(2))
