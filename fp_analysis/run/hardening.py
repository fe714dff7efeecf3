"""What keeps the solution's process out of fpa's own processes' memory and descriptors (Linux).

A process may read and write another's memory (``/proc/PID/mem``, ``ptrace``, ``process_vm_readv``) and open its
descriptors (``/proc/PID/fd/N``) when both run as the same user and the target is *dumpable*, or when it holds
``CAP_SYS_PTRACE`` (proc(5), ptrace(2) "Ptrace access mode checking"). The solution runs as the user running
``fpa``, so without more it could read the reference's output out of the worker, or write into the verdict.
Hence:

* fpa's processes that judge (the ``fpa`` command, the fork server, the worker) mark themselves not dumpable
  (``prctl(PR_SET_DUMPABLE, 0)``): their ``/proc`` files then belong to root, and only ``CAP_SYS_PTRACE`` reaches
  them. (A side effect: no core dumps of them, and a debugger needs root.)
* The solution's process gives up every capability (where it runs as root, as in many containers: then
  ``CAP_SYS_PTRACE`` would reach every process), from all its sets and its bounding set, so no program it runs gets
  one back (``drop_privileges``, capabilities(7)).

* The solution's process confines itself with Landlock (``sandbox``, Linux 5.13 and later; no privilege needed):
  from then on it and everything it starts may write only below the folders a build needs (its own temporary
  folder, the extensions' build folder, the compilers' caches, ``/dev``) — not the problem, the other samples, the
  results store or fpa's installation —, with Landlock ABI 4 (Linux 6.7), may neither connect nor bind a TCP
  socket (a local Ray cluster's tasks run outside the sandbox: a solution that reached one could run code there,
  and nothing a KernelBench solution does needs TCP), and, with ABI 6 (Linux 6.12), may not signal any process
  outside its sandbox: it cannot stop or kill fpa's processes.
* The solution's process may open no IPv4 or IPv6 socket (``no_internet_sockets``, seccomp): Landlock refuses TCP
  connections, but not MPTCP (``IPPROTO_MPTCP``, which falls back to TCP against a TCP server) or UDP; nothing a
  KernelBench solution does needs the network, and a local Ray cluster's tasks run outside the sandbox. Calls of
  another architecture's table (i386's ``socketcall`` on x86_64) are refused whole.
* The solution's process may not change any file's mode or owner (``no_mode_changes``, seccomp): Landlock has no
  right for them, and a process of the user that owns a file (as root, any file) could otherwise make fpa's
  installation or store unreadable for later runs, or change the mode of another sample's file so that its pair's
  job finds its files changed. Compilers and torch's builds do not need it (a load_inline build of C++ and an nvcc
  build ran under it).
* The fork server, which every job's processes are forked from, adopts the orphans among their descendants
  (``adopt_orphans``) and ends them: a process the user's code starts in a session of its own does not outlive
  its job by more than a moment (``fp_analysis.run.forkserver_loop``).

All are best effort: on another OS, or where ``prctl``/``capset`` are refused, they do nothing and say so by
returning False. Signals and files are not covered: a process of the same user may still signal fpa's processes
or write files that user can write (docs/isolation.md says what that leaves, and what fpa checks instead).
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import typing

__all__ = [
    "SANDBOX_ENV",
    "Sandbox",
    "adopt_orphans",
    "drop_privileges",
    "no_internet_sockets",
    "no_mode_changes",
    "not_dumpable",
    "own_limits_only",
    "resume_if_stopped",
    "sandbox",
]

# Set to 0, the solution's process runs without its sandbox (``sandbox``): for a solution that must write elsewhere,
# run by someone who trusts it.
SANDBOX_ENV = "FPA_SANDBOX"

_PR_SET_DUMPABLE = 4
_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_NO_NEW_PRIVS = 38
_PR_CAPBSET_DROP = 24
_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
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


def resume_if_stopped(pid: int) -> bool:
    """Send SIGCONT to ``pid`` if it is stopped (a process of the same user may SIGSTOP fpa's own where Landlock does
    not scope signals; none of fpa's is ever stopped on purpose); whether it was."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            state = stat.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    if state not in ("T", "t"):
        return False
    try:
        os.kill(pid, signal.SIGCONT)
    except OSError:
        return False
    return True


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


def drop_privileges() -> bool:
    """Give up every capability for good — from the effective, permitted, inheritable and ambient sets and from the
    bounding set, so no program it runs gets one back — and the means of gaining privileges through a program
    (``PR_SET_NO_NEW_PRIVS``: set-user-ID bits and file capabilities are ignored). A process running as root keeps
    its user (the files it may read are the user's), but not ``CAP_SYS_PTRACE`` (the memory of fpa's processes),
    ``CAP_SYS_ADMIN`` (freezing a filesystem, a terminal's input), ``CAP_LINUX_IMMUTABLE`` (making fpa's files
    immutable) or any other (capabilities(7)). Whether this process is now without any."""
    libc = _libc()
    if libc is None:
        return False
    libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    for capability in range(64):  # refused past the last one the kernel knows, and without CAP_SETPCAP
        libc.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0)
    header, data = _Header(_CAPABILITY_VERSION_3, 0), (_Data * 2)()
    if libc.capget(ctypes.byref(header), data) != 0:
        return False
    if any(word.effective or word.permitted or word.inheritable for word in data):
        data = (_Data * 2)()  # all three sets empty
        return libc.capset(ctypes.byref(header), data) == 0
    return True


