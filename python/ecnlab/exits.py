"""How every ecnlab command ends when something goes wrong: one line on stderr and an exit
status, decided here for `run`, `sweep`, `reproduce`, `advise`, `emulate` and `validate`.

2: the user can fix it (a bad scenario or option: ``ScenarioError``; an environment the
emulator cannot use: ``EmulationError``); 130: Ctrl-C; 143: SIGTERM or SIGHUP during an
emulation; 0: the reader of our output went away (``ecnlab list | head -1``); 1: ecnlab's own
fault, named as an internal error (a Rust panic arrives as ``PanicException``, a
``BaseException``). A storage fault (a full or read-only file system, no permission, a path
through a file) is the user's to fix: 2, naming the path, whichever command met it
(``outdir.storage_error``; the writers name their ``--out``). A message never exceeds a few
hundred characters, and its control and bidirectional formatting characters are escaped
(``_core.clip``, the core's ``de::clip_message``): a file name echoed in it cannot reorder
or hide the rest of the line on a terminal."""

from __future__ import annotations

import os
import sys

from .api import SimulationError
from .scenario import ScenarioError


class EmulationError(RuntimeError):
    """Something the user can fix (environment, scenario outside what emulation supports).
    The message is one line."""


def _storage_line(e: OSError) -> str | None:
    """A storage fault no writer named (see ``outdir.storage``), as its one line."""
    from .outdir import STORAGE_ERRNOS

    if e.errno not in STORAGE_ERRNOS:
        return None
    name = e.filename2 if e.filename2 is not None else e.filename
    if isinstance(name, (str, bytes, os.PathLike)):
        return f"{os.fsdecode(name)}: {e.strerror}"
    return f"cannot write: {e.strerror}"


class Terminated(BaseException):
    """SIGTERM/SIGHUP during an emulation: unwinds like KeyboardInterrupt so cleanup runs."""


def stdout_closed() -> int:
    """The reader of our output went away: not an error. Later writes, the interpreter's
    final flush included, go to /dev/null."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return 0


def exit_status(e: BaseException, cleanup: str = "") -> int:
    """Write the one line for `e` and return the exit status. ``cleanup`` follows an
    interruption's line (the emulator: " (namespaces removed)"). ``SystemExit`` is re-raised:
    argparse and ``sys.exit`` have said what they had to."""
    from ._core import clip

    if isinstance(e, SystemExit):
        raise e
    if isinstance(e, (ScenarioError, EmulationError)):
        sys.stderr.write(f"ecnlab: error: {clip(str(e))}\n")
        return 2
    if isinstance(e, KeyboardInterrupt):
        sys.stderr.write(f"ecnlab: interrupted{cleanup}\n")
        return 130
    if isinstance(e, Terminated):
        sys.stderr.write(f"ecnlab: terminated{cleanup}\n")
        return 143
    if isinstance(e, BrokenPipeError):
        return stdout_closed()
    if isinstance(e, OSError) and (line := _storage_line(e)):
        sys.stderr.write(f"ecnlab: error: {clip(line)}\n")
        return 2
    if isinstance(e, SimulationError):
        sys.stderr.write(f"ecnlab: internal error: {clip(str(e))}\n")
        return 1
    msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    sys.stderr.write(f"ecnlab: internal error: {type(e).__name__}: {clip(msg)}\n")
    if os.environ.get("ECNLAB_DEBUG"):
        raise e
    return 1
