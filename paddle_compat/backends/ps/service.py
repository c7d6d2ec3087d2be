"""The pserver service: what `listen_and_serv` runs. It holds this pserver's blocks (torch tensors in the
scope the pserver program runs in) and answers its trainers' calls (one wire connection per trainer,
backends/wire; who is connected and when serving ends: membership.py) through a table of handlers:

  exchange(trainer_id, names, tensors, want)  gradients in, wanted parameter blocks out. Sync mode: the
        answer is a Future completed when every active trainer's gradients of this step are in and the
        optimize blocks ran (no thread waits, no polling). Async mode: applied at once, answered at once.
        No gradients = a plain pull (a trainer's startup).
  done(trainer_id)            the trainer called Executor.close(); later sync steps do not wait for it
  abort(trainer_id, reason)   the trainer failed; in sync mode so does this pserver, saying why (elastic
                              modes log it and serve the others)
  pull_state(names)           copies of persistable vars (distributed save)
  kv_*                        (pserver 0) the key-value store trainers exchange through (exchange.py)

Extensions (a distributed lookup table's prefetch and save_tables: table_service.py; the workers' barrier:
worker_barrier.py) add handlers: each fn of the fixed tuple EXTENSIONS is called with a service when it is
created and may call `service.register_handler(name, handler)` (a fixed tuple, not a registry filled at import
time: what a pserver serves does not depend on which modules this process happened to load).

Semantics chosen where Paddle's were accidents:
- A trainer that called Executor.close() no longer holds sync steps up; its gradient parts count as zero
  in the program's sum (the scale stays 1/trainers, as in the program; a distributed table's rows are
  summed, never scaled, so a finished trainer just adds no rows). Paddle summed whatever stale gradient
  was left in its scope.
- Async mode runs the LR-schedule block once per push, after adding the push's step to its trainer's step
  counter (the block sums those), so the schedule follows the number of updates applied (Paddle's async
  pservers ignored LR decay).
- FLAGS_rpc_deadline bounds a sync step (first gradients in -> last gradients in); the error names the
  trainers that never sent. A pserver with no step in progress waits for as long as its trainers are alive
  (a dead trainer is noticed at once through its connection).
- A push holding a non-finite value (NaN, inf) is refused before any of it is applied: the trainer gets an
  error naming itself and the variable, the parameters stay as they were. (Paddle applied it: one trainer's
  NaN corrupted every trainer's parameters.)
"""

import torch

from ..checkpoint_dir import test_pause
from ..heap import retain_freed_memory
from ..wire import server as wire_server
from ..wire.store import KVStore
from . import layer_listen, table_service, worker_barrier
from .errors import PsError, deadline_s, fail_future
from .membership import Membership, next_job
from .optimize import OptimizeRunner
from .records import pserver_plan
from .rounds import Round, RoundServer

__all__ = ["PServerService", "EXTENSIONS"]

EXTENSIONS = (worker_barrier.install, table_service.install)


class _Round(Round):
    """One sync step: the gradients that have arrived and the trainers waiting for the update."""

    def __init__(self):
        super().__init__()
        self.grads = {}     # waiting: trainer id -> (future, wanted names)

    def futures(self):
        return (fut for fut, _ in self.waiting.values())