# Landlock (linux/landlock.h): the system calls are the same on every architecture (the generic table).
_LANDLOCK_CREATE_RULESET, _LANDLOCK_ADD_RULE, _LANDLOCK_RESTRICT_SELF = 444, 445, 446
_LANDLOCK_CREATE_RULESET_VERSION = 1
_LANDLOCK_RULE_PATH_BENEATH = 1
_SCOPE_ABSTRACT_UNIX, _SCOPE_SIGNAL = 1 << 0, 1 << 1  # ABI 6
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1  # ABI 4: handled with no rule, both are refused
# The access rights to the file system that change it (reading and executing stay free): writing, removing, making
# anything; moving between folders (REFER, ABI 2) and truncating (ABI 3).
_WRITE_FILE, _REMOVE_DIR, _REMOVE_FILE, _MAKE_CHAR, _MAKE_DIR, _MAKE_REG = (
    1 << 1,
    1 << 4,
    1 << 5,
    1 << 6,
    1 << 7,
    1 << 8,
)
_MAKE_SOCK, _MAKE_FIFO, _MAKE_BLOCK, _MAKE_SYM, _REFER, _TRUNCATE = 1 << 9, 1 << 10, 1 << 11, 1 << 12, 1 << 13, 1 << 14
_WRITES_ABI1 = (_WRITE_FILE | _REMOVE_DIR | _REMOVE_FILE | _MAKE_CHAR | _MAKE_DIR | _MAKE_REG | _MAKE_SOCK | _MAKE_FIFO
                | _MAKE_BLOCK | _MAKE_SYM)  # fmt: skip
_WRITES = {1: _WRITES_ABI1, 2: _WRITES_ABI1 | _REFER, 3: _WRITES_ABI1 | _REFER | _TRUNCATE}
# Reading and executing (ABI 1), handled only where a sandbox names what may be read (``sandbox``'s ``readable``): a
# regular file takes only the file rights (executing, reading and the writes to a file), a folder all of them.
_EXECUTE, _READ_FILE, _READ_DIR = 1 << 0, 1 << 2, 1 << 3
_FILE_RIGHTS = _EXECUTE | _WRITE_FILE | _READ_FILE | _TRUNCATE


