"""What the command lines of several ecnlab commands share (``run``, ``sweep``,
``reproduce``, ``advise``, ``emulate``, ``validate``): the parser whose mistakes are one
line and exit status 2, the argument types, pointing at the ``--set`` behind a bad value,
and the rate format of the summary tables.

A public module of its own so that every command imports it and none imports another
command's module for it (``ecnlab.cli`` imports the commands)."""

from __future__ import annotations

import argparse
import sys
from typing import Callable

from .api import culprit_override
from .scenario import ScenarioError


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors are one line, ``ecnlab: error: ...``, exit 2."""

    def error(self, message: str) -> None:
        from ._core import clip  # the user's words are echoed: escaped and bounded as every error line

        sys.stderr.write(f"ecnlab: error: {clip(message)}\n")
        sys.exit(2)


def int_at_least(lo: int) -> Callable[[str], int]:
    """An argparse type: an integer >= ``lo``, else one clear line."""

    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{text[:40]}' is not an integer") from None
        if v < lo:
            raise argparse.ArgumentTypeError(f"{v} must be >= {lo}")
        return v

    return parse


positive = int_at_least(1)  # a count of something (0 is no count, not "the default")
count = int_at_least(0)


def blame_set(e: ScenarioError, assignments: list[str]) -> ScenarioError:
    """The error, pointing at the ``--set`` that put the bad value there (if one did)."""
    c = culprit_override(e, assignments)
    return ScenarioError(f"{e} (set by --set {c})") if c else e


def fmt_rate(bps: float) -> str:
    """A measured rate for the summary tables (``ecnlab run`` and ``ecnlab emulate``)."""
    return f"{bps / 1e9:.3f} Gbps" if bps >= 1e9 else f"{bps / 1e6:.1f} Mbps"
