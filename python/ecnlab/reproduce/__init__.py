"""The experiment catalog of SPEC §6: every figure of the TCN, ECN# and dual-AQM papers as
a named entry that runs its schemes x loads x seeds through the sweep machinery, draws the
paper's figures, and checks the paper's claims against what ecnlab measures.

>>> import ecnlab
>>> r = ecnlab.reproduce("tcn-buffer", out="out/tcn-buffer")     # doctest: +SKIP
>>> r.claims[["claim", "paper", "ecnlab", "shown"]]                 # doctest: +SKIP

Each entry writes ``results.csv``, ``figures/*.png|svg``, ``claims.json`` (a list of
``{id, claim, paper, unit, section, quote, ecnlab, ci95, direction, magnitude, status,
note}``), ``experiment.json`` and ``report.html``; ``--save`` keeps them, and each run's
compact data, in ``results/``, from which every claim is judged again without a run. The
papers' numbers are ``papers/*.toml`` (``numbers``); how a claim is judged, ``rules``.
"""

import sys as _sys

from .base import CATALOG, ClaimDef, Context, Experiment, register
from .runner import ReproduceResult, reproduce, run_experiment
from . import tcn as _tcn  # noqa: F401  (registers the entries)
from . import ecnsharp as _ecnsharp  # noqa: F401
from . import dualq as _dualq  # noqa: F401

__all__ = ["CATALOG", "ClaimDef", "Context", "Experiment", "ReproduceResult", "register", "reproduce",
           "run_experiment", "catalog"]


def catalog() -> list[Experiment]:
    """The catalog entries in SPEC §6 order."""
    return list(CATALOG.values())


class _CallableModule(_sys.modules[__name__].__class__):
    """``ecnlab.reproduce`` is this package and ``ecnlab.reproduce(...)`` calls
    ``reproduce.reproduce``."""

    def __call__(self, *args, **kwargs):
        return reproduce(*args, **kwargs)


_sys.modules[__name__].__class__ = _CallableModule