class _RulesetAttr(ctypes.Structure):
    _fields_ = (("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64))  # fmt: skip


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


class Sandbox(typing.NamedTuple):
    """What ``sandbox`` put in place: the Landlock ABI, the folders left writable, whether signals are scoped and
    whether TCP is refused."""

    abi: int
    writable: tuple[str, ...]
    signals: bool
    tcp_refused: bool = False


def sandbox(writable, readable=None) -> Sandbox | None:
    """Confine this process and all it starts (see the module docstring): writes only below the existing folders of
    ``writable``, no TCP where the kernel restricts it, no signals out of the sandbox where the kernel scopes them;
    given ``readable`` (folders and files), reads and runs too only below those and ``writable`` (a build of a
    solution's sources made by fpa, ``extension_build``: what it compiles may name any file). None where Landlock is
    not there (an older kernel, another OS, a seccomp filter refusing it): nothing is confined then."""
    libc = _libc()
    if libc is None:
        return None
    libc.syscall.restype = ctypes.c_long
    abi = libc.syscall(_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0), _LANDLOCK_CREATE_RULESET_VERSION)
    if abi < 1:
        return None
    writes = _WRITES[min(abi, 3)]
    reads = 0 if readable is None else _EXECUTE | _READ_FILE | _READ_DIR
    net = _NET_BIND_TCP | _NET_CONNECT_TCP if abi >= 4 else 0
    # with ``readable`` (a build of fpa's), nor connect to an abstract unix socket made outside the sandbox
    scoped = (_SCOPE_SIGNAL | (_SCOPE_ABSTRACT_UNIX if readable is not None else 0)) if abi >= 6 else 0
    attr = _RulesetAttr(writes | reads, net, scoped)
    # the structure as long as the kernel's ABI knows it: handled_access_net from ABI 4, scoped from ABI 6
    size = ctypes.sizeof(ctypes.c_uint64) * (3 if abi >= 6 else 2 if abi >= 4 else 1)
    ruleset = libc.syscall(_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), 0)
    if ruleset < 0 and net:  # a kernel without TCP (EAFNOSUPPORT): the files confined all the same
        net, attr.handled_access_net = 0, 0
        ruleset = libc.syscall(_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), 0)
    if ruleset < 0:
        return None
    allowed = []
    try:
        for place in writable:
            if _allow(libc, ruleset, place, writes | reads, directory=os.path.isdir(place)):
                allowed.append(str(place))
        for place in readable or ():
            _allow(libc, ruleset, place, reads, directory=os.path.isdir(place))
        libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)  # what restricting oneself without privileges requires
        if libc.syscall(_LANDLOCK_RESTRICT_SELF, ruleset, 0) != 0:
            return None
    finally:
        os.close(ruleset)
    return Sandbox(abi, tuple(allowed), abi >= 6, bool(net))


def _allow(libc, ruleset: int, place, rights: int, *, directory: bool) -> bool:
    """Add the rule that ``rights`` hold below ``place`` (a folder; or a file, which takes only file rights); whether
    it was added (a place that is not there allows nothing)."""
    try:
        descriptor = os.open(place, os.O_PATH | os.O_CLOEXEC | (os.O_DIRECTORY if directory else 0))
    except OSError:
        return False
    try:
        rule = _PathBeneathAttr(rights if directory else rights & _FILE_RIGHTS, descriptor)
        return libc.syscall(_LANDLOCK_ADD_RULE, ruleset, _LANDLOCK_RULE_PATH_BENEATH, ctypes.byref(rule), 0) == 0
    finally:
        os.close(descriptor)


# seccomp (linux/seccomp.h, linux/filter.h): a classic BPF program over struct seccomp_data {int nr; __u32 arch;
# __u64 instruction_pointer; __u64 args[6]}.
_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 22, 2
_SECCOMP_RET_ALLOW, _SECCOMP_RET_ERRNO = 0x7FFF0000, 0x00050000
_EPERM = 1
_BPF_LD_W_ABS, _BPF_JEQ_K, _BPF_RET_K = 0x20, 0x15, 0x06
# prlimit64's number on the architectures fpa runs on: (AUDIT_ARCH_*, __NR_prlimit64)
_PRLIMIT64 = {"x86_64": (0xC000003E, 302), "aarch64": (0xC00000B7, 261)}


