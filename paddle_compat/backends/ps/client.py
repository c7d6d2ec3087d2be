"""The trainer's side: joins the group at its first RPC op, calls pserver handlers, tells the pservers when
it is done (Executor.close(), or a plain interpreter exit), and turns RPC failures into errors that name
the pserver and what was lost."""

import atexit
import collections
import re
import sys
import threading
import time
import warnings

import torch.distributed.rpc as rpc

from . import rpc_entry
from .errors import PeerLostError, PsDeadlineError, PsError, deadline_s, remote_message
from .group import get_group, pserver_name

__all__ = ["TrainerClient", "get_client"]

_CLIENT = None


def _backstop():
    limit = deadline_s()
    return limit * 1.2 + 1.0


def get_client(info):
    """The process's trainer client for this job (one process is one trainer)."""
    global _CLIENT
    key = (tuple(info["pserver_endpoints"]), info["trainers"], info["trainer_id"])
    if _CLIENT is None or _CLIENT.key != key or _CLIENT.closed:
        if _CLIENT is not None and not _CLIENT.closed and _CLIENT.joined:
            raise PsError("this process is already trainer %d of a job with pservers %s; close its Executor "
                          "before running another job's trainer program" % (_CLIENT.trainer_id,
                                                                            ",".join(_CLIENT.endpoints)))
        _CLIENT = TrainerClient(info)
    return _CLIENT


