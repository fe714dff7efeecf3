"""The solution's own process: ``ModelNew`` imported, built and run apart from the reference and the analysis.

A solution can change anything in the process it runs in — switch TF32 off, replace ``F.conv2d`` or
``nn.Conv2d.forward``, set a default device, import its own ``common`` module — and in KernelBench, where
both models share one process, such a change reaches the reference too, which can make a wrong kernel
pass. Here the solution runs in a process of its own (``serve``), started by the worker that runs the
problem and the analysis (``CandidateProcess``); the two talk over a socket pair, one request at a time:

* ``load``: import the solution file (and say which of torch's switches its import changed: ``notes``);
* ``build``: seed torch as KernelBench does, then ``ModelNew(*args, **kwargs).to(device)``; the reply holds
  its parameters, for the parameter check;
* ``forward``: run it on inputs (moved to the model's device) under ``torch.no_grad``; the reply holds the
  output and the device it was made on. CUDA tensors cross as CUDA IPC handles, each side copying what it
  receives into memory of its own (``fp_analysis.tensor_ipc``), other tensors as CPU tensors; where a handle
  cannot be opened the worker sends the inputs again as CPU tensors, or asks for the output so (``resend``),
  and keeps to CPU tensors for the rest of the job.

Each request is a call into the user's code: the client times it (``timeout``; a request that does not
return kills the candidate process with what it started), reports it to the worker's parent
(``worker.report_event``), and turns the candidate's exception, exit, death or wrong output into a
``UserCodeError`` of side ``solution``. Messages are pickled with the standard pickler; torch pickles a CPU
tensor's storage as bytes.
"""

from __future__ import annotations

import contextlib
import pathlib
import pickle
import socket
import time
import traceback
from multiprocessing.connection import Connection

from .errors import Fate, FpaError, InternalError, Side, UserCodeError
from .tensor_ipc import IpcUnavailable, SharedCuda, share
from .usercode import UserFile, call_id, seed_all
from .worker import ChildProcess, child_setup, report_event

__all__ = ["CandidateProcess", "prepare_job", "serve"]

# Seconds the candidate process may take to start (import torch): ours, not the user's, so not --timeout.
_START_S = 600.0


