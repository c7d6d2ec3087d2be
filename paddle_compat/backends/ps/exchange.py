"""Trainer-to-trainer exchange of byte payloads and counts through pserver 0's key-value store.

In pserver mode trainers have no channel to each other, only to the pservers; InMemoryDataset.global_shuffle
and the fleet-wide sizes need one. Payloads go through the store pserver 0 serves on its endpoint (its kv_*
handlers, over the trainer's authenticated connection), in chunks, and each receiver deletes what it read.
Payloads are plain bytes (the dataset sends numpy .npz without pickles), so nothing received is unpickled.
Every wait is bounded by FLAGS_rpc_deadline and names the trainer that did not deliver.
"""

import itertools
import time
from datetime import timedelta

from .connections import joined
from .errors import PsError, deadline_s

_CHUNK = 16 << 20
_calls = itertools.count()


class TrainerExchange:
    """One collective call among the job's trainers; every trainer must make the same calls in the same order."""

    def __init__(self, what):
        c = joined()
        if c is None:
            raise PsError("%s across trainers needs this trainer joined to its pserver job: run the trainer's "
                          "startup program (exe.run(fleet.startup_program)) first, as Paddle's scripts do "
                          "after fleet.init_worker()" % what)
        # kept in a function: WireStore is a torch.distributed.Store, and this module loads with fluid (no torch)
        from ..wire.store import WireStore
        self.what = what
        ep0 = c.endpoints[0]
        self.store = WireStore(lambda name, *args: c.call_async(ep0, name, *args), deadline_s(), c.names[ep0])
        self.me, self.n = c.trainer_id, c.info.trainers
        self.prefix = "paddle_compat/x/%d/" % next(_calls)

    def _wait(self, keys, who):
        limit = deadline_s()
        try:
            self.store.wait(keys, timedelta(seconds=limit))
        except Exception:
            missing = [w for k, w in zip(keys, who) if not self.store.check([k])]
            raise PsError("%s: trainer %d waited %.0fs (FLAGS_rpc_deadline) for %s; is every trainer calling "
                          "it?" % (self.what, self.me, limit, ", ".join(missing) or "the other trainers")) from None

    def all_to_all(self, payloads):
        """payloads: {trainer: bytes} for every other trainer. Returns {trainer: bytes} sent to this one."""
        for dst, data in payloads.items():
            data = bytes(data)
            chunks = [data[i:i + _CHUNK] for i in range(0, len(data), _CHUNK)] or [b""]
            base = self.prefix + "%d-%d/" % (self.me, dst)
            for i, c in enumerate(chunks):
                self.store.set(base + str(i), c)
            self.store.set(base + "n", str(len(chunks)))   # written last: the receiver's signal
        srcs = [s for s in range(self.n) if s != self.me]
        heads = [self.prefix + "%d-%d/n" % (s, self.me) for s in srcs]
        self._wait(heads, ["trainer %d's part" % s for s in srcs])
        out = {}
        for s, head in zip(srcs, heads):
            base = self.prefix + "%d-%d/" % (s, self.me)
            n = int(self.store.get(head))
            out[s] = b"".join(self.store.get(base + str(i)) for i in range(n))
            for i in range(n):
                self.store.delete_key(base + str(i))
            self.store.delete_key(head)
        return out

    def all_sum(self, value):
        """The sum of an int over every trainer."""
        self.store.add(self.prefix + "sum", int(value))
        self.store.add(self.prefix + "count", 1)
        end = time.monotonic() + deadline_s()
        while self.store.add(self.prefix + "count", 0) < self.n:
            if time.monotonic() > end:
                raise PsError("%s: trainer %d waited %.0fs (FLAGS_rpc_deadline) for the other trainers' counts"
                              % (self.what, self.me, deadline_s()))
            time.sleep(0.02)
        return int(self.store.add(self.prefix + "sum", 0))
