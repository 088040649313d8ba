"""`ecnlab.parent_death.die_with_parent`: a child that dies with its parent, even a parent
killed by SIGKILL (the emulation's switch and agents, a sweep's run processes)."""

import os
import signal
import subprocess
import sys
import time

import pytest

from ecnlab.parent_death import die_with_parent

# The parent: starts `sleep` with the given parent-death signal, says its pid, then waits.
PARENT = """
import signal, subprocess, sys, time
from ecnlab.parent_death import die_with_parent
sig = int(sys.argv[1])
child = subprocess.Popen(["sleep", "60"], preexec_fn=lambda: die_with_parent(sig))
print(child.pid, flush=True)
time.sleep(60)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ")[1][0] != "Z"  # a zombie has died
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_the_child_dies_when_its_parent_is_killed(sig):
    parent = subprocess.Popen([sys.executable, "-c", PARENT, str(int(sig))], stdout=subprocess.PIPE, text=True)
    child = int(parent.stdout.readline())
    assert _alive(child)
    parent.kill()  # SIGKILL: the parent cleans nothing up
    parent.wait()
    deadline = time.monotonic() + 5
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not _alive(child), "the child outlived its SIGKILLed parent"


def test_it_says_whether_it_was_set():
    # In this process (no harm: the test runner's parent outlives it), only on Linux.
    assert die_with_parent(0) is sys.platform.startswith("linux")  # 0 clears the setting
