"""Process groups over Paddle's trainer endpoints (NCCL on GPU, gloo on CPU), and the rings of collective ops.

Rendezvous happens at trainer 0's endpoint: trainer 0 hosts a small key-value store there on the wire transport
(backends/wire: every connection proves it holds the job key; a stranger is refused and logged with its socket
address), the other trainers reach it through a torch.distributed.Store subclass, every trainer registers its
own endpoint under its rank, and the group is built once all have registered. The whole wait is bounded by
FLAGS_rpc_deadline (ms); on timeout the error lists the endpoints that never registered, instead of Paddle's
silent hang in gen_nccl_id.

Groups are torch Backend objects used directly (not torch.distributed's global default group), so several
groups (nccl2's NCCLID, collective rings) live side by side and a user's own init_process_group is untouched.
"""

import atexit
import collections
import datetime
import gc
import hashlib
import os
import time

import torch
import torch.distributed as dist

from .ps.errors import PsError
from .wire import client as wire_client, server as wire_server
from .wire.auth import Refused
from .wire.client import RendezvousError
from .wire.store import KVStore, WireStore, local_caller

__all__ = ["Communicator", "RendezvousError", "CommError", "connect", "deadline_seconds", "register_ring",
           "ring", "any_communicator"]

DEFAULT_DEADLINE_MS = 180000


class CommError(RuntimeError):
    """A collective failed or timed out; the message names the group's endpoints and the deadline."""


def deadline_seconds(env=None):
    env = os.environ if env is None else env
    raw = env.get("FLAGS_rpc_deadline", str(DEFAULT_DEADLINE_MS))
    try:
        ms = int(raw)
    except ValueError:
        raise ValueError("FLAGS_rpc_deadline must be an integer number of milliseconds, got %r" % raw)
    if ms <= 0:
        raise ValueError("FLAGS_rpc_deadline must be > 0 ms, got %d" % ms)
    return ms / 1000.0


def _split(ep):
    host, _, port = ep.rpartition(":")
    return host, int(port)


class Communicator:
    """One process group with Paddle's view of it: rank, nranks, endpoints; async works waited by sync()."""

    def __init__(self, pg, rank, endpoints, device, backend, timeout_s):
        self.pg = pg
        self.rank = rank
        self.nranks = len(endpoints)
        self.endpoints = list(endpoints)
        self.device = device
        self.backend = backend
        self.timeout_s = timeout_s
        self.pending = []
        _live.append(self)

    def __repr__(self):
        return "<Communicator %s rank %d/%d %s>" % (self.backend, self.rank, self.nranks, ",".join(self.endpoints))

    def _what(self, op):
        return "%s over trainers %s (this is trainer %d)" % (op, ",".join(self.endpoints), self.rank)

    def allreduce_async(self, tensor, op=None):
        opts = dist.AllreduceOptions()
        opts.reduceOp = dist.ReduceOp.SUM if op is None else op
        return self.pg.allreduce([tensor], opts)

    def broadcast_async(self, tensor, root):
        opts = dist.BroadcastOptions()
        opts.rootRank = int(root)
        opts.rootTensor = 0
        return self.pg.broadcast([tensor], opts)

    def wait(self, work, op="allreduce"):
        try:
            work.wait()
        except Exception as e:
            raise CommError("%s failed or exceeded FLAGS_rpc_deadline=%dms: a trainer stopped, crashed or fell "
                            "behind (%s: %s)" % (self._what(op), self.timeout_s * 1000, type(e).__name__, e)) from e

    def sync(self):
        """Wait for every collective started asynchronously (Paddle's c_sync_comm_stream)."""
        pending, self.pending = self.pending, []
        for work, op in pending:
            self.wait(work, op)

    def allreduce_(self, tensors, op=None):
        """In-place sum of dense tensors across trainers, coalesced into one buffer per dtype/device."""
        for group in _coalesce(tensors):
            flat = torch.cat([t.reshape(-1) for t in group]) if len(group) > 1 else group[0].reshape(-1)
            self.wait(self.allreduce_async(flat, op))
            if len(group) > 1 or flat.data_ptr() != group[0].data_ptr():
                _unflatten_into(flat, group)

    def broadcast_(self, tensors, root=0):
        for group in _coalesce(tensors):
            flat = torch.cat([t.reshape(-1) for t in group]) if len(group) > 1 else group[0].reshape(-1)
            self.wait(self.broadcast_async(flat, root), "broadcast")
            if len(group) > 1 or flat.data_ptr() != group[0].data_ptr():
                _unflatten_into(flat, group)

    def barrier(self):
        self.wait(self.pg.barrier(dist.BarrierOptions()), "barrier")


