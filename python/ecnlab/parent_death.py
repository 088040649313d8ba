"""A child process that dies with its parent: Linux's parent-death signal
(``prctl(PR_SET_PDEATHSIG)``, prctl(2)). ecnlab's children (the emulated switch and the
hosts' agents of ``ecnlab emulate``, a sweep's run processes) must not outlive the process
that started them, even one killed by SIGKILL, which runs no clean-up of its own.

The kernel sends the signal when the *thread* that started the child ends, not the whole
process: a caller starts children from threads that outlive them. Each caller chooses the
signal and says why at the call.

``set_name`` (``PR_SET_NAME``) names a process as ``ps`` and ``top`` show it: a sweep's run
process says how far its run is (``ecnlab-run 42%``)."""

from __future__ import annotations

import ctypes
import sys

PR_SET_PDEATHSIG = 1  # include/uapi/linux/prctl.h
PR_SET_NAME = 15


def die_with_parent(sig: int) -> bool:
    """In the child (between fork and exec, or first thing in a fresh interpreter): have the
    kernel send ``sig`` to this process when its parent goes. False where that cannot be
    set (not Linux, no libc); the caller then relies on its other ways of cleaning up.
    A parent that died before the call is not noticed: compare ``os.getppid()`` after it."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def set_name(name: str) -> bool:
    """Name the calling thread (of a one-thread process: the process) as ``/proc/PID/comm``,
    ``ps`` and ``top`` show it: at most 15 bytes. False where that cannot be set."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(PR_SET_NAME, name.encode()[:15], 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False
