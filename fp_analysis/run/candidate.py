"""The solution's own process: ``ModelNew`` imported, built and run apart from the reference and the analysis.

A solution can change anything in the process it runs in — switch TF32 off, replace ``F.conv2d`` or
``nn.Conv2d.forward``, set a default device, import its own ``common`` module — and in KernelBench, where
both models share one process, such a change reaches the reference too, which can make a wrong kernel
pass. Here the solution runs in a process of its own (``serve``), started by the worker that runs the
problem and the analysis (``CandidateProcess``); the two talk over a socket pair, one request at a time:

* ``load``: import the solution file (and say which of torch's switches its import changed: ``notes``);
* ``build``: seed torch as KernelBench does, then ``ModelNew(*args, **kwargs).to(device)``; the reply holds
  the parameters and buffers the parameter check can use (floating tensors of the sizes asked for);
* ``forward``: run it on inputs (moved to the model's device) under ``torch.no_grad``; the reply holds the
  device the output was made on, which inputs the solution wrote into, and the output: on a GPU, written into a
  buffer the worker exported for it; otherwise as CPU bytes. CUDA inputs cross as CUDA IPC handles to copies in a
  memory pool of the worker's own, which the candidate copies into memory of its own (``fp_analysis.run.tensor_ipc``);
  where a handle cannot be opened the worker sends the inputs again as bytes, and keeps to bytes for the rest of
  the job.

The channel carries ``fp_analysis.run.wire`` frames — a JSON header and raw bytes, never a pickle — because the
process at its other end runs code that may be hostile to the grader: nothing it sends is executed, and the worker
opens no handle it made. Each reply must answer the request just sent (its sequence number), carry the candidate
process's pid (a stray copy of the process answering is ``Fate.FORKED``), and be one of the records its request
allows, each field of its type and within the sizes the request can need (``fp_analysis.run.replies``); anything else
is ``Fate.MALFORMED_REPLY``, and the process is ended, since nothing it sends after that can be trusted. A call
that forks the process (Python's ``os.fork``, fork-based ``multiprocessing``) is ``Fate.FORKED`` itself: a copy
could answer in its place.

Each request is a call into the user's code: the client times it (``timeout``; a request that does not
return kills the candidate process with what it started), reports it to the worker's parent
(``worker.report_event``), and turns the candidate's exception, exit, death or wrong output into a
``UserCodeError`` of side ``solution``.
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import signal
import socket
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Mapping

from ..errors import Fate, FpaError, InternalError, Side, UserCodeError
from . import extension_requests, extension_store, hardening, places, wire
from .children import ChildProcess
from .childsetup import CHANNEL_LOST_STATUS, child_setup
from .hardening import SANDBOX_ENV
from .replies import checked
from .snapshot import Snapshot
from .switches import switch_notes, switches
from .tensor_ipc import IpcUnavailable, SharedCuda, exportable_copy, exportable_empty, share
from .usercode import UserFile, call_id, copied, seed_all, written_inputs
from .worker import report_event

__all__ = ["SANDBOX_ENV", "CandidateProcess", "prepare_job", "serve"]

_CUDA_ENV = "FPA_SOLUTION_CUDA"  # 1: the job runs on a GPU, so the solution's process starts CUDA before its sandbox

# Seconds the candidate process may take to start (import torch): ours, not the user's, so not --timeout.
_START_S = 600.0
# What a request from the worker may carry: it is trusted; the bound is memory's.
_REQUESTS = wire.Limits(header_bytes=1 << 40)
# Requests to fpa's store of builds one process may make (``_extension``): a solution builds a few extensions; past
# this, each is answered ``own`` at once.
_EXTENSION_REQUESTS = 64
# Seconds a process that closed its end of the channel has to end before it is ended.
_CLOSING_S = 5.0
# What a reply may carry besides tensors (notes, a user error's traceback): far more than any honest one needs.
_REPLY_HEADER = 1 << 22
# A reply's tensors may hold this many times the elements it needs (an output of the wrong shape is still read,
# so that its shape is what the failure names), plus a little: beyond it a reply is oversized.
_SLACK = 4
_SLACK_ELEMENTS = 1 << 20


class CandidateProcess:
    """The client end: starts the candidate process on ``solution`` and asks it to import the file at once
    (so its import overlaps the worker's own work); ``loaded`` waits for that. ``sources``: the solution's
    snapshot (``Snapshot.encoded``), which the file and its helper modules are imported from; ``cuda``: the job runs
    on a GPU, so the process starts CUDA before it confines itself (``serve``)."""

    def __init__(
        self, solution: str, folder: str | pathlib.Path, timeout: float, sources: dict | None = None, cuda: bool = False
    ):
        self.timeout = timeout
        self.name = pathlib.Path(solution).name
        ours, theirs = socket.socketpair()
        # the only temporary folder its sandbox lets it write; in the job's folder, which fpa's own process removes at
        # the job's end even where the worker was killed (in /tmp such folders were left behind, one per killed job)
        self.tmp = tempfile.mkdtemp(prefix="solution-tmp-", dir=folder)
        folders = places.solution_folders(self.tmp, sources, _snapshot_name(solution))
        self.builds = pathlib.Path(folders["TORCH_EXTENSIONS_DIR"])
        self.in_use = places.hold_in_use(self.builds)  # ``fpa cache --prune`` leaves it while this job runs
        try:
            self.child = ChildProcess(
                "candidate",
                [str(solution), str(theirs.fileno())],
                pathlib.Path(folder),
                Side.SOLUTION.value,
                pass_fds=(theirs.fileno(),),
                env=folders | {_CUDA_ENV: "1" if cuda else "0"},
            )
        except BaseException:
            ours.close()
            places.remove_folder(self.tmp)
            raise
        finally:
            theirs.close()
        self.sock = ours
        self.started_at = time.time()  # wall clock: compared with files' ctime (``places.remove_batons``)
        self.seq = 0  # of the last request sent; the process's "ready" is 0
        self.notes: list[str] | None = None
        self.failed: UserCodeError | None = None  # the process answered once for good (its import failed) or broke
        self.ipc = True  # CUDA tensors cross as IPC handles until one cannot be opened
        # how its load_inline calls were answered (``extension_store``): compiled in the store, found there, or left
        # to the solution's own build; how many it made; the seconds its builds in the store may still take, together
        self.extensions = dict.fromkeys(extension_store.ANSWERS, 0)
        self.requests, self.build_left = 0, extension_store.build_seconds(timeout)
        self.interrupted = False  # ended by this side mid-call (a timeout, a reply not to be trusted)
        load = {"op": "load", "sources": sources}
        self._load_call = self._send(load, f"importing {self.name}", expect="load", report=False)

    def __enter__(self) -> CandidateProcess:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def alive(self) -> bool:
        """Whether the candidate process still runs (a timeout or the user's code may have ended it)."""
        return self.child.proc.poll() is None

    def close(self) -> None:
        """End the candidate process (and what it started), and remove its temporary folder."""
        with contextlib.suppress(OSError):
            self.sock.close()
        self.child.close()
        places.remove_folder(self.tmp)
        if self.interrupted:
            places.remove_batons(self.builds, self.started_at)
        if self.in_use is not None:
            self.in_use.close()

    def loaded(self) -> list[str]:
        """Wait for the solution's import; returns the notes on torch switches its import changed.

        The process first says it is ready (torch imported: our start-up, not the user's code, so not under
        the timeout); the import of the solution is timed from then.
        """
        if self.failed is not None:  # the process answered once: asking again would wait for nothing
            raise self.failed
        if self.notes is None:
            call = self._load_call
            if not wire.readable(self.sock, _START_S):
                raise InternalError(f"the candidate process did not start within {_START_S:g} s")
            self._reply({**call, "seq": 0, "expect": "ready"}, None, wire.Limits(_REPLY_HEADER, 0, 0))
            report_event("enter", **_event(call))
            call["sent"] = time.monotonic()
            try:
                self.notes = switch_notes(self._receive(call)["switches"])
            except UserCodeError as error:
                self.failed = self.failed or error  # every later call fails the same: the process answered for good
                raise
        return self.notes

    def build(self, args: list, kwargs: dict, seed: int, device, *, where: str, detail=None, replay=None,
              like: Mapping | None = None) -> dict:  # fmt: skip
        """Build ``ModelNew(*args, **kwargs)`` on ``device`` after ``torch.manual_seed(seed)``; its floating
        parameters and buffers of the sizes of ``like``'s tensors or of parts of them (a size that divides one: a
        fused parameter held in parts), as many as ``2 × Σ sizes`` elements allow (name → CPU tensor), and None for
        each one a Lazy module has not initialised yet. ``like``: the reference's parameters (name → tensor), the ones
        the parameter check matches the candidate's with; their elements bound the reply, as the reference's output
        bounds ``forward``'s."""
        self.loaded()
        numels = [t.numel() for t in (like or {}).values()]
        request = {"op": "build", "args": list(args), "kwargs": dict(kwargs), "seed": seed, "device": str(device),
                   "keep_numels": sorted(set(numels)), "keep_elements": 2 * sum(numels),
                   **_context(where, detail, replay)}  # fmt: skip
        limits = wire.Limits(
            _REPLY_HEADER,
            payload_bytes=8 * _SLACK * sum(numels) + 8 * _SLACK_ELEMENTS,
            elements=max(set(numels) | {1}),
        )
        return self._receive(self._send(request, where, detail, replay, expect="build"), limits)["parameters"]

    def forward(self, inputs: list, *, like, detail=None, replay=None):
        """``ModelNew.forward(*inputs)``: (the output, the device it was made on, the indices of the inputs it wrote
        into). ``like``: the reference's output. Where it is on the GPU and handles can be used, the output is
        written into a buffer of its shape and dtype that this process exported (``tensor_ipc.exportable_empty``)
        and arrives on the GPU; otherwise it arrives as a CPU tensor, which the reply may hold up to a few times the
        reference output's size (a wrong shape is still named)."""
        import torch

        kept = []  # what the candidate opens by handle: alive until it has answered

        def exported(tensor):
            if tensor is not None:
                handle = share(tensor)
                if handle is not None:
                    kept.append(tensor)
                    return handle
            return None

        def as_sent(t):
            if not isinstance(t, torch.Tensor):
                return t
            if self.ipc and t.is_cuda:
                handle = exported(exportable_copy(t))  # the candidate's own: what its code does to it stays there
                if handle is not None:
                    return handle
            return t.detach().cpu()

        where = "ModelNew.forward"
        request = {"op": "forward", "inputs": [as_sent(t) for t in inputs], **_context(where, detail, replay)}
        buffer = exportable_empty(like) if self.ipc and like.is_cuda else None
        request["into"] = exported(buffer)
        elements = _SLACK * like.numel() + _SLACK_ELEMENTS
        limits = wire.Limits(_REPLY_HEADER, tensors=1, payload_bytes=8 * elements, elements=elements)
        call = self._send(request, where, detail, replay, expect="forward")
        reply = self._receive(call, limits, len(inputs))
        if "ipc_unavailable" in reply:  # it opened none of the handles, and ran none of the user's code
            if not kept:  # it was sent none: no reply of fpa's says that
                raise self._broken(call, Fate.MALFORMED_REPLY, "a reply that it could not open handles it was not sent")
            self.ipc = False
            return self.forward(inputs, like=like, detail=detail, replay=replay)
        if "returned" in reply:
            raise UserCodeError(
                f"{where} returned {reply['returned']}",
                side=Side.SOLUTION,
                where=where,
                fate=Fate.BAD_OUTPUT,
                details=_context(None, detail, replay),
            )
        if "written" in reply:
            if buffer is None:
                raise self._broken(call, Fate.MALFORMED_REPLY, "a reply that it wrote into a buffer it was not given")
            return buffer.clone(), reply["device"], reply["mutated"]  # copied out: what it writes later stays there
        return reply["output"], reply["device"], reply["mutated"]

    # ------------------------------------------------------------------------------------------- the channel

    def _send(self, request: dict, where: str, detail=None, replay=None, *, expect: str, report: bool = True) -> dict:
        """Send ``request`` as the next in turn; the call it starts (what ``_receive`` waits for)."""
        if self.failed is not None:
            raise self.failed
        self.seq += 1
        call = {"id": call_id(), "side": Side.SOLUTION.value, **_context(where, detail, replay), "seq": self.seq,
                "expect": expect}  # fmt: skip
        if report:
            report_event("enter", **_event(call))
        call["sent"] = time.monotonic()
        try:
            wire.send(self.sock, self.seq, {**request, "seq": self.seq})
        except wire.Unsendable as error:  # e.g. an object of the problem's own class among get_init_inputs()
            if report:
                report_event("leave", id=call["id"], seconds=0.0)
            raise FpaError(
                f"the arguments for {where} cannot be sent to the solution's process (only plain data and "
                f"tensors can): {error}"
            ) from None
        except OSError:
            pass  # the process is gone; _receive names how it ended
        return call

    def _receive(self, call: dict, limits: wire.Limits | None = None, inputs: int = 0) -> dict:
        """The reply to ``call``, waited for at most the timeout from when it was sent; raises what it says.
        ``limits``: what the reply may carry (none of tensors by default); ``inputs``: how many a forward was given."""
        reply = {}
        try:
            reply = self._reply(call, call["sent"] + self.timeout, limits or wire.Limits(_REPLY_HEADER, 0, 0), inputs)
        finally:
            # the process's own measure of the call, where it sent one (the reply may wait while we work), less the
            # time it was stopped while fpa built for it (``_extension``)
            seconds = reply.get("seconds", time.monotonic() - call["sent"]) - call.get("paused", 0.0)
            report_event("leave", id=call["id"], seconds=max(0.0, seconds))
        if "user_code" in reply:  # where it failed and how to reproduce it are ours to say, not the reply's
            failed = reply["user_code"]
            details = {k: v for k, v in failed.details.items() if k not in ("where", "detail", "replay")}
            details |= _context(None, call.get("detail"), call.get("replay"))
            said = str(failed) if str(failed).startswith(call["where"]) else f"{call['where']}: {failed}"
            raise UserCodeError(said, side=Side.SOLUTION, where=call["where"], fate=failed.fate, details=details)
        if "usage" in reply:  # its import found no ModelNew: said in the worker's words, not the solution's
            raise FpaError(f"{self.name} does not define ModelNew (a KernelBench solution must define ModelNew)")
        if "internal" in reply:  # fpa's code failed in the solution's process: the solution's code had it to itself
            raise UserCodeError(
                f"{call['where']}: fpa's code in the solution's process failed ({reply['internal']}); the solution's "
                "code may have changed it",
                side=Side.SOLUTION,
                where=call["where"],
                fate=Fate.RAISED,
                details={**_context(None, call.get("detail"), call.get("replay")), "traceback": reply["traceback"]},
            )
        return reply

    def _reply(self, call: dict, deadline: float | None, limits: wire.Limits, inputs: int = 0) -> dict:
        """The next message, checked to be the reply ``call`` expects (see the module docstring)."""
        while True:
            message = self._message(call, deadline, limits)
            if not (call["seq"] and isinstance(message.body, dict) and set(message.body) == {"extension"}):
                break
            paused = self._extension(call, message)
            deadline = None if deadline is None else deadline + paused
        try:
            return checked(call["expect"], message.body, inputs=inputs, elapsed=time.monotonic() - call["sent"])
        except wire.Malformed as error:
            raise self._broken(call, Fate.MALFORMED_REPLY, f"a malformed reply: {error}") from None

    def _extension(self, call: dict, message: wire.Message) -> float:
        """Answer the process's ``load_inline`` asking for its build (``extension_requests``): made on this side
        (``extension_store``) while the process is stopped (SIGSTOP to its group: none of its threads runs while the
        call's clock is stopped), within what is left of the process's own build time (``build_seconds``, for all
        its requests together: one that asks again and again gets ``own``, timed as its own code). The seconds the
        call's clock was stopped."""
        paused = 0.0
        self.requests += 1
        if self.build_left <= 0 or self.requests > _EXTENSION_REQUESTS or not self.alive():
            answered = {"own": "this process's requests to fpa's store used their time or number"}
        else:
            report_event("leave", id=call["id"], seconds=0.0)
            started = time.monotonic()
            with contextlib.suppress(OSError):
                os.killpg(self.child.proc.pid, signal.SIGSTOP)
            try:
                answered = extension_store.answer(message.body["extension"], started + self.build_left)
            except Exception as error:  # ours; the solution builds for itself, as without the store
                answered = {"own": f"fpa's store failed: {type(error).__name__}: {error}"[:300]}
            finally:
                with contextlib.suppress(OSError):
                    os.killpg(self.child.proc.pid, signal.SIGCONT)
                report_event("enter", **_event(call))
            paused = time.monotonic() - started
            self.build_left -= paused
            call["paused"] = call.get("paused", 0.0) + paused  # not the user's time (``_receive``)
        self.extensions[extension_store.kind_of(answered)] += 1
        with contextlib.suppress(OSError):  # gone: the wait for its reply says how it ended
            wire.send(self.sock, message.seq, answered)
        return paused

    def _message(self, call: dict, deadline: float | None, limits: wire.Limits) -> wire.Message:
        """The next message from the process, for ``call``: from that process, in turn."""
        try:
            message = wire.receive(self.sock, limits=limits, deadline=deadline)
        except wire.WireTimeout:
            self.interrupted = True
            self.child.kill()
            self.child.proc.wait()  # reaped: alive() says so from now on
            raise UserCodeError(
                f"{call['where']} did not return within {self.timeout:g} s (--timeout); it was killed",
                side=Side.SOLUTION,
                where=call["where"],
                fate=Fate.TIMED_OUT,
                details={**_context(None, call.get("detail"), call.get("replay")), "timeout_s": self.timeout},
            ) from None
        except wire.Malformed as error:
            raise self._broken(call, Fate.MALFORMED_REPLY, f"a malformed reply: {error}") from None
        except (EOFError, OSError):
            raise self._ended(call) from None
        if message.pid != self.child.proc.pid:
            raise self._broken(call, Fate.FORKED, f"a reply from another process (pid {message.pid})")
        if message.seq != call["seq"]:
            raise self._broken(call, Fate.MALFORMED_REPLY, f"a reply out of turn (to request {message.seq} where "
                               f"{call['seq']} was asked)")  # fmt: skip
        return message

    def _broken(self, call: dict, fate: Fate, what: str) -> UserCodeError:
        """The error for a reply that cannot be trusted: the process is ended, and every later call fails the same."""
        self.interrupted = True
        self.child.kill()
        self.child.proc.wait()
        verb = "forked: it sent" if fate is Fate.FORKED else "sent"
        self.failed = UserCodeError(
            f"{call['where']}: the solution's process {verb} {what}",
            side=Side.SOLUTION,
            where=call["where"],
            fate=fate,
            details=_context(None, call.get("detail"), call.get("replay")),
        )
        return self.failed

    def _ended(self, call: dict) -> UserCodeError:
        """The error for a process whose end of the channel closed: how it ended (given a moment to end)."""
        self.child.wait_ended(_CLOSING_S)
        if not self.child.has_ended():
            self.child.kill()
        fate, how, code = self.child.ending()
        message = f"{call['where']}: the solution's process {how}"
        if code == CHANNEL_LOST_STATUS:
            fate = Fate.CLOSED_CHANNEL
            message = f"{call['where']} closed the descriptors fpa talks to the solution's process through"
        self.failed = UserCodeError(
            message,
            side=Side.SOLUTION,
            where=call["where"],
            fate=fate,
            details={**_context(None, call.get("detail"), call.get("replay")), "status": code},
        )
        return self.failed


def prepare_job(solution: str, *, timeout: float, folder: str, solution_sources=None) -> dict:
    """The worker's half of ``jobs.prepare_file``: import the solution in its process, under the timeout (with CUDA
    where there is a GPU: solutions are built ahead for GPU triages)."""
    import torch

    with CandidateProcess(solution, folder, timeout, solution_sources, torch.cuda.is_available()) as candidate:
        try:
            return {"notes": candidate.loaded(), "extensions": candidate.extensions}
        except UserCodeError as failure:  # its builds counted still (a triage's row): a compile error among them
            failure.details["extensions"] = dict(candidate.extensions)
            raise


def _context(where: str | None, detail: str | None, replay: str | None) -> dict:
    """The fields that name a call: where it is, the trial or example (detail), its replay command."""
    return {k: v for k, v in (("where", where), ("detail", detail), ("replay", replay)) if v}


def _event(call: dict) -> dict:
    """The fields of ``call`` the worker's parent is told of."""
    return {k: call[k] for k in ("id", "side", "where", "detail", "replay") if k in call}


# --------------------------------------------------------------------------------------------- server side

_forks = [0]  # in the candidate process: forks made by Python code since it started (os.register_at_fork)


def serve(solution: str, fd: int | str) -> None:
    """The candidate process: answer requests on ``fd`` until the worker closes it (see the module docstring).

    A process the user's code forks and that returns into this loop is a copy: it leaves at once, without a
    word, and the call that forked is answered as ``Fate.FORKED``. When the user's code has closed (or taken) the
    channel, the process leaves with ``CHANNEL_LOST_STATUS`` rather than a traceback of ours in its output.
    """
    child_setup()
    hardening.drop_privileges()  # out of the worker's memory and descriptors, and root's other powers (hardening)
    hardening.own_limits_only()  # no resource limit set on fpa's processes or another solution's
    import torch

    if "numba" in sys.modules:  # imported by the fork server's warm-up, under the server's environment
        sys.modules["numba"].core.config.reload_config()  # NUMBA_CACHE_DIR is this process's
    confined = None
    if os.environ.get(SANDBOX_ENV) != "0":
        gpu = os.environ.get(_CUDA_ENV) == "1"
        if gpu and torch.cuda.is_available():
            torch.cuda.init()  # CUDA's driver starts with what the sandbox would refuse it (error 304 on the H200)
        confined = hardening.sandbox(places.solution_writable(gpu))  # before user code: what it writes, whom it signals
        hardening.no_mode_changes()  # nor change a file's mode or owner, which Landlock does not cover
        hardening.no_internet_sockets()  # nor reach the network, over MPTCP or UDP either

    owner = os.getpid()
    sock = socket.socket(fileno=int(fd))
    state = {"seq": None}  # the request being answered, None between requests
    asking = threading.Lock()  # held by a load_inline asking the worker for its build
    if confined is not None:  # it cannot write fpa's store of builds
        asking = extension_requests.interpose(sock, lambda: state["seq"])
    os.register_at_fork(after_in_parent=lambda: _forks.__setitem__(0, _forks[0] + 1))
    state |= {
        "file": UserFile(solution, Side.SOLUTION),
        "path": solution,
        "model": None,
        "device": "cpu",
        "torch": torch,
    }
    _answer(sock, 0, {"ready": True})
    while True:
        try:
            # the worker's, so no limit but memory's (a snapshot of many sources); the user's code may have taken it
            request = wire.receive(sock, limits=_REQUESTS).body
            seq, op = request["seq"], request["op"]
        except EOFError:
            os._exit(0)
        except Exception:
            os._exit(CHANNEL_LOST_STATUS)
        start, forks, state["seq"] = time.monotonic(), _forks[0], seq
        where = request.get("where", f"importing {pathlib.Path(solution).name}")
        try:
            reply = _HANDLERS[op](state, request)
        except UserCodeError as error:
            reply = {"user_code": error.to_dict()}
        except FpaError as error:
            reply = {"usage": str(error)}
        except BaseException as error:  # ours: the worker reports it as an internal error
            reply = {"internal": f"{type(error).__name__}: {error}", "traceback": traceback.format_exc()}
        if os.getpid() != owner:  # a copy the user's code forked, back in our frames: only the original answers
            os._exit(0)
        if _forks[0] != forks:
            forked = UserCodeError(
                f"{where}: the solution's process forked (os.fork): a copy of it could answer in its place",
                side=Side.SOLUTION, where=where, fate=Fate.FORKED, details=_context(None, request.get("detail"),
                                                                                    request.get("replay")),
            )  # fmt: skip
            reply = {"user_code": forked.to_dict()}
        reply["seconds"] = time.monotonic() - start
        with asking:  # no thread's load_inline asks after this answer, in its request's name
            state["seq"] = None
        _answer(sock, seq, reply)


def _answer(sock: socket.socket, seq: int, reply: dict) -> None:
    """Send ``reply``; one that cannot be written says what the user's code returned instead."""
    try:
        try:
            wire.send(sock, seq, reply)
        except wire.Unsendable as error:  # what the user's code returned cannot be sent
            wire.send(sock, seq, {"returned": f"something that cannot be sent between processes ({error})",
                                  "seconds": reply.get("seconds", 0.0)})  # fmt: skip
    except OSError:  # the user's code closed our channel, or the worker is gone
        os._exit(CHANNEL_LOST_STATUS)


def _snapshot_name(solution: str) -> str:
    """The solution's name as its snapshot has it (``Snapshot.take`` reads a link's target): an explain of the files
    a triage built finds that build."""
    return pathlib.Path(solution).resolve().name


def _load(state: dict, request: dict) -> dict:
    if request["sources"] is not None:
        state["file"] = UserFile(state["path"], Side.SOLUTION, Snapshot.decoded(request["sources"]))
    before = switches(state["torch"])
    state["file"].load(("ModelNew",))
    after = switches(state["torch"])
    changed = [name for name in before if after.get(name) != before[name]]
    return {"switches": {name: repr(after[name]) if name in after else "" for name in changed}}


def _build(state: dict, request: dict) -> dict:
    torch = state["torch"]
    from torch.nn.parameter import is_lazy

    file, device, seed = state["file"], torch.device(request["device"]), request["seed"]
    seed_all(seed)
    context = {k: request[k] for k in ("detail", "replay") if k in request}
    model = file.call(
        request["where"], lambda: file.module.ModelNew(*request["args"], **request["kwargs"]).to(device), **context
    )
    state["model"], state["device"] = model, device
    keep, left = set(request["keep_numels"]), request["keep_elements"]
    tensors = {**dict(model.named_buffers()), **dict(model.named_parameters())}
    parameters = {}
    for name, t in tensors.items():
        if is_lazy(t):  # no values until the first forward: None, so the worker knows it cannot compare
            parameters[name] = None
        elif t.is_floating_point() and 0 < t.numel() <= left and any(n % t.numel() == 0 for n in keep):
            parameters[name] = t.detach().to("cpu").contiguous()
            left -= t.numel()
    return {"parameters": parameters}


def _forward(state: dict, request: dict) -> dict:
    torch = state["torch"]
    try:
        inputs = [_received(t, state["device"], torch) for t in request["inputs"]]
    except IpcUnavailable as error:
        return {"ipc_unavailable": str(error)}
    given = copied(inputs)  # the solution gets copies, so that what it writes into them can be told
    context = {k: request[k] for k in ("detail", "replay") if k in request}
    with torch.no_grad():
        out = state["file"].call("ModelNew.forward", state["model"], *given, **context)
    # What forward returned, and what it left in its inputs, may be objects of the user's own (a subclass whose
    # properties raise, an input whose class it swapped): reading them is the user's code too, so whatever that
    # raises is what the solution returned, never an error of ours (this still runs under the worker's timeout).
    try:
        mutated = written_inputs(inputs, given)
        if type(out) is not torch.Tensor and not issubclass(type(out), torch.Tensor):
            return {"returned": f"a {type(out).__name__}, not a tensor"}
        if out.layout != torch.strided:
            return {"returned": f"a {out.layout} tensor, not a dense one"}
        # a subclass of the solution's own: the plain tensor underneath (its __torch_function__ is the user's code)
        with torch._C.DisableTorchFunctionSubclass():
            plain = torch.Tensor.as_subclass(out.detach(), torch.Tensor).resolve_neg().resolve_conj()
            into = request["into"]  # the worker's buffer for the output, mapped only now: not through the user's code
            if into is not None and plain.is_cuda and tuple(plain.shape) == into.shape and plain.dtype == into.dtype:
                with contextlib.suppress(IpcUnavailable):  # then as bytes, below
                    into.view().copy_(plain)  # the mapping ends with the statement
                    torch.cuda.synchronize()
                    return {"written": True, "device": str(out.device), "mutated": mutated}
            if plain.numel() and plain.untyped_storage().nbytes() > plain.numel() * plain.element_size():
                plain = plain.contiguous()  # a view into a larger buffer: send what it shows, not the buffer
            plain = plain.to("cpu")
    except BaseException as error:
        return {"returned": f"something that cannot be read ({type(error).__name__})"}
    return {"output": plain, "device": str(out.device), "mutated": mutated}


def _received(value, device, torch):
    """An input as the solution gets it: a tensor (opened by handle, or as sent) on the model's device."""
    if isinstance(value, SharedCuda):
        value = value.open()
    return value.to(device) if isinstance(value, torch.Tensor) else value


_HANDLERS = {"load": _load, "build": _build, "forward": _forward}