class _SockFilter(ctypes.Structure):
    _fields_ = (("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32))


class _SockFprog(ctypes.Structure):
    _fields_ = (("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_SockFilter)))


def own_limits_only() -> bool:
    """From now on this process and all it starts may set resource limits only on themselves: ``prlimit64`` on
    another process (the worker, the fork server, ``fpa``, another solution's process) fails with EPERM. Landlock
    does not cover it, and a process of the same user may otherwise set a CPU, file-size or descriptor limit that
    kills or breaks any of fpa's. A seccomp filter (seccomp(2)); needs ``PR_SET_NO_NEW_PRIVS``, which
    ``drop_privileges`` sets. Whether it is in place."""
    libc = _libc()
    machine = os.uname().machine
    if libc is None or machine not in _PRLIMIT64:
        return False
    arch, number = _PRLIMIT64[machine]
    own = os.getpid()
    program = [  # jumps count from the next instruction; 8 is "allow"
        _SockFilter(_BPF_LD_W_ABS, 0, 0, 4),  # 0: the architecture
        _SockFilter(_BPF_JEQ_K, 0, 6, arch),  # 1: another one: allow
        _SockFilter(_BPF_LD_W_ABS, 0, 0, 0),  # 2: the system call
        _SockFilter(_BPF_JEQ_K, 0, 4, number),  # 3: not prlimit64: allow
        _SockFilter(_BPF_LD_W_ABS, 0, 0, 16),  # 4: its pid (args[0], low word)
        _SockFilter(_BPF_JEQ_K, 2, 0, 0),  # 5: 0, this process: allow
        _SockFilter(_BPF_JEQ_K, 1, 0, own),  # 6: this process by its pid: allow
        _SockFilter(_BPF_RET_K, 0, 0, _SECCOMP_RET_ERRNO | _EPERM),  # 7: another process: EPERM
        _SockFilter(_BPF_RET_K, 0, 0, _SECCOMP_RET_ALLOW),  # 8
    ]
    return _install(libc, program)


# chmod, fchmod, fchmodat, fchmodat2, chown, fchown, lchown, fchownat on the architectures fpa runs on (arm64 has only
# the *at forms and fchmod/fchown): (AUDIT_ARCH_*, the calls' numbers)
_MODE_CHANGES = {
    "x86_64": (0xC000003E, (90, 91, 268, 452, 92, 93, 94, 260)),
    "aarch64": (0xC00000B7, (52, 53, 452, 54, 55)),
}


def no_mode_changes() -> bool:
    """From now on this process and all it starts may change no file's mode or owner: the calls fail with EPERM
    (module docstring). A seccomp filter (seccomp(2)); needs ``PR_SET_NO_NEW_PRIVS``. Whether it is in place."""
    libc = _libc()
    machine = os.uname().machine
    if libc is None or machine not in _MODE_CHANGES:
        return False
    arch, numbers = _MODE_CHANGES[machine]
    count = len(numbers)
    program = [  # jumps count from the next instruction: "allow" is the one after the calls, "refuse" the last
        _SockFilter(_BPF_LD_W_ABS, 0, 0, 4),  # the architecture
        _SockFilter(_BPF_JEQ_K, 0, count + 1, arch),  # another one: allow
        _SockFilter(_BPF_LD_W_ABS, 0, 0, 0),  # the system call
        *(_SockFilter(_BPF_JEQ_K, count - i, 0, number) for i, number in enumerate(numbers)),  # a listed one: refuse
        _SockFilter(_BPF_RET_K, 0, 0, _SECCOMP_RET_ALLOW),
        _SockFilter(_BPF_RET_K, 0, 0, _SECCOMP_RET_ERRNO | _EPERM),
    ]
    return _install(libc, program)


# socket(2)'s number, and the address families refused (AF_INET, AF_INET6)
_SOCKET = {"x86_64": (0xC000003E, 41), "aarch64": (0xC00000B7, 198)}
_INTERNET = (2, 10)


def no_internet_sockets() -> bool:
    """From now on this process and all it starts may open no IPv4 or IPv6 socket (EPERM), and make no call of
    another architecture's table (module docstring). A seccomp filter; whether it is in place."""
    libc = _libc()
    machine = os.uname().machine
    if libc is None or machine not in _SOCKET:
        return False
    arch, number = _SOCKET[machine]
    program = [  # jumps count from the next instruction: 7 is "allow", 8 "refuse"
        _SockFilter(_BPF_LD_W_ABS, 0, 0, 4),  # 0: the architecture
        _SockFilter(_BPF_JEQ_K, 0, 6, arch),  # 1: another one: refuse
        _SockFilter(_BPF_LD_W_ABS, 0, 0, 0),  # 2: the system call
        _SockFilter(_BPF_JEQ_K, 0, 3, number),  # 3: not socket: allow
        _SockFilter(_BPF_LD_W_ABS, 0, 0, 16),  # 4: its address family (args[0], low word)
        _SockFilter(_BPF_JEQ_K, 2, 0, _INTERNET[0]),  # 5: IPv4: refuse
        _SockFilter(_BPF_JEQ_K, 1, 0, _INTERNET[1]),  # 6: IPv6: refuse
        _SockFilter(_BPF_RET_K, 0, 0, _SECCOMP_RET_ALLOW),  # 7
        _SockFilter(_BPF_RET_K, 0, 0, _SECCOMP_RET_ERRNO | _EPERM),  # 8
    ]
    return _install(libc, program)


def _install(libc, program: list) -> bool:
    """Install the seccomp filter ``program`` (classic BPF) on this process and all it starts; whether it is in place.
    Needs ``PR_SET_NO_NEW_PRIVS`` (set here)."""
    filters = (_SockFilter * len(program))(*program)
    fprog = _SockFprog(len(program), filters)
    libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    return libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) == 0
