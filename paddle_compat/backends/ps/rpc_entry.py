"""The functions RPC calls by reference (importable in every process), and the registry of handlers they
dispatch to.

A handler is `fn(*args) -> value or torch.futures.Future`; a Future lets the handler answer later without
holding an RPC thread (the sync barrier answers when the last trainer's gradients arrive). The pserver
service registers its handlers when it starts serving; other features (a distributed lookup table's
prefetch, ...) register theirs with `register_handler(name, fn)`.
"""

import threading

import torch
import torch.distributed.rpc as rpc

__all__ = ["call", "watch", "fail_future", "register_handler", "unregister_handler", "release_watchers", "clear_handlers"]

_HANDLERS = {}
_WATCHERS = []
_LOCK = threading.Lock()


def register_handler(name, fn):
    with _LOCK:
        _HANDLERS[name] = fn


def unregister_handler(name):
    with _LOCK:
        _HANDLERS.pop(name, None)


def clear_handlers():
    with _LOCK:
        _HANDLERS.clear()


@rpc.functions.async_execution
def call(handler, *args):
    fn = _HANDLERS.get(handler)
    if fn is None:
        raise RuntimeError("%s has no handler '%s' (is it serving? known: %s)"
                           % (rpc.get_worker_info().name, handler, ", ".join(sorted(_HANDLERS)) or "none"))
    try:
        out = fn(*args)
    except Exception as e:   # answered as an error (raising here would also print it on this side)
        fut = torch.futures.Future()
        fail_future(fut, e)
        return fut
    if isinstance(out, torch.futures.Future):
        return out
    fut = torch.futures.Future()
    fut.set_result(out)
    return fut


def fail_future(fut, exc):
    """Answer a handler's Future with an error the caller raises. (A Future completed with set_exception
    reaches an async_execution caller as a plain value, so errors travel as RPC's RemoteException.)"""
    from torch.distributed.rpc.internal import RemoteException
    if type(exc).__module__.startswith("paddle_compat"):
        kind, msg = type(exc), str(exc)
    else:
        kind, msg = RuntimeError, "%s: %s" % (type(exc).__name__, exc)
    if not fut.done():
        fut.set_result(RemoteException(msg, kind))


@rpc.functions.async_execution
def watch(caller):
    """Answered only when this process leaves the group: a peer's pending call fails if we die."""
    fut = torch.futures.Future()
    with _LOCK:
        _WATCHERS.append(fut)
    return fut


def release_watchers(reason=None):
    """Answer the peers' watch calls: we are leaving (with `reason` when we leave because of a failure)."""
    with _LOCK:
        pending, _WATCHERS[:] = list(_WATCHERS), []
    for f in pending:
        if not f.done():
            f.set_result(reason)
