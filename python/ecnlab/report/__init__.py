"""Reports for any ``ecnlab run`` or ``ecnlab sweep`` output: ``ecnlab report DIR``.

Read first: the result files of README "Using it" (``summary.json``, ``flows.csv``,
``timeseries.csv``) and of sweeps (``results.csv``, ``summary.csv``). ``report(DIR)``
writes ``DIR/report.html`` and ``DIR/figures/*.png|svg``:

- a run: FCT by size bucket and by queue/class (``fct``, ``fct_by_class``), slowdown CDFs
  (``flows.csv``), queue length and goodput over time per queue (``timeseries.csv``), marks
  and drops by reason;
- a sweep: each metric against each swept parameter, seeds aggregated (mean and 95 %
  interval, ``stats.py``), one line per value of the other parameters (the schemes side by
  side).

Figures are matplotlib (Agg); the page is a jinja2 template (``templates/``), static and
self-contained like the catalog's reports, with the same ``data-images-loaded`` hook on
``<body>`` for a headless browser.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..scenario import ScenarioError

__all__ = ["report"]


def report(result_dir: str | os.PathLike) -> Path:
    """Write ``report.html`` (and ``figures/``) into an ``ecnlab run`` or ``ecnlab sweep``
    result directory; returns the page's path. The page and its figures are written aside
    and replace the earlier ones together (``outdir.replace_entries``): no figure of an
    earlier report survives, and an interrupted report leaves the earlier one. Raises
    ``ScenarioError`` (one line) when the directory holds neither, or a file of it cannot
    be read."""
    from ..outdir import replace_entries

    d = Path(result_dir)
    if (d / "summary.json").is_file():
        from .run_report import write_run_report as write
    elif (d / "results.csv").is_file():
        from .sweep_report import write_sweep_report as write
    else:
        raise ScenarioError(f"{d}: neither an ecnlab run (summary.json) nor a sweep (results.csv) result directory")
    with replace_entries(d, ("report.html", "figures")) as stage:
        write(d, stage)
    return d / "report.html"
