import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ECNLAB = Path(sys.executable).parent / "ecnlab"


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