class PServerService(RoundServer):
    def __init__(self, program, scope, device, executor=None):
        info = pserver_plan(program)
        if info is None:
            raise PsError("listen_and_serv runs only in a pserver program (DistributeTranspiler.get_pserver_program)")
        self.program, self.scope, self.device, self.executor = program, scope, device, executor
        retain_freed_memory()     # each message's buffers and gathered rows reuse the last one's memory
        self.info = info
        self.endpoint, self.pserver_id = info.endpoint, info.pserver_id
        self.trainers, self.sync = info.trainers, info.sync_mode
        self.local_vars = info.local_vars
        self._init_rounds("pserver %s" % self.endpoint, self.trainers, elastic=not self.sync)
        self.runner = None
        self.members = Membership("pserver %s" % self.endpoint, self.trainers, info.plan_digest, self.elastic,
                                  job=None)
        self.handlers = {"exchange": self._exchange, "done": self._peer_done, "abort": self._peer_abort,
                         "pull_state": self._pull_state}
        if self.pserver_id == 0:
            self.handlers.update(KVStore("pserver 0's store (%s)" % self.endpoint).handlers())
        for ext in EXTENSIONS:
            ext(self)

    def register_handler(self, name, fn):
        self.handlers[name] = fn

    # serving ---------------------------------------------------------------------------------------
    def serve(self):
        """Block until every trainer is done (sync), or every trainer id finished and none is connected
        (elastic); raise when one is lost (sync), waited for past the deadline, or a step fails."""
        limit = deadline_s()
        self.members.job = next_job("pserver", [self.endpoint])
        sock = layer_listen.take(self.endpoint)
        try:
            # trainers may connect (and handshake) while the optimize blocks are lowered: their calls wait
            self.server = wire_server.Server(self.endpoint, "pserver %d (%s)" % (self.pserver_id, self.endpoint),
                                             "pserver %d|%s" % (self.pserver_id, self.info.plan_digest),
                                             self.handlers, admit=self._admit, on_close=self._closed, sock=sock,
                                             serve=False)
        except OSError as e:
            raise PsError("pserver %d cannot listen on its endpoint %s: %s (is the port taken, or the address not "
                          "this machine's?)" % (self.pserver_id, self.endpoint, e)) from None
        reason = None
        try:
            # as Paddle's listen_and_serv: the port goes to /tmp/paddle.<pid>.port once the endpoint listens
            layer_listen.write_port_file(self.server.address[1])
            self.runner = OptimizeRunner(self.program, self.scope, self.device, self.executor)
            self._serve_until_done(limit)
        except BaseException as e:
            reason = self.failure or "pserver %s failed: %s: %s" % (self.endpoint, type(e).__name__, e)
            raise
        finally:
            self._close_server(limit, reason)
            layer_listen.remove_port_file()

    def _overdue_message(self, r, missing, limit):
        return ("pserver %s: sync step %d: trainer(s) %s sent no gradients within %.0fs (FLAGS_rpc_deadline) "
                "while trainer(s) %s waited; every trainer must run the same number of steps, and a trainer that "
                "stops early must call Executor.close()" % (self.endpoint, self.step, missing, limit,
                                                             sorted(r.waiting)))

    # handlers --------------------------------------------------------------------------------------
    def _exchange(self, trainer_id, names, tensors, want):
        if self.failure:
            raise PsError(self.failure)
        if trainer_id in self.done:
            raise PsError("pserver %s: trainer %d sent gradients after Executor.close()" % (self.endpoint, trainer_id))
        if not names:
            with self.lock:
                return self._read(trainer_id, want, clone=not self.sync)
        self.runner.check_names(trainer_id, names, self.endpoint)
        _check_finite(self.endpoint, trainer_id, names, tensors)
        # tensors travel on the CPU (a CUDAPlace pserver optimizes on its GPU); row-sparse gradients as
        # (rows, values), SelectedRows again here
        grads = dict(zip(names, self.runner.unpack(names, tensors)))
        if not self.sync:
            with self.lock:
                self._apply(lambda: self.runner.run_async(trainer_id, grads))
                self.step += 1
                return self._read(trainer_id, want, clone=True)
        fut = torch.futures.Future()
        with self.lock:
            if self.failure:
                raise PsError(self.failure)
            r = self.current_round()
            if trainer_id in r.waiting:
                raise PsError("pserver %s: trainer %d sent gradients twice in sync step %d"
                              % (self.endpoint, trainer_id, self.step))
            r.grads.update(grads)
            r.waiting[trainer_id] = (fut, want)
            self._finish_round()
        return fut

    def _new_round(self):
        return _Round()

    def _finish_round(self):
        r = self.take_complete_round()
        if r is None:
            return
        if not self._apply(lambda: self.runner.run_sync(r.grads)):
            for fut, _ in r.waiting.values():
                fail_future(fut, PsError(self.failure))
            return
        self.step += 1
        for tid, (fut, want) in r.waiting.items():
            fut.set_result(self._read(tid, want, clone=False))

    def _apply(self, fn):
        try:
            fn()
            return True
        except Exception as e:
            self.fail("pserver %s: the optimize step %d failed: %s: %s"
                       % (self.endpoint, self.step, type(e).__name__, e))
            return False

    def _read(self, trainer_id, want, clone):
        out = []
        for n in want:
            h = self.scope.find_var(n)
            if h is None or h.value is None:
                raise PsError("pserver %s holds no variable '%s' (did it run its startup program?)"
                              % (self.endpoint, n))
            t = h.value.clone() if clone else h.value
            out.append(t if t.device.type == "cpu" else t.cpu())
        if self.runner.dc_asgd and trainer_id >= 0:
            self.runner.remember_pull(trainer_id, set(want))
        return out

    def _pull_state(self, names):
        test_pause("pserver-pull-state")
        with self.lock:
            names = list(self.local_vars) if names is None else list(names)
            return names, self._read(-1, names, clone=True)


def _check_finite(endpoint, trainer_id, names, tensors):
    """Refuse a push holding NaN or inf before any of it is applied (row-sparse parts: their values)."""
    for n, t in zip(names, tensors):
        v = t[1] if isinstance(t, (tuple, list)) else t
        # a finite sum means every element is finite (a NaN or inf makes the sum NaN or inf); only a sum that is
        # not (one that overflowed, or a real NaN) is checked element by element
        if v.is_floating_point() and not bool(torch.isfinite(v.sum())) and not bool(torch.isfinite(v).all()):
            bad = "NaN" if bool(torch.isnan(v).any()) else "inf"
            raise PsError("pserver %s refused the push of trainer %d: its gradient '%s' holds %s (non-finite); "
                          "nothing of this push was applied, the parameters are unchanged" % (endpoint, trainer_id,
                                                                                            n, bad))
