import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ECNLAB = Path(sys.executable).parent / "ecnlab"

# A suite started in the background (`make test &`, nohup, some CI runners) inherits SIGINT
# ignored, its children would too, and Python then installs no KeyboardInterrupt handler (it
# respects an inherited SIG_IGN, as it should): the tests of what Ctrl-C does to a command
# would test the shell that started pytest. Every child starts as from a terminal instead.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def run_cli(*args, check=True):
    """Run the installed `ecnlab` command; return the CompletedProcess."""
    p = subprocess.run([str(ECNLAB), *map(str, args)], capture_output=True, text=True, cwd=ROOT)
    if check and p.returncode != 0:
        raise AssertionError(f"ecnlab {' '.join(map(str, args))} failed ({p.returncode}):\n{p.stderr}")
    return p


def summary(out_dir):
    return json.loads((Path(out_dir) / "summary.json").read_text())


@pytest.fixture
def cli():
    return run_cli
