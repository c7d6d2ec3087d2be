"""A hand-built server's endpoint (layers.io.ListenAndServ), bound as soon as its Executor.run starts,
before torch loads (that alone can take seconds on a busy machine): the port (port 0 picks one) is written
to /tmp/paddle.<pid>.port at once, as Paddle's server does, and the server's rendezvous takes the socket
over when it starts (clients that connect meanwhile wait in its backlog). Standard library only.

SIGINT and SIGTERM stop a server, as Paddle's listen_and_serv handler did: from the moment the port is
announced, one that arrives before the server serves (torch still loading) is remembered and the server
returns at once when it starts; one that arrives while it serves ends its wait (KeyboardInterrupt, which it
catches), so its port file is removed and its clients are told.
"""

import atexit
import os
import signal
import socket
import threading
import warnings

from .records import pserver_plan

__all__ = ["bind_early", "take", "port_file", "write_port_file", "remove_port_file", "signal_guard",
           "serving", "stop_requested", "release"]

_BOUND = {}          # endpoint attribute -> listening socket not yet taken by its server
_WRITTEN = []        # port files this process wrote
_STOP = threading.Event()
_STATE = {"serving": False, "prev": {}}
_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def _on_signal(signum, frame):
    if _STATE["serving"] or not _BOUND:
        raise KeyboardInterrupt
    _STOP.set()     # announced, not serving yet: the server returns when it gets there


def signal_guard():
    """Take SIGINT and SIGTERM over (main thread only; a server run from another thread keeps the defaults)."""
    if not _STATE["prev"] and threading.current_thread() is threading.main_thread():
        for sig in _SIGNALS:
            _STATE["prev"][sig] = signal.signal(sig, _on_signal)


def serving(flag):
    _STATE["serving"] = bool(flag)


def stop_requested():
    return _STOP.is_set()


def release():
    """The server's run has ended (served, or failed before): sockets it did not take are closed, its port
    file removed, and SIGINT means what it meant before."""
    while _BOUND:
        _BOUND.popitem()[1].close()
    remove_port_file()
    _STATE["serving"] = False
    _STOP.clear()
    while _STATE["prev"]:
        sig, prev = _STATE["prev"].popitem()
        signal.signal(sig, prev)


def port_file(pid=None):
    """Where a server tells its port (Paddle's convention, read by its tests)."""
    return "/tmp/paddle.%d.port" % (os.getpid() if pid is None else pid)


def write_port_file(port):
    path = port_file()
    tmp = "%s.tmp" % path
    try:
        with open(tmp, "w") as f:
            f.write("%d" % port)
        os.replace(tmp, path)       # a reader polling for the file never sees it half written
    except OSError as e:            # only a convenience for whoever started the server
        warnings.warn("listen_and_serv: cannot write %s: %s" % (path, e))
        return
    if path not in _WRITTEN:
        if not _WRITTEN:
            atexit.register(remove_port_file)     # (a run that fails before serving leaves none behind)
        _WRITTEN.append(path)


def remove_port_file():
    while _WRITTEN:
        try:
            os.unlink(_WRITTEN.pop())
        except OSError:
            pass


def hand_built(program, op):
    """A listen_and_serv op the transpiler did not make (no job facts, no pserver id)."""
    return pserver_plan(program) is None and op.attrs.get("pserver_id", -1) in (-1, None)


def bind_early(program):
    for op in program.global_block().ops:
        if op.type != "listen_and_serv" or not hand_built(program, op):
            continue
        ep = op.attrs.get("endpoint")
        if not isinstance(ep, str) or ":" not in ep or ep in _BOUND:
            continue    # (a bad endpoint is named when the op runs)
        host, _, port = ep.rpartition(":")
        s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, int(port)))
            s.listen(128)
        except (OSError, ValueError) as e:
            s.close()
            raise OSError("listen_and_serv cannot listen on its endpoint %s: %s (is the port taken, or the address "
                          "not this machine's?)" % (ep, e)) from None
        _BOUND[ep] = s
        signal_guard()
        write_port_file(s.getsockname()[1])


def take(endpoint):
    """The socket bound for this endpoint attribute, or None (the server then binds it itself)."""
    return _BOUND.pop(endpoint, None)
