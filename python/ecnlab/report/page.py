"""The report page: one jinja2 template for runs, sweeps and advice (``templates/``)."""

from __future__ import annotations

import math
import os
import tempfile
from pathlib import Path
from typing import Any


def fmt(v: Any, digits: int = 4) -> str:
    """A table cell: numbers to ``digits`` significant digits, missing as an en dash."""
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
        return f"{v:,.{digits}g}" if abs(v) < 10 ** digits else f"{v:,.0f}"
    return str(v)


def render(out_file: Path, **context: Any) -> Path:
    """Render ``report.html.j2`` with ``context`` into ``out_file`` (atomically)."""
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
                             autoescape=jinja2.select_autoescape(["html", "j2"]))
    env.filters["fmt"] = fmt
    text = env.get_template("report.html.j2").render(**context)
    fd, tmp = tempfile.mkstemp(dir=out_file.parent, prefix=f".{out_file.name}.")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, out_file)
    return out_file