def _coalesce(tensors):
    groups = collections.OrderedDict()
    for t in tensors:
        groups.setdefault((t.dtype, t.device), []).append(t)
    return list(groups.values())


def _unflatten_into(flat, group):
    off = 0
    with torch.no_grad():
        for t in group:
            n = t.numel()
            t.copy_(flat[off:off + n].view_as(t))
            off += n


# ---------------------------------------------------------------------------------------------------------
# Rendezvous
_stores = {}                         # (endpoints, is trainer 0) -> the store, one per process
_servers = []                        # trainer 0's rendezvous listeners (alive as long as the process)
_generation = collections.Counter()  # (endpoints, tag) -> how many groups this process built (all agree)
_live = []                           # every Communicator, released before interpreter teardown


def _deadline_ms():
    return int(deadline_seconds() * 1000)


def _digest(endpoints):
    return hashlib.sha256(",".join(endpoints).encode()).hexdigest()[:16]


def _admit(endpoints):
    """Trainer 0's check of who joins its rendezvous: a trainer of this job, given the same endpoint list."""
    digest = _digest(endpoints)

    def admit(identity, peer):
        who, _, theirs = identity.partition("|")
        if not who.startswith("trainer "):
            raise Refused("trainer 0's rendezvous (%s) takes the job's trainers, not %r" % (endpoints[0], who))
        if theirs != digest:
            raise Refused("%s (%s) was given other trainer endpoints than trainer 0 (%s): the trainers were given "
                          "different endpoint lists" % (who, peer, ",".join(endpoints)))
        return who
    return admit


def _store(endpoints, rank, t_end):
    key = (tuple(endpoints), rank == 0)
    store = _stores.get(key)
    if store is not None:
        return store
    timeout_s = deadline_seconds()
    where = "trainer 0's rendezvous (%s)" % endpoints[0]
    if rank == 0:
        # trainer 0's own address only, authenticated with the job key (backends/wire)
        kv = KVStore(where)
        try:
            srv = wire_server.Server(endpoints[0], where, "trainer 0|%s" % _digest(endpoints), kv.handlers(),
                                     admit=_admit(endpoints))
        except OSError as e:
            raise RendezvousError("trainer 0 cannot listen on its endpoint %s (%s): another process uses the "
                                  "port, or the address is not this machine's" % (endpoints[0], e)) from e
        _servers.append(srv)
        store = WireStore(local_caller(kv), timeout_s, where)
    else:
        try:
            conn = wire_client.Connection(endpoints[0], "trainer %d|%s" % (rank, _digest(endpoints)), t_end,
                                          what="trainer 0 (%s)" % endpoints[0])
        except wire_client.KeyMismatchError as e:
            raise RendezvousError("trainer %d (%s): %s" % (rank, endpoints[rank], e)) from None
        except PsError as e:
            if "cannot reach" not in str(e):
                raise RendezvousError("trainer %d (%s): %s" % (rank, endpoints[rank], e)) from None
            host, port = _split(endpoints[0])
            raise RendezvousError(
                "trainer %d (%s) could not reach trainer 0 at %s:%d within FLAGS_rpc_deadline=%dms: is trainer 0 "
                "running and does its endpoint match (trainers=%s)?"
                % (rank, endpoints[rank], host, port, _deadline_ms(), ",".join(endpoints))) from None
        store = WireStore(lambda name, *args: conn.call_async(name, *args), timeout_s, where)
        store._conn = conn
    _stores[key] = store
    return store


