"""What keeps the solution's process out of fpa's own processes' memory and descriptors (Linux).

A process may read and write another's memory (``/proc/PID/mem``, ``ptrace``, ``process_vm_readv``) and open its
descriptors (``/proc/PID/fd/N``) when both run as the same user and the target is *dumpable*, or when it holds
``CAP_SYS_PTRACE`` (proc(5), ptrace(2) "Ptrace access mode checking"). The solution runs as the user running
``fpa``, so without more it could read the reference's output out of the worker, or write into the verdict.
Hence:

* fpa's processes that judge (the ``fpa`` command, the fork server, the worker) mark themselves not dumpable
  (``prctl(PR_SET_DUMPABLE, 0)``): their ``/proc`` files then belong to root, and only ``CAP_SYS_PTRACE`` reaches
  them. (A side effect: no core dumps of them, and a debugger needs root.)
* The solution's process gives up ``CAP_SYS_PTRACE`` (where it runs as root with it, as in many containers):
  from its effective, permitted and inheritable sets, and from its bounding set, so no program it runs gets it
  back (capabilities(7)).

* The fork server, which every job's processes are forked from, adopts the orphans among their descendants
  (``adopt_orphans``) and ends them: a process the user's code starts in a session of its own does not outlive
  its job by more than a moment (``fp_analysis.forkserver``).

All are best effort: on another OS, or where ``prctl``/``capset`` are refused, they do nothing and say so by
returning False. Signals and files are not covered: a process of the same user may still signal fpa's processes
or write files that user can write (docs/isolation.md says what that leaves, and what fpa checks instead).
"""

from __future__ import annotations

import ctypes
import sys

__all__ = ["adopt_orphans", "drop_ptrace", "not_dumpable"]

_PR_SET_DUMPABLE = 4
_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_NO_NEW_PRIVS = 38
_PR_CAPBSET_DROP = 24
_CAP_SYS_PTRACE = 19
_CAPABILITY_VERSION_3 = 0x20080522  # capget(2): two 32-bit words per set


def _libc():
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def not_dumpable() -> bool:
    """Make this process not dumpable (see the module docstring); whether it is now."""
    libc = _libc()
    return libc is not None and libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) == 0


def adopt_orphans() -> bool:
    """Make this process the subreaper of its descendants (``prctl(PR_SET_CHILD_SUBREAPER)``): a process whose
    parent ends is re-parented here, not to init — so a daemon the user's code starts in a session of its own is
    still this process's to end. Whether it now is."""
    libc = _libc()
    return libc is not None and libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0


class _Header(ctypes.Structure):
    _fields_ = (("version", ctypes.c_uint32), ("pid", ctypes.c_int))


class _Data(ctypes.Structure):
    _fields_ = (("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32))


def drop_ptrace() -> bool:
    """Give up ``CAP_SYS_PTRACE`` for good (see the module docstring), and the means of gaining privileges back
    through a program it runs (``PR_SET_NO_NEW_PRIVS``: set-user-ID bits and file capabilities are ignored); whether
    this process is now without it."""
    libc = _libc()
    if libc is None:
        return False
    libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    libc.prctl(_PR_CAPBSET_DROP, _CAP_SYS_PTRACE, 0, 0, 0)  # refused without CAP_SETPCAP: nothing to drop there then
    header, data = _Header(_CAPABILITY_VERSION_3, 0), (_Data * 2)()
    if libc.capget(ctypes.byref(header), data) != 0:
        return False
    bit = 1 << _CAP_SYS_PTRACE  # in the first 32-bit word
    if (data[0].effective | data[0].permitted | data[0].inheritable) & bit:
        data[0].effective &= ~bit
        data[0].permitted &= ~bit
        data[0].inheritable &= ~bit
        return libc.capset(ctypes.byref(header), data) == 0
    return True
