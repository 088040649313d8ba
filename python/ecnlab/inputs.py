"""The files a user gives ecnlab, read with the limits every reader keeps, and the error of
a wrong input (``ScenarioError``).

Each kind of input file has one reader, built on this module, and every command that reads
that kind calls it: scenario files (``scenario.load``), sweep files
(``sweep.spec.load_sweep``), ``advise``'s RTT file (``advise.rtt.from_file``), the
catalog's ``reasons.toml`` (``reproduce.reasons.load_reasons``), and the result files that
``report`` and the catalog read back (``read_summary``, ``read_json``, ``read_csv`` here).
CDF and trace files are read by the core (``workload::read_input_file``, the same limits).

The limits, each refused with one line naming the file:

- a regular file: a directory, FIFO, socket or device (``/dev/zero``, a terminal) is
  refused once opened without blocking, before a byte is read (reading one blocks or never
  ends);
- at most ``MAX_FILE_BYTES``, read with that bound (a file that grows while it is read, or
  one whose size the kernel reports as 0, cannot exceed it either);
- UTF-8 text (a leading byte-order mark is skipped), without NUL characters;
- TOML or JSON nested at most ``MAX_DEPTH`` tables or arrays deep, checked without
  recursion, and no integer longer than ``MAX_INT_DIGITS`` digits (Python's own limit,
  4,300 digits, would raise a ValueError about its settings; no value ecnlab reads has
  more than 20).
"""

from __future__ import annotations

import datetime
import json
import math
import os
import stat
import tomllib
from pathlib import Path
from typing import Any, Iterator


class ScenarioError(ValueError):
    """A scenario, an option or an input file is wrong: the user can fix it. The message is
    one line naming what (the command exits with status 2, ``exits.py``)."""


MAX_FILE_BYTES = 64 * 1024 * 1024
"""The largest input file read (a scenario, a sweep file, an RTT file, a result file)."""
MAX_DEPTH = 16
"""Tables and arrays nested deeper than this are refused (a scenario's deepest key is 4)."""
TOO_DEEP = f"nested more than {MAX_DEPTH} tables or arrays deep; no key ecnlab reads is"
MAX_INT_DIGITS = 100
_TOO_LONG = 10**MAX_INT_DIGITS


def read_text(path: str | os.PathLike, what: str, limit: int = MAX_FILE_BYTES) -> str:
    """The text of the input file ``path`` (a ``what`` file: "scenario", "sweep", ...),
    within the module's limits; else ScenarioError, one line naming the file."""
    p = Path(path)
    try:
        # O_NONBLOCK: opening a FIFO without a writer must not wait for one.
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise ScenarioError(f"{p}: no such {what} file") from None
    except IsADirectoryError:
        raise ScenarioError(f"{p}: is a directory, not a {what} file") from None
    except OSError as e:
        raise ScenarioError(f"{p}: cannot read: {e.strerror or e}") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        if stat.S_ISDIR(st.st_mode):
            raise ScenarioError(f"{p}: is a directory, not a {what} file")
        raise ScenarioError(f"{p}: is not a regular file (a FIFO, socket or device), not a {what} file")
    with os.fdopen(fd, "rb") as f:
        if st.st_size > limit:
            raise ScenarioError(f"{p}: {_size(st.st_size)}, larger than a {what} file can be ({_size(limit)})")
        try:
            os.set_blocking(fd, True)
            data = f.read(limit + 1)
        except OSError as e:
            raise ScenarioError(f"{p}: cannot read: {e.strerror or e}") from None
    if len(data) > limit:
        raise ScenarioError(f"{p}: larger than a {what} file can be ({_size(limit)})")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ScenarioError(f"{p}: not UTF-8 text (byte {e.start}: {data[e.start:e.start + 1]!r}); a {what} file "
                            f"is text") from None
    text = text.removeprefix("\ufeff")
    if "\0" in text:
        line = text.count("\n", 0, text.index("\0")) + 1
        raise ScenarioError(f"{p}: line {line}: a NUL character; a {what} file is text")
    return text