class CandidateProcess:
    """The client end: starts the candidate process on ``solution`` and asks it to import the file at once
    (so its import overlaps the worker's own work); ``loaded`` waits for that."""

    def __init__(self, solution: str, folder: str | pathlib.Path, timeout: float):
        self.timeout = timeout
        self.name = pathlib.Path(solution).name
        ours, theirs = socket.socketpair()
        try:
            self.child = ChildProcess(
                "candidate",
                [str(solution), str(theirs.fileno())],
                pathlib.Path(folder),
                Side.SOLUTION.value,
                pass_fds=(theirs.fileno(),),
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self.conn = Connection(ours.detach())
        self.conn.send_bytes(pickle.dumps({"op": "load"}))  # read once the process has imported torch
        self.notes: list[str] | None = None
        self.import_error: UserCodeError | None = None  # the solution's import failed: every later call fails so
        self.ipc = True  # CUDA tensors cross as IPC handles until one cannot be opened

    def __enter__(self) -> CandidateProcess:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def alive(self) -> bool:
        """Whether the candidate process still runs (a timeout or the user's code may have ended it)."""
        return self.child.proc.poll() is None

    def close(self) -> None:
        """End the candidate process (and what it started)."""
        with contextlib.suppress(OSError):
            self.conn.close()
        self.child.close()

    def loaded(self) -> list[str]:
        """Wait for the solution's import; returns the notes on torch switches its import changed.

        The process first says it is ready (torch imported: our start-up, not the user's code, so not under
        the timeout); the import of the solution is timed from then.
        """
        if self.import_error is not None:  # the process answered once: asking again would wait for nothing
            raise self.import_error
        if self.notes is None:
            where = f"importing {self.name}"
            call = {"id": call_id(), "side": Side.SOLUTION.value, "where": where}
            if not self.conn.poll(_START_S):
                raise InternalError(f"the candidate process did not start within {_START_S:g} s")
            self._read(call)  # "ready"
            report_event("enter", **call)
            call["sent"] = time.monotonic()
            try:
                self.notes = self._receive(call)["notes"]
            except UserCodeError as error:
                self.import_error = error
                raise
        return self.notes

    def build(self, args: list, kwargs: dict, seed: int, device, *, where: str, detail=None, replay=None) -> dict:
        """Build ``ModelNew(*args, **kwargs)`` on ``device`` after ``torch.manual_seed(seed)``; its parameters
        and buffers (name → CPU tensor, or None for one a Lazy module has not initialised yet)."""
        self.loaded()
        request = {"op": "build", "args": list(args), "kwargs": dict(kwargs), "seed": seed, "device": str(device)}
        request.update(_context(where, detail, replay))
        return self._receive(self._send(request, where, detail, replay))["parameters"]

    def forward(self, inputs: list, *, detail=None, replay=None):
        """``ModelNew.forward(*inputs)``: (the output, the device it was made on). The output is on the GPU
        where it crossed by CUDA IPC, on the CPU otherwise."""
        import torch

        kept = []  # the copies the candidate opens by handle: alive until it has answered

        def as_sent(t):
            if not isinstance(t, torch.Tensor):
                return t
            if self.ipc and t.is_cuda:
                copy = t.detach().resolve_neg().clone()  # the candidate's own: what its code does to it stays there
                handle = share(copy)
                if handle is not None:
                    kept.append(copy)
                    return handle
            return t.detach().cpu()

        where = "ModelNew.forward"
        request = {"op": "forward", "inputs": [as_sent(t) for t in inputs], "ipc": self.ipc}
        request.update(_context(where, detail, replay))
        reply = self._receive(self._send(request, where, detail, replay))
        if "ipc_unavailable" in reply:  # it opened none of them, and ran none of the user's code
            self.ipc = False
            return self.forward(inputs, detail=detail, replay=replay)
        if "returned" in reply:
            raise UserCodeError(
                f"{where} returned {reply['returned']}",
                side=Side.SOLUTION,
                where=where,
                fate=Fate.BAD_OUTPUT,
                details=_context(None, detail, replay),
            )
        output = reply["output"]
        if isinstance(output, SharedCuda):
            try:
                output = output.open()
            except IpcUnavailable:
                self.ipc = False
                resend = {"op": "resend", **_context(f"{where} (its output again, as bytes)", detail, replay)}
                output = self._receive(self._send(resend, resend["where"], detail, replay))["output"]
        return output, reply["device"]

    def _send(self, request: dict, where: str, detail=None, replay=None) -> dict:
        call = {"id": call_id(), "side": Side.SOLUTION.value, **_context(where, detail, replay)}
        try:
            data = pickle.dumps(request, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as error:  # e.g. an object of the problem's own class among get_init_inputs()
            raise FpaError(
                f"the arguments for {where} cannot be sent to the solution's process (only plain data and "
                f"tensors can): {type(error).__name__}: {error}"
            ) from None
        report_event("enter", **call)
        call["sent"] = time.monotonic()
        try:
            self.conn.send_bytes(data)
        except OSError:
            pass  # the process is gone; _receive names how it ended
        return call

    def _receive(self, call: dict) -> dict:
        """The reply to ``call``, waited for at most the timeout from when it was sent; raises what it says."""
        try:
            if not self.conn.poll(max(0.0, call["sent"] + self.timeout - time.monotonic())):
                self.child.kill()
                self.child.proc.wait()  # reaped: alive() says so from now on
                context = {k: call[k] for k in ("detail", "replay") if k in call}
                raise UserCodeError(
                    f"{call['where']} did not return within {self.timeout:g} s (--timeout); it was killed",
                    side=Side.SOLUTION,
                    where=call["where"],
                    fate=Fate.TIMED_OUT,
                    details={**context, "timeout_s": self.timeout},
                )
            reply = self._read(call)
        finally:
            # the process's own measure of the call, where it sent one (the reply may wait while we work)
            spent = locals().get("reply", {}).get("seconds", time.monotonic() - call["sent"])
            report_event("leave", id=call["id"], seconds=spent)
        if "user_code" in reply:
            raise UserCodeError.from_dict(reply["user_code"])
        if "usage" in reply:
            raise FpaError(reply["usage"])
        if "internal" in reply:
            raise InternalError(f"the candidate process failed: {reply['internal']}", reply.get("traceback", ""))
        return reply

    def _read(self, call: dict) -> dict:
        """One message from the process; UserCodeError naming ``call`` when the process is gone."""
        try:
            return pickle.loads(self.conn.recv_bytes())
        except (EOFError, OSError):
            fate, how, code = self.child.ending()
            context = {k: call[k] for k in ("detail", "replay") if k in call}
            raise UserCodeError(
                f"{call['where']}: the solution's process {how}",
                side=Side.SOLUTION,
                where=call["where"],
                fate=fate,
                details={**context, "status": code},
            ) from None


def prepare_job(solution: str, *, timeout: float, folder: str) -> dict:
    """The worker's half of ``jobs.prepare_file``: import the solution in its process, under the timeout."""
    with CandidateProcess(solution, folder, timeout) as candidate:
        return {"notes": candidate.loaded()}


def _context(where: str | None, detail: str | None, replay: str | None) -> dict:
    """The fields that name a call: where it is, the trial or example (detail), its replay command."""
    return {k: v for k, v in (("where", where), ("detail", detail), ("replay", replay)) if v}


# --------------------------------------------------------------------------------------------- server side


def serve(solution: str, fd: int | str) -> None:
    """The candidate process: answer requests on ``fd`` until the worker closes it (see the module docstring)."""
    child_setup()
    import torch

    conn = Connection(int(fd))
    state = {"file": UserFile(solution, Side.SOLUTION), "model": None, "device": "cpu", "torch": torch}
    conn.send_bytes(pickle.dumps({"ready": True}))
    while True:
        try:
            request = pickle.loads(conn.recv_bytes())
        except (EOFError, OSError):
            return
        start = time.monotonic()
        try:
            reply = _HANDLERS[request["op"]](state, request)
        except UserCodeError as error:
            reply = {"user_code": error.to_dict()}
        except FpaError as error:
            reply = {"usage": str(error)}
        except BaseException as error:  # ours: the worker reports it as an internal error
            reply = {"internal": f"{type(error).__name__}: {error}", "traceback": traceback.format_exc()}
        reply["seconds"] = time.monotonic() - start
        try:
            data = pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as error:  # what the user's code returned cannot be sent
            data = pickle.dumps(
                {
                    "returned": f"something that cannot be sent between processes ({error})",
                    **{k: reply[k] for k in ("seconds",) if k in reply},
                }
            )
        conn.send_bytes(data)


def _load(state: dict, request: dict) -> dict:
    before = _switches(state["torch"])
    state["file"].load(("ModelNew",))
    after = _switches(state["torch"])
    notes = [
        f"importing the solution set {name} = {after.get(name, '(unreadable)')!r} (in its own process; under "
        "KernelBench, where both models share one, the reference would run with it too)"
        for name in before
        if after.get(name) != before[name]
    ]
    return {"notes": notes}


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
    tensors = {**dict(model.named_buffers()), **dict(model.named_parameters())}
    # a Lazy module's tensors have no values until the first forward: None, so the worker knows it cannot compare
    return {"parameters": {name: None if is_lazy(t) else t.detach().cpu() for name, t in tensors.items()}}


def _forward(state: dict, request: dict) -> dict:
    torch = state["torch"]
    state["sent"] = None  # the worker has copied the last output it was sent by handle: it asks again only then
    try:
        inputs = [_received(t, state["device"], torch) for t in request["inputs"]]
    except IpcUnavailable as error:
        return {"ipc_unavailable": str(error)}
    context = {k: request[k] for k in ("detail", "replay") if k in request}
    with torch.no_grad():
        out = state["file"].call("ModelNew.forward", state["model"], *inputs, **context)
    if not isinstance(out, torch.Tensor):
        return {"returned": f"a {type(out).__name__}, not a tensor"}
    if out.layout != torch.strided:
        return {"returned": f"a {out.layout} tensor, not a dense one"}
    # A subclass of the solution's own would not unpickle in the worker, and its __torch_function__ is the
    # user's code: send the plain tensor underneath (this still runs under the worker's timeout).
    try:
        with torch._C.DisableTorchFunctionSubclass():
            plain = torch.Tensor.as_subclass(out.detach(), torch.Tensor).resolve_neg()  # e.g. z.conj().imag
            handle = share(plain) if request.get("ipc") else None
            if handle is None:
                plain = plain.to("cpu")
    except Exception as error:
        return {"returned": f"a tensor that cannot be read ({type(error).__name__}: {error})"}
    if handle is not None:
        state["sent"] = plain  # alive until the worker has copied it (its next request)
        return {"output": handle, "device": str(out.device)}
    return {"output": plain, "device": str(out.device)}


def _received(value, device, torch):
    """An input as the solution gets it: a tensor (opened by handle, or as sent) on the model's device."""
    if isinstance(value, SharedCuda):
        value = value.open()
    return value.to(device) if isinstance(value, torch.Tensor) else value


def _resend(state: dict, request: dict) -> dict:
    """The last output again, as a CPU tensor: the worker could not open its handle."""
    if state.get("sent") is None:
        raise RuntimeError("asked to send an output again, but none is kept")
    return {"output": state["sent"].to("cpu"), "device": str(state["sent"].device)}


_HANDLERS = {"load": _load, "build": _build, "forward": _forward, "resend": _resend}


def _switches(torch) -> dict:
    """torch's global numerics switches as they are now; a switch that cannot be read is left out."""
    readers = {
        "torch.backends.cudnn.allow_tf32": lambda: torch.backends.cudnn.allow_tf32,
        "torch.backends.cuda.matmul.allow_tf32": lambda: torch.backends.cuda.matmul.allow_tf32,
        "torch.backends.cudnn.conv.fp32_precision": lambda: torch.backends.cudnn.conv.fp32_precision,
        "torch.backends.cuda.matmul.fp32_precision": lambda: torch.backends.cuda.matmul.fp32_precision,
        "torch.get_float32_matmul_precision()": torch.get_float32_matmul_precision,
        "torch.get_default_dtype()": torch.get_default_dtype,
        "torch.backends.cudnn.enabled": lambda: torch.backends.cudnn.enabled,
    }
    values = {}
    for name, read in readers.items():
        with contextlib.suppress(Exception):  # the legacy and new TF32 APIs refuse to be read when mixed
            values[name] = read()
    return values
