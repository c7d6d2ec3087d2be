"""The trainer's side: at its first RPC op it opens one authenticated wire connection to each pserver
(identity "trainer <id>|<plan digest>"), calls pserver handlers over them, tells the pservers when it is done
(the last Executor holding it closed, or a plain interpreter exit), and turns failures into errors that name
the pserver and what was lost. Who holds a connection and how code without an Executor finds it:
connections.py. The connection is the liveness watch both ways: a pserver sees this trainer's process die at
once, and this trainer sees a pserver's (with the failure the pserver reported when it left)."""

import atexit
import collections
import sys
import threading
import time
import warnings
import weakref

from ..heap import retain_freed_memory
from ..wire.client import Connection, KeyMismatchError
from .communicator_flags import default_flags, parse_flags
from .errors import PeerLostError, PsDeadlineError, PsError, deadline_s, remote_message
from .membership import next_job

__all__ = ["TrainerClient", "pserver_name"]


def _backstop():
    limit = deadline_s()
    return limit * 1.2 + 1.0


def pserver_name(i, ep):
    return "pserver %d (%s)" % (i, ep)


class TrainerClient:
    """One trainer's connection to the pservers of its job. Made and held through connections.py:
    before_join(self) runs before it joins (it may refuse), on_close(self) once it is closed."""

    def __init__(self, info, before_join=None, on_close=None):
        self.info = info
        self.trainer_id = info.trainer_id
        self.endpoints = list(info.pserver_endpoints)
        self.key = (tuple(self.endpoints), int(info.trainers), int(self.trainer_id))   # connections.job_key
        self.names = {ep: pserver_name(i, ep) for i, ep in enumerate(self.endpoints)}
        self.conns = {}
        self.lost = {}              # endpoint -> why its connection ended
        self.joined = False
        self.joining = False
        self.closed = False
        self.holders = weakref.WeakSet()     # the Executors (or Communicator) using it: connections.py
        self._before_join = before_join
        self._on_close = on_close
        self._join_lock = threading.Lock()   # Hogwild threads of train_from_dataset share this client
        # what went over the wire (tests and benchmarks read it): dense elements and row-sparse rows sent,
        # prefetch calls and rows asked for
        self.stats = collections.Counter()
        self._comm = None
        retain_freed_memory()     # each step's large messages and gathered rows reuse the last step's memory

    # life cycle ------------------------------------------------------------------------------------
    def ensure_joined(self):
        if self.closed:
            raise PsError("trainer %d already told the pservers it is done (Executor.close()); create the "
                          "Executor that trains before closing one" % self.trainer_id)
        if self.joined:
            return
        with self._join_lock:
            if not self.joined:
                if self._before_join is not None:
                    self._before_join(self)
                try:
                    self._join()
                finally:
                    self.joining = False

    def _join(self):
        """Connect to every pserver at once (each retried until FLAGS_rpc_deadline)."""
        limit = deadline_s()
        deadline = time.monotonic() + limit
        identity = {ep: "trainer %d|%s|%d" % (self.trainer_id, self.info.plan_digest, next_job("trainer", [ep]))
                    for ep in self.endpoints}
        errors = {}

        def connect(ep):
            try:
                self.conns[ep] = Connection(ep, identity[ep], deadline, what=self.names[ep], on_lost=self._on_lost)
            except Exception as e:   # noqa: BLE001  (reported below, per pserver)
                errors[ep] = e
        threads = [threading.Thread(target=connect, args=(ep,), daemon=True) for ep in self.endpoints[1:]]
        for t in threads:
            t.start()
        connect(self.endpoints[0])
        for t in threads:
            t.join()
        if errors:
            refused = [e for e in errors.values() if isinstance(e, KeyMismatchError) or "cannot reach" not in str(e)]
            if refused:
                err = PsError("trainer %d: %s" % (self.trainer_id, refused[0]))
            else:
                eps = [ep for ep in self.endpoints if ep in errors]
                err = PsError("trainer %d cannot reach pserver(s) %s: nothing accepted a connection for %.0fs "
                              "(FLAGS_rpc_deadline); are they started, and are the endpoints right?"
                              % (self.trainer_id, ", ".join(eps), limit))
                err.reason = "%s never arrived: %s" % (", ".join(self.names[ep] for ep in eps), err)
            # the pservers that did answer hear why this trainer gives up (sync: they fail saying so)
            for ep, c in list(self.conns.items()):
                try:
                    c.call_async("abort", self.trainer_id, getattr(err, "reason", str(err))).wait()
                except Exception:
                    pass
                c.close()
            self.conns = {}
            raise err
        self.joined = True
        atexit.register(self._at_exit)

    def _on_lost(self, conn, reason):
        self.lost[conn.endpoint] = reason

    def communicator(self, flags=None):
        """This trainer's half-async communicator, made at its first half-async step with `flags` (the
        transpiled program's TrainerRuntimeConfig flags; else FLAGS_communicator_* from the environment)."""
        if self._comm is None:
            with self._join_lock:
                if self._comm is None:
                    # kept in a function: it loads torch, and this module loads with fluid (no torch)
                    from .half_async import HalfAsyncCommunicator
                    self._comm = HalfAsyncCommunicator(self, parse_flags(dict(default_flags(), **(flags or {}))))
        return self._comm

    def close(self):
        """Tell every pserver this trainer is done, then close the connections. Never raises: a pserver that
        is already gone only gets a warning (training itself has finished)."""
        if self.closed:
            return
        if self._on_close is not None:
            self._on_close(self)
        if self._comm is not None and self.joined:
            try:
                self._comm.flush_and_stop()
            except Exception as e:
                warnings.warn("trainer %d could not send its last half-async gradients: %s" % (self.trainer_id, e))
        self.closed = True
        if not self.joined:
            return
        self._notify_all("done", self.trainer_id)
        self._disconnect()

    def _disconnect(self):
        for c in self.conns.values():
            c.close()

    def _notify_all(self, handler, *args, quiet=False):
        futs, failed = {}, []
        for ep in self.endpoints:
            if ep in self.lost:
                failed.append((ep, self.lost[ep]))
                continue
            try:
                futs[ep] = self.conns[ep].call_async(handler, *args)
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
        """The interpreter exits without Executor.close(): after an uncaught exception the pservers hear why
        (sync: they fail saying so); after a normal end they count this trainer as done (Paddle's pservers
        waited forever)."""
        if self.closed or not self.joined:
            return
        self.closed = True
        if self._on_close is not None:
            self._on_close(self)
        exc = getattr(sys, "last_value", None)
        try:
            if exc is not None:
                self._notify_all("abort", self.trainer_id, "%s: %s" % (type(exc).__name__, exc), quiet=True)
            else:
                self._notify_all("done", self.trainer_id, quiet=True)
            self._disconnect()
        except Exception:
            pass

    # calls -----------------------------------------------------------------------------------------
    def call_async(self, endpoint, handler, *args):
        """Call handler `handler` of the pserver at `endpoint`; returns a torch Future (deadline-bounded)."""
        self.ensure_joined()
        return self._call(endpoint, handler, *args)

    def _call(self, endpoint, handler, *args):
        if endpoint in self.lost:
            raise PeerLostError("trainer %d lost %s: %s" % (self.trainer_id, self.names[endpoint], self.lost[endpoint]))
        # The pserver enforces FLAGS_rpc_deadline on its sync barrier and says who is missing; our own
        # timeout is a backstop for a hung pserver, a little longer so that its explanation arrives first.
        try:
            return self.conns[endpoint].call_async(handler, *args)
        except PeerLostError as e:
            raise PeerLostError("trainer %d %s" % (self.trainer_id, e)) from None

    def worker_barrier(self):
        """fleet.barrier_worker(): wait at pserver 0 for every worker still training (worker_barrier.py)."""
        ep = self.endpoints[0]
        self.wait(ep, self.call_async(ep, "worker_barrier", self.trainer_id), "barrier_worker")

    def exchange_async(self, endpoint, names, tensors, want):
        return self.call_async(endpoint, "exchange", self.trainer_id, names, tensors, want)

    def wait(self, endpoint, fut, what):
        try:
            return fut.wait()
        except Exception as e:
            raise self.error(endpoint, e, what) from None

    def error(self, endpoint, exc, what):
        who = self.names.get(endpoint, endpoint)
        msg = remote_message(exc)
        if isinstance(exc, PeerLostError):
            why = self.lost.get(endpoint) or msg.split(": ", 1)[-1]
            return PeerLostError("trainer %d lost %s during %s: %s" % (self.trainer_id, who, what, why))
        if isinstance(exc, PsDeadlineError) and "did not answer" in msg:
            return PsDeadlineError("trainer %d: %s did not answer %s within %.0fs (FLAGS_rpc_deadline %.0fs + 20%%): "
                                   "is it hung?" % (self.trainer_id, who, what, _backstop(), deadline_s()))
        if isinstance(exc, PsError):
            # the pserver answered with an error (its messages start with "pserver <endpoint>"): pass it on
            return type(exc)("trainer %d: %s with %s failed: %s" % (self.trainer_id, what, who, msg))
        return PsError("trainer %d: %s failed during %s: %s: %s" % (self.trainer_id, who, what, type(exc).__name__,
                                                                  msg))