def _size(n: int) -> str:
    return f"{n / 2**20:.0f} MB" if n >= 2**20 else f"{n:,} bytes"


def parse_toml(text: str, where: str) -> dict[str, Any]:
    """A TOML document; ``where`` (the file) leads the one line of a mistake."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"{where}: not valid TOML: {e}") from None
    except RecursionError:
        raise ScenarioError(f"{where}: {TOO_DEEP}") from None
    except ValueError:  # int() of a literal beyond the interpreter's digit limit (4,300)
        raise ScenarioError(f"{where}: {LONG_INT}") from None
    _check_limits(doc, where)
    return doc


def parse_json(text: str, where: str) -> Any:
    """A JSON document; ``where`` (the file) leads the one line of a mistake."""
    try:
        doc = json.loads(text, parse_int=_bounded_int)
    except json.JSONDecodeError as e:
        raise ScenarioError(f"{where}: not valid JSON ({e.msg} at line {e.lineno}, column {e.colno})") from None
    except RecursionError:
        raise ScenarioError(f"{where}: {TOO_DEEP}") from None
    except _LongInt as e:
        raise ScenarioError(f"{where}: {e}") from None
    _check_limits(doc, where)
    return doc


class _LongInt(ValueError):
    pass


LONG_INT = f"an integer of more than {MAX_INT_DIGITS} digits; no value ecnlab reads has more than 20"


def _bounded_int(s: str) -> int:
    if len(s.lstrip("-")) > MAX_INT_DIGITS:
        raise _LongInt(LONG_INT)
    return int(s)


def walk(doc: Any, path: str = "") -> Iterator[tuple[Any, str, int]]:
    """Every value of a document with its field path (``a.b[2]``) and depth, without
    recursion (a value nested 100,000 deep is walked, not a RecursionError). A value
    deeper than ``MAX_DEPTH`` is yielded but not entered."""
    stack = [(doc, path, 0)]
    while stack:
        v, at, depth = stack.pop()
        yield v, at, depth
        if depth > MAX_DEPTH:
            continue
        if isinstance(v, dict):
            stack += [(x, f"{at}.{k}" if at else str(k), depth + 1) for k, x in reversed(v.items())]
        elif isinstance(v, list):
            stack += [(x, f"{at}[{i}]", depth + 1) for i, x in reversed(list(enumerate(v)))]


def limit_error(v: Any, at: str, depth: int) -> str | None:
    """What is wrong with one value of a document (``walk``) by the module's limits."""
    if depth > MAX_DEPTH:
        return f"{at}: {TOO_DEEP}"
    if isinstance(v, int) and not isinstance(v, bool) and abs(v) >= _TOO_LONG:
        return f"{at or 'value'}: {LONG_INT}"
    return None


def _check_limits(doc: Any, where: str) -> None:
    for v, at, depth in walk(doc):
        err = limit_error(v, at, depth)
        if err:
            raise ScenarioError(f"{where}: {err}")


def check_plain(doc: Any, path: str = "") -> None:
    """What TOML (or JSON) can hold and no ecnlab input takes: dates and times, ``nan`` and
    ``inf``, nesting deeper than ``MAX_DEPTH``, very long integers. Raises ValueError
    ``"path: what"``, the core's form, so that callers name the file and the ``--set`` as
    for the core's own errors."""
    for v, at, depth in walk(doc, path):
        err = limit_error(v, at, depth)
        if err:
            raise ValueError(err)
        if isinstance(v, (datetime.date, datetime.time)):
            raise ValueError(f"{at or 'value'}: `{v.isoformat()}` is a TOML date or time, which no key takes "
                             f"(a time is a number and a unit, e.g. `10ms`)")
        if isinstance(v, float) and not math.isfinite(v):
            raise ValueError(f"{at or 'value'}: `{v}` is not a finite number")


# --- result files: what ecnlab wrote, read back (``report``, the catalog) ---------------

