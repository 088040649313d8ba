"""Result directories, written whole, and read back with one clear line when they are not
what ecnlab wrote.

Every command that writes a result directory (``run``, ``run --report``, ``advise``,
``validate``, ``emulate``) writes its files into a fresh temporary directory beside
``--out`` (the same filesystem, so a rename moves it) and renames it into place only once
it is complete (``result_dir``). A failed or interrupted command therefore leaves the
earlier result or nothing, never a mix of two runs, and no temporary directory.

``--out`` may be absent, an empty directory, or an earlier ecnlab result (a directory
holding one of ``MARKERS``): that one is replaced whole, so no file of the earlier run
(its captures, its report) survives beside the new one. A directory holding anything else
is refused before anything runs: ecnlab never deletes files it did not write.

The renames run with SIGINT, SIGTERM and SIGHUP held back (``signals_held``), so Ctrl-C
lands before them or after them, never between. A SIGKILL there can leave a temporary
directory (``.<name>.ecnlab-<pid>-...``); the next command writing beside it removes it. One kind of
work outlives a failed command: a run store (``advise``'s ``validation/``) is moved to
``.<name>.ecnlab-kept/`` and the next command writing ``<name>`` starts from it.

A sweep's directory is a store that grows run by run and is not replaced: each of its run
directories is written whole by ``sweep/store.py``. ``ecnlab report DIR`` replaces only the
report (``report.html`` and ``figures/``) the same way, inside DIR (``replace_entries``).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import shutil
import signal
import threading
from pathlib import Path
from typing import Any, Iterator

from .scenario import ScenarioError

# The file each kind of result directory is recognised by: run and emulate, advise,
# validate.
MARKERS = ("summary.json", "advice.json", "validate.json")
_TAG = ".ecnlab-"
KEPT = "kept"  # ``.<name>.ecnlab-kept``: the stores an interrupted command leaves for the next


def open_new_file(path: Path) -> tuple[int, str]:
    """A new file beside ``path``, to be renamed over it. Unlike ``mkstemp`` (mode 0600),
    its mode is 0666 less the umask, as every other file the user creates."""
    while True:
        tmp = str(path.parent / f".{path.name}.{secrets.token_hex(6)}")
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), tmp
        except FileExistsError:
            continue


def write_text_atomic(path: Path, text: str) -> None:
    """``path`` replaced by ``text`` in one step: a reader never sees half a file."""
    fd, tmp = open_new_file(path)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Hold SIGINT, SIGTERM and SIGHUP back for the block, then deliver the first that came.
    Only the main thread receives signals in Python; elsewhere this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    came: list[int] = []
    old = {s: signal.signal(s, lambda n, _f: came.append(n)) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, signal.SIG_DFL if h is None else h)
        if came:
            signal.raise_signal(came[0])


def check_out(out: str | os.PathLike) -> Path:
    """The directory ``out`` names (symlinks followed), if a result may be written as it;
    else one line (ScenarioError)."""
    given = Path(out)
    target = given.resolve()
    if target.parent == target:
        raise ScenarioError(f"--out {given}: is the root directory")
    if given.exists():
        if not target.is_dir():
            raise ScenarioError(f"--out {given}: exists and is not a directory")
        try:
            names = sorted(os.listdir(target))
        except OSError as e:
            raise ScenarioError(f"--out {given}: cannot read it: {e.strerror or e}") from None
        if names and not any(m in names for m in MARKERS):
            raise ScenarioError(f"--out {given}: holds files that are not an ecnlab result ({names[0]}"
                                f"{', ...' if len(names) > 1 else ''}); give a new or empty directory, or an "
                                f"earlier result to replace")
    return target


def _tmp_path(target: Path, suffix: str = "") -> Path:
    return target.parent / f".{target.name}{_TAG}{os.getpid()}-{secrets.token_hex(4)}{suffix}"


def _clear_stale(target: Path) -> None:
    """Remove the temporary directories of ``target`` that a killed ecnlab left."""
    prefix = f".{target.name}{_TAG}"
    try:
        names = os.listdir(target.parent)
    except OSError:
        return
    for name in names:
        if not name.startswith(prefix) or name == f"{prefix}{KEPT}":
            continue
        try:
            pid = int(name[len(prefix):].split("-")[0])
            if pid == os.getpid():
                continue
            os.kill(pid, 0)
            continue  # its writer is alive
        except (ValueError, ProcessLookupError):
            pass  # malformed, or its writer is gone
        except PermissionError:
            continue  # alive, someone else's
        shutil.rmtree(target.parent / name, ignore_errors=True)


def _make_parents(parent: Path, given: Path) -> list[Path]:
    """Create ``parent`` and its missing ancestors; return those created, deepest first."""
    created = []
    p = parent
    while not p.exists() and not p.is_symlink() and p.parent != p:
        created.append(p)
        p = p.parent
    try:
        if created:  # else it exists (as a directory or not: making the temporary one says)
            parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        _remove_empty(created)
        raise ScenarioError(f"--out {given}: cannot write there: {e.strerror or e}") from None
    return created


def _remove_empty(dirs: list[Path]) -> None:
    for d in dirs:  # deepest first; only what is still empty
        try:
            d.rmdir()
        except OSError:
            break


def _replace(tmp: Path, target: Path) -> None:
    try:
        os.rename(tmp, target)  # absent, or an empty directory: one step
        return
    except OSError as e:
        if e.errno not in (errno.ENOTEMPTY, errno.EEXIST):
            raise
    old = _tmp_path(target, "-old")
    os.rename(target, old)
    os.rename(tmp, target)
    shutil.rmtree(old, ignore_errors=True)


@contextlib.contextmanager
def result_dir(out: str | os.PathLike, keep: tuple[str, ...] = ()) -> Iterator[Path]:
    """Yield a fresh empty directory in which to write a whole result; when the block ends
    normally it becomes ``out`` (replacing an earlier result whole), otherwise it is removed
    with any parent directory created for it. ``out`` is checked first (``check_out``).
    ``keep``: subdirectories of an earlier result to start from, hard-linked (a sweep's
    run store, which only ever gains directories written whole)."""
    given = Path(out)
    target = check_out(given)
    created = _make_parents(target.parent, given)
    _clear_stale(target)
    tmp = _tmp_path(target)
    try:
        tmp.mkdir()
    except OSError as e:
        _remove_empty(created)
        raise ScenarioError(f"--out {given}: cannot write there: {e.strerror or e}") from None
    kept = _kept_path(target)
    try:
        for sub in keep:  # the earlier result's store, then what an interrupted command kept
            for src in (target / sub, kept / sub):
                if src.is_dir():
                    with contextlib.suppress(OSError):  # a filesystem without hard links: start afresh
                        shutil.copytree(src, tmp / sub, copy_function=_link_new, dirs_exist_ok=True)
        yield tmp
        with signals_held():
            _replace(tmp, target)
            shutil.rmtree(kept, ignore_errors=True)  # its runs are in the result now
    except BaseException:
        with signals_held():
            _keep_store(tmp, kept, keep)
            shutil.rmtree(tmp, ignore_errors=True)
            _remove_empty(created)
        raise


def _kept_path(target: Path) -> Path:
    return target.parent / f".{target.name}{_TAG}{KEPT}"


def _link_new(src: str, dst: str) -> None:
    # Two stores share run directories written whole under the same key (the same run):
    # the first copy of a file stays.
    if not os.path.lexists(dst):
        os.link(src, dst)


def _keep_store(tmp: Path, kept: Path, keep: tuple[str, ...]) -> None:
    """A failed or interrupted command's stores (``keep``), moved aside for the next one
    into the same ``--out``: hours of finished runs are not lost to a Ctrl-C. Each already
    holds the earlier result's store and what was kept before (``result_dir``)."""
    for sub in keep:
        if not (tmp / sub).is_dir():
            continue
        with contextlib.suppress(OSError):
            kept.mkdir(exist_ok=True)
            shutil.rmtree(kept / sub, ignore_errors=True)
            os.rename(tmp / sub, kept / sub)


