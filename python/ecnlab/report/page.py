"""The report pages: one jinja2 environment over ``templates/`` for every HTML page ecnlab
writes, ``ecnlab report``'s (runs, sweeps, advice: ``report.html.j2``) and the catalog's
(``ecnlab reproduce``: an experiment's ``experiment.html.j2``, the index's ``index.html.j2``).
Each extends ``base.html.j2`` (the style, and the inline script that sets
``data-images-loaded`` / ``data-images-total`` on ``<body>`` once the figures have loaded, for
a headless browser). Autoescaping is on: claims, notes and parameters are data, never markup."""

from __future__ import annotations

import functools
import math
from pathlib import Path
from typing import Any


def fmt(v: Any) -> str:
    """A number as a table cell: 3 significant digits, the integer part never rounded and
    thousands separated (``1,234``, ``123``, ``12.3``, ``1.23``, ``0.0123``); an integral
    value without decimals; missing (``None``, ``""``, NaN) as an en dash. REPRODUCTION.md
    prints its numbers with this rule too."""
    if v is None or v == "":
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        if not math.isfinite(v):
            return "–"
        if v.is_integer() and abs(v) < 1e15:
            return f"{int(v):,}"
        a = abs(v)
        if a < 1:
            return f"{v:.3g}"
        return f"{v:,.{max(0, 3 - len(str(int(a))))}f}"
    return str(v)


def fmt_pm(mean: Any, ci95: Any = None) -> str:
    """A mean over seeds with the half-width of its 95 % interval, ``1,235 ± 12``, both by
    ``fmt``; the mean alone without an interval (one seed), an en dash without a mean."""
    if fmt(mean) == "–" or not isinstance(ci95, (int, float)) or not math.isfinite(ci95):
        return fmt(mean)
    return f"{fmt(mean)} ± {fmt(ci95)}"


@functools.cache
def environment():
    """The one template environment (``templates/``, autoescaped, ``fmt`` as a filter)."""
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
                             autoescape=True, trim_blocks=True, lstrip_blocks=True)
    env.filters["fmt"] = fmt
    return env


def render(out_file: Path, template: str = "report.html.j2", **context: Any) -> Path:
    """Render ``template`` with ``context`` into ``out_file`` (atomically: a reader never
    sees half a page)."""
    from ..outdir import write_text_atomic

    # Not mkstemp: its 0600 would make the page the one result file the group cannot read.
    write_text_atomic(out_file, environment().get_template(template).render(**context))
    return out_file
