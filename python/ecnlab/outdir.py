"""Result directories, written whole, and read back with one clear line when they are not
what ecnlab wrote.

Every command that writes a result directory (``run``, ``run --report``, ``advise``,
``validate``, ``emulate``) writes its files into a fresh temporary directory beside
``--out`` (the same filesystem, so a rename moves it) and renames it into place only once
it is complete (``result_dir``). A failed or interrupted command therefore leaves the
earlier result or nothing, never a mix of two runs, and no temporary directory.

``--out`` may be absent, an empty directory, or an earlier ecnlab result (a directory
holding one of ``MARKERS``, and nothing but what ecnlab writes in a result,
``RESULT_ENTRIES``): that one is replaced whole, in one step where Linux can
(``renameat2`` with ``RENAME_EXCHANGE``), so no file of the earlier run (its captures, its
report) survives beside the new one. A directory holding anything else, an earlier
result with files of the user's among its own included, is refused before anything runs:
ecnlab never deletes files it did not write.

The renames run with SIGINT, SIGTERM and SIGHUP held back (``signals_held``), so Ctrl-C
lands before them or after them, never between. A SIGKILL leaves a temporary directory
(``.<name>.ecnlab-<pid>-...``); the next command writing beside it finds its writer dead
and removes it. One kind of work outlives a failed or killed command: a run store
(``advise``'s ``validation/``, the ``keep`` of ``result_dir``) is moved to
``.<name>.ecnlab-kept/``, by the failing command itself (an exception, Ctrl-C, SIGTERM) or,
after a SIGKILL, by the next command writing ``<name>`` before it removes the dead one's
temporary directory; that command starts from it.

A store that grows run by run (a sweep's ``--out``, the catalog's) is not replaced:
``open_store`` checks it as ``--out`` is checked (new, empty, or an earlier store by
``STORE_MARKERS``; other files refused) and each of its run directories is written whole
by ``sweep/store.py``. ``ecnlab report DIR`` replaces only the report (``report.html`` and
``figures/``) the same way, inside DIR (``replace_entries``).

A storage fault (a full or read-only file system, no permission, a path through a file)
is the user's to fix: ``StorageError``, one line naming the directory, exit status 2,
raised by every writer here (``storage``); ``exits.py`` gives any that escapes elsewhere
the same line.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fnmatch
import os
import secrets
import shutil
import signal
import threading
from pathlib import Path
from typing import Iterator

from .inputs import ScenarioError

# The file each kind of result directory is recognised by: run and emulate, advise,
# validate.
MARKERS = ("summary.json", "advice.json", "validate.json")
# Every entry a command writes in a result directory (names, or fnmatch patterns): run
# (and --report), emulate, advise, validate, estimate (links.csv). An earlier result holding anything else is
# not replaced (those are the user's files). A test runs each command against this list.
RESULT_ENTRIES = ("summary.json", "flows.csv", "timeseries.csv", "probes.csv", "scenario.json", "pcap",
                  "report.html", "figures",
                  "emulation", "port-*.pcap",
                  "advice.json", "scenario.toml", "config", "validation",
                  "validate.json", "validate.md", "validate.png", "emulated", "emulated-*", "simulated",
                  "links.csv")
# What a store that grows run by run is recognised by (a sweep's --out: sweep/store.py; its
# report, or the catalog's figures of another entry sharing it).
STORE_MARKERS = ("runs", "results.csv", "figures")
_TAG = ".ecnlab-"
KEPT = "kept"  # ``.<name>.ecnlab-kept``: the stores an interrupted command leaves for the next

# The faults of a file system the user must fix.
STORAGE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG, errno.EACCES, errno.EPERM,
                            errno.ENOTDIR, errno.EISDIR, errno.ENAMETOOLONG, errno.ELOOP, errno.EMLINK})
# Those that are always the file system's, whichever file they name (a write that does not
# fit names no file at all).
_FULL_OR_READ_ONLY = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG})


class StorageError(ScenarioError):
    """ecnlab cannot write where it was told to (a full or read-only file system, no
    permission, ...): one line naming the directory (``label``, e.g. ``--out DIR``)."""

    def __init__(self, label: str, reason: str):
        super().__init__(f"{label}: cannot write there: {reason}")
        self.label, self.reason = label, reason

    def __reduce__(self):  # a sweep's run process hands it to the driver pickled
        return (StorageError, (self.label, self.reason))


def storage_error(e: BaseException, label: str, under: tuple[Path, ...] = ()) -> StorageError | None:
    """``e`` as the one line of a storage fault writing ``label`` (``--out DIR``), if it is
    one: a full or read-only file system whatever it names, else a storage errno on a path
    ``under`` one of the directories being written (not a file the command only reads)."""
    if not isinstance(e, OSError) or e.errno not in STORAGE_ERRNOS:
        return None
    if e.errno not in _FULL_OR_READ_ONLY:
        names = [os.fspath(f) for f in (e.filename, e.filename2) if f is not None]
        if not names or not any(_inside(n, d) for n in names for d in under):
            return None
    return StorageError(label, e.strerror or str(e))


def _inside(name: str, d: Path) -> bool:
    try:
        return os.path.commonpath([os.path.abspath(name), os.path.abspath(d)]) == os.path.abspath(d)
    except ValueError:
        return False


@contextlib.contextmanager
def storage(label: str, *under: Path) -> Iterator[None]:
    """Storage faults inside the block as ``StorageError`` (``storage_error``)."""
    try:
        yield
    except StorageError as e:  # met by an inner writer (advise's sweep): named by the outermost
        raise StorageError(label, e.reason) from None
    except OSError as e:
        err = storage_error(e, label, under)
        if err is None:
            raise
        raise err from None


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
        foreign = [n for n in names if not any(fnmatch.fnmatchcase(n, e) for e in RESULT_ENTRIES)]
        if names and foreign:
            raise ScenarioError(f"--out {given}: an earlier ecnlab result, but it also holds files ecnlab did not "
                                f"write ({foreign[0]}{', ...' if len(foreign) > 1 else ''}), which replacing it "
                                f"would delete; move them, or give another --out")
    return target


def open_store(out: str | os.PathLike, markers: tuple[str, ...] = STORE_MARKERS) -> Path:
    """The directory of a store that grows run by run (a sweep's ``--out``), created if
    absent: new, empty, or an earlier store (one of ``markers``); a directory holding other
    files is refused (ScenarioError), as one that cannot be written (StorageError), before
    anything runs."""
    given = Path(out)
    label = f"--out {given}"
    if given.exists() or given.is_symlink():
        if not given.is_dir():
            raise ScenarioError(f"{label}: exists and is not a directory")
        try:
            names = sorted(os.listdir(given))
        except OSError as e:
            raise ScenarioError(f"{label}: cannot read it: {e.strerror or e}") from None
        if names and not any(m in names for m in markers):
            raise ScenarioError(f"{label}: holds files that are not an ecnlab store ({names[0]}"
                                f"{', ...' if len(names) > 1 else ''}); give a new or empty directory, or an earlier "
                                f"one to add to")
    with storage(label, given.resolve().parent):
        given.mkdir(parents=True, exist_ok=True)
        probe = given / f"{_TAG}probe-{os.getpid()}-{secrets.token_hex(4)}"
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        os.unlink(probe)
    return given


def _tmp_path(target: Path, suffix: str = "") -> Path:
    return target.parent / f".{target.name}{_TAG}{os.getpid()}-{secrets.token_hex(4)}{suffix}"


def _clear_stale(target: Path, keep: tuple[str, ...] = ()) -> None:
    """Remove the temporary directories of ``target`` that a killed ecnlab left, after
    moving the stores among them (``keep``) aside as a failing command does (``_keep_store``):
    a SIGKILL loses no finished run either."""
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
        stale = target.parent / name
        if keep and stale.is_dir() and not stale.is_symlink():
            _keep_store(stale, _kept_path(target), keep)
        shutil.rmtree(stale, ignore_errors=True)


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
        raise StorageError(f"--out {given}", e.strerror or str(e)) from None
    return created


def _remove_empty(dirs: list[Path]) -> None:
    for d in dirs:  # deepest first; only what is still empty
        try:
            d.rmdir()
        except OSError:
            break


def _replace(tmp: Path, target: Path) -> None:
    """``tmp`` becomes ``target``; an earlier result there is removed. Both steps are
    single renames, so ``target`` holds one result whole at every moment, even if a SIGKILL
    comes between them (a system without ``RENAME_EXCHANGE``: two renames)."""
    try:
        os.rename(tmp, target)  # absent, or an empty directory: one step
        return
    except OSError as e:
        if e.errno not in (errno.ENOTEMPTY, errno.EEXIST):
            raise
    if _exchange(tmp, target):  # tmp now holds the earlier result, named for this (live) writer
        shutil.rmtree(tmp, ignore_errors=True)
        return
    old = _tmp_path(target, "-old")
    os.rename(target, old)
    os.rename(tmp, target)
    shutil.rmtree(old, ignore_errors=True)


_AT_FDCWD = -100
_RENAME_EXCHANGE = 2  # linux/fs.h


def _exchange(a: Path, b: Path) -> bool:
    """Swap two directories in one step (Linux ``renameat2(..., RENAME_EXCHANGE)``); False
    where the C library, the kernel or the file system cannot."""
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    if fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), os.fspath(b))


@contextlib.contextmanager
def result_dir(out: str | os.PathLike, keep: tuple[str, ...] = ()) -> Iterator[Path]:
    """Yield a fresh empty directory in which to write a whole result; when the block ends
    normally it becomes ``out`` (replacing an earlier result whole), otherwise it is removed
    with any parent directory created for it. ``out`` is checked first (``check_out``).
    ``keep``: subdirectories of an earlier result to start from, hard-linked (a sweep's
    run store, which only ever gains directories written whole)."""
    given = Path(out)
    label = f"--out {given}"
    target = check_out(given)
    created = _make_parents(target.parent, given)
    _clear_stale(target, keep)
    tmp = _tmp_path(target)
    try:
        tmp.mkdir()
    except OSError as e:
        _remove_empty(created)
        raise StorageError(label, e.strerror or str(e)) from None
    kept = _kept_path(target)
    try:
        with storage(label, tmp, target):
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
            if (kept / sub).is_dir():  # another command's, kept meanwhile: add to it
                shutil.copytree(tmp / sub, kept / sub, copy_function=_link_new, dirs_exist_ok=True)
            else:
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
        raise StorageError(str(d), e.strerror or str(e)) from None
    try:
        with storage(str(d), d):
            yield stage
        with signals_held(), storage(str(d), d):
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
