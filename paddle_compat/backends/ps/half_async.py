"""Half-async training: Paddle 1.8's HalfAsyncCommunicator on the trainer's side.

Each step of a runner (the thread of exe.run, or each Hogwild thread of train_from_dataset) queues its
gradients, one bounded queue per gradient block (`communicator_send_queue_size`), then waits at the
communicator's barrier. A background send thread starts a round once every live runner is at the barrier
(Paddle's barrier trigger: 1 for exe.run, the thread count for train_from_dataset, less one as each thread
runs out of data). A round takes up to `communicator_max_merge_var_num` queued gradients of each block and
merges them into one (their mean, as Paddle's MergeVars with merge_add=false; row-sparse gradients as
MergeAverage), sends each pserver all its merged blocks in one exchange (at most
`communicator_thread_pool_size` exchanges in flight), gets every parameter back in the same answer (Paddle's
Recv after the send) and releases the runners, which read the parameters through their recv ops.

The pservers apply what arrives as in async mode: in Paddle 1.8.5 half-async the trainer-side barrier is
the only one (HalfAsyncCommunicator's BarrierSend/BarrierRecv do nothing; only SyncCommunicator sends
batch and fetch barriers), so trainers never wait for each other.

Where we differ from Paddle on purpose: Paddle forces max_merge_var_num and send_queue_size to CPU_NUM
(its barrier trigger for exe.run, which then hangs a single-threaded exe.run when CPU_NUM > 1); here the
trigger is the number of runners, and both fields are honoured as given. A runner that finds its queue full
does not deadlock the round that waits for it: the send thread sends that block early (merged, without
receiving), as Paddle's async communicator would. `communicator_send_wait_times` (x 10 ms) is how long the
send thread waits on a short queue for more gradients to merge; it waits only while some runner can still
queue one (at a round every runner is parked, so nothing more can come).
"""

import collections
import threading
import time

import torch

from .errors import PsError, deadline_s

__all__ = ["merge_grads", "HalfAsyncCommunicator"]

_WAIT_STEP = 0.01        # Paddle sleeps 10 ms per send_wait_times


def merge_grads(grads, average=True):
    """One gradient from several queued ones: their mean (Paddle's MergeVars(merge_add=false), what
    half-async uses) or sum. Dense tensors, or row-sparse (rows, values) payloads: rows of all payloads,
    each row once, ascending, values summed (and divided by the number of payloads when averaging, as
    Paddle's MergeAverage)."""
    if not grads:
        raise ValueError("merge_grads: nothing to merge")
    n = len(grads)
    if n == 1:
        return grads[0]
    if isinstance(grads[0], tuple):
        rows = torch.cat([g[0] for g in grads])
        values = torch.cat([g[1] for g in grads])
        uniq, inv = torch.unique(rows, sorted=True, return_inverse=True)
        out = torch.zeros((uniq.numel(),) + tuple(values.shape[1:]), dtype=values.dtype)
        out.index_add_(0, inv, values)
        return uniq, (out / n if average else out)
    total = torch.stack(grads).sum(0)
    return total / n if average else total


class _Var:
    """One gradient block's queue (a block goes to one pserver)."""

    def __init__(self, ep, name):
        self.ep, self.name = ep, name
        self.items = collections.deque()
        self.blocked = 0          # runners waiting to queue into a full queue