def connect(endpoints, rank, device="cpu", tag="nccl2"):
    """Form a group of len(endpoints) trainers, this one being `rank`; returns a Communicator."""
    endpoints = list(endpoints)
    n = len(endpoints)
    if not 0 <= rank < n:
        raise ValueError("trainer id %d is out of range for %d trainer endpoints (%s)" % (rank, n, ",".join(endpoints)))
    timeout_s = deadline_seconds()
    t_end = time.monotonic() + timeout_s
    store = _store(endpoints, rank, t_end)
    gen_key = (tuple(endpoints), tag)
    gen = _generation[gen_key]
    _generation[gen_key] += 1
    st = dist.PrefixStore("paddle_compat/%s/%d" % (tag, gen), store)
    keys = ["endpoint/%d" % r for r in range(n)]
    st.set(keys[rank], endpoints[rank])
    try:
        st.wait(keys, datetime.timedelta(seconds=max(t_end - time.monotonic(), 0.001)))
    except Exception:
        missing = [endpoints[r] for r in range(n) if not st.check([keys[r]])]
        raise RendezvousError("trainers %s never joined %s's group within FLAGS_rpc_deadline=%dms (this is trainer "
                              "%d, %s; trainers=%s): start every trainer, with its own trainer_id"
                              % (",".join(missing) or "?", tag, _deadline_ms(), rank, endpoints[rank],
                                 ",".join(endpoints))) from None
    for r in range(n):
        got = st.get(keys[r]).decode()
        if got != endpoints[r]:
            raise RendezvousError("trainer %d registered endpoint %s but this trainer's list says %s: the trainers "
                                  "were given different endpoint lists" % (r, got, endpoints[r]))
    backend = "nccl" if str(device).startswith("cuda") else "gloo"
    # the group's own timeout bounds every later collective too: the full deadline, not what is left of it
    op_timeout = datetime.timedelta(seconds=timeout_s)
    try:
        pg = _nccl_group(st, rank, n, device, op_timeout) if backend == "nccl" else \
            _gloo_group(st, rank, n, _split(endpoints[rank])[0], op_timeout)
    except Exception as e:
        raise RendezvousError("building the %s group over trainers %s failed (this is trainer %d): %s"
                              % (backend, ",".join(endpoints), rank, e)) from e
    return Communicator(pg, rank, endpoints, device, backend, timeout_s)


def _gloo_group(store, rank, n, host, timeout):
    opts = dist.ProcessGroupGloo._Options()
    opts._timeout = timeout
    try:   # bind to this trainer's own address; fall back to gloo's default interface choice
        opts._devices = [dist.ProcessGroupGloo.create_device(hostname=host)]
    except Exception:
        opts._devices = [dist.ProcessGroupGloo.create_default_device()]
    return dist.ProcessGroupGloo(store, rank, n, opts)


def _nccl_group(store, rank, n, device, timeout):
    if not dist.is_nccl_available():
        raise RuntimeError("this torch build has no NCCL; run on CPUPlace (gloo) instead")
    torch.cuda.set_device(torch.device(device))
    opts = dist.ProcessGroupNCCL.Options()
    opts._timeout = timeout
    return dist.ProcessGroupNCCL(store, rank, n, opts)


# ---------------------------------------------------------------------------------------------------------
# Rings of the collective ops: process-wide, as Paddle's CommContext (c_comm_init has no output variable).
_rings = {}


def register_ring(ring_id, comm):
    _rings[int(ring_id)] = comm


def ring(ring_id):
    comm = _rings.get(int(ring_id))
    if comm is None:
        raise CommError("collective ring %d is not initialised: run the startup program of the collective-mode "
                        "transpile (its c_comm_init ops) before the main program" % ring_id)
    return comm


def any_communicator():
    return _live[-1] if _live else None


@atexit.register
def _release():
    # Drop the groups before interpreter teardown: a gloo group destroyed during C++ static destruction,
    # while a peer is still connected, can abort the process.
    if not (_rings or _live or _stores or _servers):
        return      # no group was made (a pserver job, a single process): no full GC walks over torch's objects
    _rings.clear()
    while _live:
        c = _live.pop()
        c.pending = []
        c.pg = None
    gc.collect()
    _stores.clear()
    gc.collect()
    while _servers:
        _servers.pop().close()