def read_json(path: Path, what: str = "result") -> Any:
    """A JSON file ecnlab wrote, or one line saying why it cannot be read (ScenarioError)."""
    text = read_text(path, what)
    try:
        return parse_json(text, str(path))
    except ScenarioError as e:
        raise ScenarioError(f"{e}: damaged or cut short; rerun the command that wrote it") from None


def read_summary(path: Path) -> dict[str, Any]:
    """A run's ``summary.json`` as both engines write it: read as the core's own type
    (``ecnlab_sim::summary::Summary``, ``_core.check_summary``), so a key missing or of
    the wrong type is one line naming the field, not an error deep inside a report."""
    from . import _core

    doc = read_json(path, "summary")
    if not isinstance(doc, dict):
        raise ScenarioError(f"{path}: a summary is a JSON object, not {type(doc).__name__}: damaged, or not "
                            f"written by ecnlab")
    try:
        _core.check_summary(json.dumps(doc, allow_nan=True))
    except ValueError as e:
        raise ScenarioError(f"{path}: {e}: not a summary.json ecnlab wrote (damaged, or from another "
                            f"version: rerun the command that wrote it)") from None
    return doc


def read_csv(path: Path, columns: tuple[str, ...] = (), numeric: tuple[str, ...] = (), keep=None):
    """A CSV file ecnlab wrote as a pandas DataFrame (empty if the file is absent), or one
    line saying why it cannot be read, which of ``columns`` it lacks or which of ``numeric``
    holds something else than numbers (an empty cell is none) (ScenarioError).

    ``keep``, a function of a DataFrame giving the mask of its rows to keep, reads the file in
    chunks whatever its size: the few rows a reader needs of a run's time series, which at
    10 us samples over seconds runs to hundreds of MB (the filter bounds the memory)."""
    import io

    import pandas as pd

    if not path.exists():
        return pd.DataFrame()
    if keep is None:
        text = read_text(path, "CSV")
    elif not path.is_file():
        read_text(path, "CSV")  # a FIFO or a directory: its one line
    try:
        if keep is None:
            df = pd.read_csv(io.StringIO(text))
        else:
            df = pd.concat([c[keep(c)] for c in pd.read_csv(path, chunksize=1 << 20)], ignore_index=True)
    except pd.errors.EmptyDataError:
        return pd.DataFrame()
    except KeyError as e:  # ``keep`` read a column the file lacks
        raise ScenarioError(f"{path}: has no column {e}: damaged, or written by another tool") from None
    except (pd.errors.ParserError, ValueError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ScenarioError(f"{path}: not a CSV file ecnlab wrote ({first[:120]}): damaged or cut short; "
                            f"rerun the command that wrote it") from None
    missing = [c for c in columns if c not in df.columns]
    if missing and not df.empty:
        raise ScenarioError(f"{path}: has no column {missing[0]!r}: damaged, or written by another tool")
    for c in numeric:
        if c in df.columns and not pd.api.types.is_numeric_dtype(df[c]):
            as_numbers = pd.to_numeric(df[c], errors="coerce")
            bad = as_numbers.isna() & df[c].notna()
            if bad.any():
                i = int(bad.to_numpy().argmax())
                raise ScenarioError(f"{path}: line {i + 2}, column {c!r}: {str(df[c].iloc[i])[:40]!r} is not a "
                                    f"number: damaged, or written by another tool")
            df[c] = as_numbers  # e.g. a column of empty cells only
    return df


def csv_rows(path: Path, what: str = "CSV") -> tuple[list[dict[str, str]], list[str]]:
    """The rows (as dicts of text) and header of a CSV file ecnlab wrote, within the limits."""
    import csv
    import io

    text = read_text(path, what)
    try:
        r = csv.DictReader(io.StringIO(text, newline=""))
        return list(r), list(r.fieldnames or [])
    except csv.Error as e:
        raise ScenarioError(f"{path}: not a CSV file ecnlab wrote ({e}): damaged or cut short") from None