class HalfAsyncCommunicator:
    def __init__(self, client, flags):
        self.client = client
        self.max_merge = flags["communicator_max_merge_var_num"]
        self.queue_size = flags["communicator_send_queue_size"]
        self.pool = flags["communicator_thread_pool_size"]
        self.wait_times = flags["communicator_send_wait_times"]
        self._cond = threading.Condition()
        self._vars = collections.OrderedDict()     # (ep, name) -> _Var
        self._want = {}                             # ep -> parameter blocks asked back
        self._trigger = 1                           # live runners (Paddle's barrier trigger)
        self._counter = 0                           # runners at the barrier
        self._generation = 0
        self._params = {}                           # ep -> the last round's parameter blocks
        self._error = None
        self._stopping = False
        self._thread = None
        # what the send thread did (tests and benchmarks read it): rounds, sends and merged gradients per
        # block, early sends of a full queue
        self.stats = {"rounds": 0, "sends": collections.Counter(), "merged": collections.Counter(),
                      "early_sends": 0}

    # runners -------------------------------------------------------------------------------------------
    def set_runners(self, n):
        """Paddle's BarrierTriggerReset: n runners meet at the barrier (train_from_dataset's threads)."""
        with self._cond:
            self._trigger = int(n)
            self._cond.notify_all()

    def runner_done(self):
        """Paddle's BarrierTriggerDecrement: a Hogwild thread ran out of data; the others go on without it."""
        with self._cond:
            self._trigger = max(0, self._trigger - 1)
            self._cond.notify_all()

    def step(self, outbox, names, want):
        """One runner's step: queue its gradients ({ep: [tensor or (rows, values)]} in `names` order), wait
        for the round that sends them, return {ep: [parameter blocks in `want` order]}."""
        self._start()
        deadline = time.monotonic() + deadline_s()
        with self._cond:
            self._raise_if_failed()
            for ep, ws in want.items():
                known = self._want.setdefault(ep, [])
                known.extend(w for w in ws if w not in known)
            for ep, ns in names.items():
                tensors = outbox.get(ep) or []
                for name, t in zip(ns, tensors):
                    v = self._vars.get((ep, name))
                    if v is None:
                        v = self._vars[(ep, name)] = _Var(ep, name)
                    while len(v.items) >= self.queue_size:
                        v.blocked += 1
                        self._cond.notify_all()
                        self._wait(deadline, "room in the send queue of %s" % name)
                        v.blocked -= 1
                    v.items.append(t)
            gen = self._generation
            self._counter += 1
            self._cond.notify_all()
            while self._generation == gen:
                self._wait(deadline, "the half-async round that sends its gradients")
            return {ep: [self._params[ep][w] for w in ws] for ep, ws in want.items()}

    def _wait(self, deadline, what):
        self._raise_if_failed()
        left = deadline - time.monotonic()
        if left <= 0:
            raise PsError("trainer %d waited %.0fs (FLAGS_rpc_deadline) for %s" % (self.client.trainer_id,
                                                                                   deadline_s(), what))
        self._cond.wait(min(left, 1.0))
        self._raise_if_failed()

    def _raise_if_failed(self):
        if self._error is not None:
            raise self._error

    # the send thread -----------------------------------------------------------------------------------
    def _start(self):
        if self._thread is None:
            with self._cond:
                if self._thread is None:
                    self._thread = threading.Thread(target=self._main, daemon=True, name="half-async-send")
                    self._thread.start()

    def _main(self):
        try:
            while True:
                with self._cond:
                    while not (self._stopping or (self._trigger > 0 and self._counter >= self._trigger)
                               or any(v.blocked for v in self._vars.values())):
                        self._cond.wait(0.5)
                    if self._stopping:
                        return
                    round_ = self._trigger > 0 and self._counter >= self._trigger
                    chosen = list(self._vars.values()) if round_ else \
                        [v for v in self._vars.values() if v.blocked]
                batches = {v: self._pop(v, round_) for v in chosen}
                self._send(batches, with_params=round_)
                with self._cond:
                    if round_:
                        self.stats["rounds"] += 1
                        self._counter = 0
                        self._generation += 1
                    else:
                        self.stats["early_sends"] += 1
                    self._cond.notify_all()
        except BaseException as e:  # noqa: BLE001  (handed to the runners)
            with self._cond:
                self._error = e if isinstance(e, PsError) else \
                    PsError("trainer %d: the half-async send thread failed: %s: %s"
                            % (self.client.trainer_id, type(e).__name__, e))
                self._cond.notify_all()

    def _pop(self, v, round_):
        """Up to max_merge_var_num queued gradients of one block (Paddle's loop: on an empty queue wait
        send_wait_times x 10 ms for more, only while a runner can still queue one)."""
        got, waits = [], 0
        with self._cond:
            while len(got) < self.max_merge:
                if v.items:
                    got.append(v.items.popleft())
                    waits = 0
                    self._cond.notify_all()
                    continue
                parked = self._counter >= self._trigger
                if round_ or parked or waits >= self.wait_times or self._stopping:
                    break
                self._cond.wait(_WAIT_STEP)
                waits += 1
        return got

    def _send(self, batches, with_params):
        payload = collections.OrderedDict()
        for v, got in batches.items():
            if not got:
                continue
            names, tensors = payload.setdefault(v.ep, ([], []))
            names.append(v.name)
            tensors.append(merge_grads(got, average=True))
            self.stats["sends"][v.name] += 1
            self.stats["merged"][v.name] += len(got)
        eps = list(self._want) if with_params else []
        eps += [ep for ep in payload if ep not in eps]
        results = {}
        for i in range(0, len(eps), self.pool):      # at most thread_pool_size exchanges in flight
            wave = eps[i:i + self.pool]
            futs = {}
            for ep in wave:
                names, tensors = payload.get(ep, ([], []))
                want = self._want.get(ep, []) if with_params else []
                futs[ep] = (want, self.client.exchange_async(ep, names, tensors, want))
            for ep, (want, fut) in futs.items():
                answer = self.client.wait(ep, fut, "the half-async exchange")
                results[ep] = dict(zip(want, answer))
        if with_params:
            for ep, got in results.items():
                self._params[ep] = got

    def flush_and_stop(self):
        """Send what is still queued (a runner's gradients a round left behind when max_merge_var_num is
        below the number of runners), then stop the send thread. Paddle's Stop dropped them."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=deadline_s())
        if self._error is not None:
            return
        while True:
            with self._cond:
                batches = {v: [v.items.popleft() for _ in range(min(self.max_merge, len(v.items)))]
                           for v in self._vars.values() if v.items}
            if not batches:
                return
            self._send(batches, with_params=False)
