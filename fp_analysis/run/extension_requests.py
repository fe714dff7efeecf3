"""The solution's process's side of fpa's store of extension builds (``extension_store``): its ``load_inline`` asks the
worker for the build before making one.

``interpose`` replaces ``torch.utils.cpp_extension.load_inline`` before the solution's file is imported (so that its
``from torch.utils.cpp_extension import load_inline`` finds this one). A call sends its arguments, the
``TORCH_CUDA_ARCH_LIST`` it would build for and the variables of the build's environment to the worker, on the
channel of the request the process is answering (an ``{"extension": …}`` message with that request's number), and
waits for the answer: a folder of the store, whose library it imports as torch's build would have; torch's message
for sources that did not compile there, raised as torch's build raises it (``RuntimeError``); or ``own``, and then
torch's own ``load_inline`` builds in the solution's folder, as without the store. What this process sends is only
ever a request: the worker builds from it and keys the build by it, so a forged one gets the process nothing another
solution would load.
"""

from __future__ import annotations

import functools
import importlib.util
import inspect
import os
import socket
import threading
from collections.abc import Callable

from . import wire
from .extension_checks import BUILD_ENVIRONMENT

__all__ = ["interpose"]

# The worker's answer: a folder's path, why the solution builds for itself (a few hundred characters), or torch's
# message for sources that do not compile (``extension_store``: at most 15,100 characters, 12 bytes each as JSON
# writes the widest).
_ANSWER = wire.Limits(header_bytes=1 << 18, tensors=0, payload_bytes=0)


def interpose(sock: socket.socket, seq: Callable[[], int | None]) -> threading.Lock:
    """Make ``load_inline`` ask the worker over ``sock`` first; ``seq``: the number of the request being answered
    (None between requests: a thread of the solution's calling then builds for itself, as the worker waits for no
    answer of its). One call asks at a time: two threads' requests and answers would cross on the one channel.
    Returns the lock a call holds while it asks: the process takes it before it answers a request, so that no
    thread's question follows the answer (the worker would read it as the next request's reply)."""
    # here, in the solution's process, not with this module (which the fork server imports for all its children):
    # importing it imports setuptools, which puts its vendored packages on sys.path, and a forked child must see
    # what a fresh interpreter sees (tests/process/test_forkserver.py)
    import torch.utils.cpp_extension as cpp

    own = cpp.load_inline
    parameters = inspect.signature(own)
    asking = threading.Lock()

    @functools.wraps(own)
    def load_inline(*args, **kwargs):
        try:
            bound = parameters.bind(*args, **kwargs)
        except TypeError:
            return own(*args, **kwargs)  # torch's own words for the call's mistake
        bound.apply_defaults()
        arguments = {name: value for name, value in bound.arguments.items() if name != "verbose"}
        request = {"arguments": arguments, "arch_list": os.environ.get("TORCH_CUDA_ARCH_LIST"),
                   "environment": {name: os.environ.get(name) for name in BUILD_ENVIRONMENT}}  # fmt: skip
        with asking:
            number = seq()
            if number is None:
                return own(*args, **kwargs)
            try:
                wire.send(sock, number, {"extension": request})
            except wire.Unsendable:  # arguments that are not plain data: torch's build takes them as they are
                return own(*args, **kwargs)
            said = wire.receive(sock, limits=_ANSWER).body
        if isinstance(said.get("folder"), str):
            try:
                return _imported(arguments["name"], said["folder"])
            except ImportError:
                if os.path.exists(_library(arguments["name"], said["folder"])):
                    raise
            return own(*args, **kwargs)  # pruned from the store since it answered (``fpa cache --prune``)
        if isinstance(said.get("failed"), str):  # the sources do not compile: torch's own exception and words
            raise RuntimeError(said["failed"])
        return own(*args, **kwargs)

    cpp.load_inline = load_inline
    return asking


def _imported(name: str, folder: str):
    """The library ``name`` built in ``folder``, imported as torch's build imports it (a module not put in
    ``sys.modules``)."""
    spec = importlib.util.spec_from_file_location(name, _library(name, folder))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _library(name: str, folder: str) -> str:
    return os.path.join(folder, f"{name}.so")