@contextlib.contextmanager
def replace_entries(d: Path, names: tuple[str, ...]) -> Iterator[Path]:
    """Yield a fresh directory inside ``d``; when the block ends normally, its entries
    ``names`` replace ``d``'s (an entry it lacks is removed from ``d``), with signals
    held. Otherwise ``d`` is left as it was."""
    stage = _tmp_path(d / "stage")
    _clear_stale(d / "stage")
    try:
        stage.mkdir()
    except OSError as e:
        raise ScenarioError(f"{d}: cannot write there: {e.strerror or e}") from None
    try:
        yield stage
        with signals_held():
            old = stage / ".old"
            old.mkdir()
            for name in names:
                if (d / name).exists():
                    os.rename(d / name, old / name)
                if (stage / name).exists():
                    os.rename(stage / name, d / name)
    finally:
        with signals_held():
            shutil.rmtree(stage, ignore_errors=True)


def read_csv(path: Path, columns: tuple[str, ...] = ()):
    """A CSV file ecnlab wrote as a pandas DataFrame (empty if the file is absent), or one
    line saying why it cannot be read or which of ``columns`` it lacks (ScenarioError)."""
    import pandas as pd

    if not path.is_file():
        return pd.DataFrame()
    try:
        df = pd.read_csv(path)
    except pd.errors.EmptyDataError:
        return pd.DataFrame()
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ScenarioError(f"{path}: not a CSV file ecnlab wrote ({first[:120]}): damaged or cut short; "
                            f"rerun the command that wrote it") from None
    except OSError as e:
        raise ScenarioError(f"{path}: cannot read: {e.strerror or e}") from None
    missing = [c for c in columns if c not in df.columns]
    if missing and not df.empty:
        raise ScenarioError(f"{path}: has no column {missing[0]!r}: damaged, or written by another tool")
    return df


def read_json(path: Path) -> Any:
    """A JSON file ecnlab wrote, or one line saying why it cannot be read (ScenarioError)."""
    try:
        text = path.read_text()
    except OSError as e:
        raise ScenarioError(f"{path}: cannot read: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise ScenarioError(f"{path}: not a text file (damaged?)") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise ScenarioError(f"{path}: not valid JSON ({e.msg} at line {e.lineno}, column {e.colno}): damaged or "
                            f"cut short; rerun the command that wrote it") from None