class TrainerClient:
    def __init__(self, info):
        self.info = info
        self.trainer_id = info["trainer_id"]
        self.endpoints = list(info["pserver_endpoints"])
        self.key = (tuple(self.endpoints), info["trainers"], self.trainer_id)
        self.names = {ep: pserver_name(i) for i, ep in enumerate(self.endpoints)}
        self.group = None
        self.joined = False
        self.closed = False
        self._executors = set()
        self._join_lock = threading.Lock()   # Hogwild threads of train_from_dataset share this client
        # what went over the wire (tests and benchmarks read it): dense elements and row-sparse rows sent,
        # prefetch calls and rows asked for
        self.stats = collections.Counter()
        self._comm = None

    # life cycle ------------------------------------------------------------------------------------
    def attach(self, executor):
        """close() runs when this executor is closed."""
        if executor is not None and id(executor) not in self._executors:
            self._executors.add(id(executor))
            executor._add_closer(self.close)
            executor.runtime["pserver_client"] = self

    def ensure_joined(self):
        if self.closed:
            raise PsError("trainer %d already told the pservers it is done (Executor.close()); create the "
                          "Executor that trains before closing one" % self.trainer_id)
        if self.joined:
            return
        with self._join_lock:
            if not self.joined:
                self._join()

    def _join(self):
        self.group = get_group(self.endpoints, self.info["trainers"], "trainer", self.trainer_id,
                               self.info["plan_digest"])
        self.group.join(wait_port=self.info.get("wait_port", True))
        self.joined = True
        atexit.register(self._at_exit)

    def communicator(self, flags=None):
        """This trainer's half-async communicator, made at its first half-async step with `flags` (the
        transpiled program's TrainerRuntimeConfig flags; else FLAGS_communicator_* from the environment)."""
        if self._comm is None:
            with self._join_lock:
                if self._comm is None:
                    from .communicator_flags import default_flags, parse_flags
                    from .half_async import HalfAsyncCommunicator
                    self._comm = HalfAsyncCommunicator(self, parse_flags(dict(default_flags(), **(flags or {}))))
        return self._comm

    def close(self):
        """Tell every pserver this trainer is done, then leave the group. Never raises: a pserver that is
        already gone only gets a warning (training itself has finished)."""
        if self.closed:
            return
        if self._comm is not None and self.joined:
            try:
                self._comm.flush_and_stop()
            except Exception as e:
                warnings.warn("trainer %d could not send its last half-async gradients: %s" % (self.trainer_id, e))
        self.closed = True
        if not self.joined:
            return
        self._notify_all("done", self.trainer_id)
        self.group.leave()

    def _notify_all(self, handler, *args, quiet=False):
        futs, failed = {}, []
        for ep in self.endpoints:
            if self.names[ep] in self.group.lost:
                failed.append((ep, self.group.lost[self.names[ep]]))
                continue
            try:
                futs[ep] = self._call(ep, handler, *args)
            except Exception as e:
                failed.append((ep, str(e)))
        for ep, fut in futs.items():
            try:
                fut.wait()
            except Exception as e:
                failed.append((ep, remote_message(e)))
        if not quiet:
            for ep, why in failed:
                warnings.warn("trainer %d could not tell pserver %s '%s': %s" % (self.trainer_id, ep, handler, why))

    def _at_exit(self):
        """The interpreter exits without Executor.close(): after an uncaught exception the pservers fail
        saying why; after a normal end they count this trainer as done (Paddle's pservers waited forever)."""
        if self.closed or not self.joined:
            return
        self.closed = True
        exc = getattr(sys, "last_value", None)
        try:
            if exc is not None:
                self._notify_all("abort", self.trainer_id, "%s: %s" % (type(exc).__name__, exc), quiet=True)
            else:
                self._notify_all("done", self.trainer_id, quiet=True)
            self.group.leave()
        except Exception:
            pass

    # calls -----------------------------------------------------------------------------------------
    def call_async(self, endpoint, handler, *args):
        """Call handler `handler` of the pserver at `endpoint`; returns a torch Future (deadline-bounded)."""
        self.ensure_joined()
        return self._call(endpoint, handler, *args)

    def _call(self, endpoint, handler, *args):
        name = self.names[endpoint]
        if name in self.group.lost:
            raise PeerLostError("trainer %d lost %s: %s" % (self.trainer_id, self.group.describe(name),
                                                             self.group.lost[name]))
        # The pserver enforces FLAGS_rpc_deadline on its sync barrier and says who is missing; our own
        # timeout is a backstop for a hung pserver, a little longer so that its explanation arrives first.
        return rpc.rpc_async(name, rpc_entry.call, args=(handler,) + tuple(args), timeout=_backstop())

    def exchange_async(self, endpoint, names, tensors, want):
        return self.call_async(endpoint, "exchange", self.trainer_id, names, tensors, want)

    def wait(self, endpoint, fut, what):
        try:
            return fut.wait()
        except Exception as e:
            raise self.error(endpoint, e, what) from None

    def error(self, endpoint, exc, what):
        name = self.names[endpoint]
        who = self.group.describe(name) if self.group else endpoint
        msg = remote_message(exc)
        if isinstance(exc, PsError) or re.match(r"^pserver[ _]\S+", msg):
            # the pserver answered with an error (its messages start with "pserver <endpoint>"): pass it on
            kind = type(exc) if isinstance(exc, PsError) else PsError
            return kind("trainer %d: %s with %s failed: %s" % (self.trainer_id, what, who, msg))
        low = msg.lower()
        broken = any(s in low for s in ("eof", "end of file", "pipe closed", "connection reset", "econnreset",
                                        "connection closed", "epipe", "broken pipe", "connection refused"))
        lost = self.group.lost.get(name) if self.group else None
        end = time.monotonic() + 0.5
        while broken and lost is None and self.group is not None and time.monotonic() < end:
            time.sleep(0.02)     # the peer's last word (why it stopped) comes on its watch call
            lost = self.group.lost.get(name)
        if lost is not None or broken:
            return PeerLostError("trainer %d lost %s during %s: %s" % (self.trainer_id, who, what, lost or msg))
        if "ran for more than" in msg or "timed out" in msg.lower():
            return PsDeadlineError("trainer %d: %s did not answer %s within %.0fs (FLAGS_rpc_deadline %.0fs "
                                   "+ 20%%): is it hung?" % (self.trainer_id, who, what, _backstop(), deadline_s()))
        return PsError("trainer %d: %s failed during %s: %s" % (self.trainer_id, who, what, msg))


def close_active():
    """Close this process's trainer client, if it has one (fleet.stop_worker)."""
    if _CLIENT is not None:
        _CLIENT.close()
