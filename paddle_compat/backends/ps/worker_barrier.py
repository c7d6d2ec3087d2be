"""fleet.barrier_worker() in pserver mode without MPI: the workers meet at pserver 0, which answers them all
once every worker still training has arrived (futures, no polling). A worker missing for FLAGS_rpc_deadline
is named in the error every waiting worker gets; a worker that has finished (closed) is not waited for.

Async, half-async and Geo-SGD jobs are elastic (membership.py): there the barrier waits for the workers
connected to pserver 0 now, not for ids that have not joined yet or have left (a worker that leaves while
others wait releases them). Paddle 1.8.5's PaddleCloudRoleMaker and UserDefinedRoleMaker had no worker barrier
at all (barrier_worker printed a warning and returned at once; only the MPI and gloo role makers met), so a
barrier among the workers present is the closest that still lets an elastic job go on."""

import threading

import torch

from .errors import PsError, deadline_s

__all__ = ["install"]


class WorkerBarrier:
    def __init__(self, svc):
        self.svc = svc
        self.lock = threading.Lock()
        self.waiting = {}
        self.timer = None

    def arrive(self, trainer_id):
        fut = torch.futures.Future()
        with self.lock:
            self.waiting[trainer_id] = fut
            if self.timer is None:
                self.timer = threading.Timer(deadline_s(), self._expire)
                self.timer.daemon = True
                self.timer.start()
            release = self._ready()
        self._answer(release, True)
        return fut

    def recheck(self):
        with self.lock:
            release = self._ready()
        self._answer(release, True)

    def _ready(self):
        """Under the lock: the futures to release if everyone still training is here, else []."""
        expected = self._expected()
        if not self.waiting or not expected <= set(self.waiting):
            return []
        futs = list(self.waiting.values())
        self.waiting.clear()
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        return futs

    def _expected(self):
        svc = self.svc
        if svc.elastic:
            return svc.members.live_ids() - svc.done
        return set(range(svc.trainers)) - svc.done

    @staticmethod
    def _answer(futs, value):
        for f in futs:
            if isinstance(value, BaseException):
                f.set_exception(value)
            else:
                f.set_result(value)

    def _expire(self):
        with self.lock:
            if not self.waiting:
                return
            missing = sorted(self._expected() - set(self.waiting))
            futs = list(self.waiting.values())
            self.waiting.clear()
            self.timer = None
        self._answer(futs, PsError("pserver %s: barrier_worker: worker(s) %s did not arrive within %.0fs "
                                   "(FLAGS_rpc_deadline)" % (self.svc.endpoint, missing, deadline_s())))


def install(svc):
    """Service extension: pserver 0 hosts the workers' barrier."""
    if svc.pserver_id != 0:
        return
    b = WorkerBarrier(svc)
    svc.on_members_change.append(b.recheck)    # a worker that finished or left no longer holds the others back
    svc.register_handler("worker_barrier", b.arrive)
