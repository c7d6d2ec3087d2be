"""Who owns a trainer's connection to its pserver job, and the one way to find it without an Executor.

Ownership. A connection (client.TrainerClient: one wire connection to each pserver of a job, speaking as
trainer <id>) belongs to the Executors that run that job's trainer programs. The first RPC op an Executor
lowers for a job asks `for_executor(executor, plan)` (through its lowering context, ctx.executor): the
process's live connection of that job if there is one, else a new one. Paddle 1.8's RPC client was one per
process per trainer id, so a script's startup Executor, its training Executor and train_from_dataset's Hogwild
threads all speak as the same trainer over the same connection. Every holder counts once; Executor.close()
lets go, and the last holder's close tells the pservers this trainer is done (Paddle's Executor.close()).
Connections never let go of are closed at interpreter exit (client.py). A process is a trainer of one job at
a time: a second job's connection is refused while another job's is joined.

Lookup. Code with no Executor at hand (fleet's barrier_worker and stop_worker, the trainers' exchange behind
InMemoryDataset.global_shuffle and the fleet-wide sizes) asks `joined()`: the one joined, open connection of
this process. Two joined connections of different jobs raise an error naming both jobs' pservers rather than
pick one (the refusal above keeps that from happening; the lookup does not rely on it).

The registry below (live connections by job) is the only process-wide table of connections. This module loads
with fluid and imports no torch.
"""

import threading
import weakref

from .client import TrainerClient
from .errors import PsError

__all__ = ["RUNTIME_KEY", "job_key", "for_executor", "for_job", "acquire", "release", "joined", "live", "close_joined"]

_lock = threading.RLock()
_live = {}          # job key -> TrainerClient, from its making until it is closed

# where an Executor keeps the connections it holds ({job key: connection}; Executor.runtime is its
# per-executor backend state)
RUNTIME_KEY = "pserver_connections"


def job_key(plan):
    """A job, as its trainer sees it: its pservers, how many trainers, which one this is."""
    return (tuple(plan.pserver_endpoints), int(plan.trainers), int(plan.trainer_id))


def _describe(conn):
    return "trainer %d of %d with pservers %s" % (conn.trainer_id, conn.info.trainers, ",".join(conn.endpoints))


def _refuse_other_job(conn):
    """Called under _lock before `conn` is made or joins: no other job's connection may be joined (or joining)."""
    for other in _live.values():
        if other is not conn and other.key != conn.key and not other.closed and (other.joined or other.joining):
            raise PsError("this process is already trainer %d of a job with pservers %s; close its Executor "
                          "before running another job's trainer program (pservers %s)"
                          % (other.trainer_id, ",".join(other.endpoints), ",".join(conn.endpoints)))


def _before_join(conn):
    with _lock:
        _refuse_other_job(conn)
        conn.joining = True


def _forget(conn):
    with _lock:
        if _live.get(conn.key) is conn:
            del _live[conn.key]


def acquire(plan, holder):
    """The live connection of the job of TrainerPlan `plan`, held by `holder` (made if the process has none)."""
    key = job_key(plan)
    with _lock:
        conn = _live.get(key)
        if conn is None or conn.closed:
            conn = TrainerClient(plan, before_join=_before_join, on_close=_forget)
            _refuse_other_job(conn)
            _live[key] = conn
        conn.holders.add(holder)
    return conn


def release(conn, holder):
    """`holder` no longer uses `conn`; the last holder to let go closes it (the pservers hear this trainer is
    done)."""
    with _lock:
        if holder is not None:
            conn.holders.discard(holder)
        last = not conn.holders
    if last:
        conn.close()


def for_executor(executor, plan):
    """The connection `executor` uses for the job of `plan`: held by it until its close()."""
    if executor is None:
        raise PsError("the RPC ops of trainer %d (pservers %s) run under an Executor: it owns the trainer's "
                      "connection (Executor.close() tells the pservers the trainer is done)"
                      % (plan.trainer_id, ",".join(plan.pserver_endpoints)))
    if executor._closed:
        raise RuntimeError("the Executor was closed (its trainer told the pservers it is done): create a new "
                           "Executor")
    held = executor.runtime.setdefault(RUNTIME_KEY, {})
    key = job_key(plan)
    conn = held.get(key)
    if conn is not None and not conn.closed:
        return conn
    with _lock:
        conn = held.get(key)
        if conn is not None and not conn.closed:
            return conn
        conn = acquire(plan, executor)
        held[key] = conn
    ref = weakref.ref(executor)     # the connection's holders are weak: a dropped Executor holds nothing
    executor._add_closer(lambda: release(conn, ref()))
    return conn


def for_job(plan, executor):
    """The live connection of the job of `plan`, whoever holds it; if there is none, one held by `executor`.
    For what reads the job without running its trainer program (a distributed save, a table export): the
    Executor it was given does not become a holder of a connection the training Executors hold."""
    with _lock:
        conn = _live.get(job_key(plan))
        if conn is not None and not conn.closed:
            return conn
    return for_executor(executor, plan)


def live():
    """This process's connections not yet closed (joined or not), in the order they were made."""
    with _lock:
        return [c for c in _live.values() if not c.closed]


def joined():
    """The one joined, open trainer connection of this process, or None. Raises PsError, naming both jobs'
    pservers, when connections to two jobs are joined."""
    with _lock:
        found = [c for c in _live.values() if c.joined and not c.closed]
    if len(found) > 1:
        raise PsError("this process is joined to %d pserver jobs (%s): which one is meant is ambiguous; close "
                      "the Executor of the job that is finished" % (len(found), "; ".join(map(_describe, found))))
    return found[0] if found else None


def close_joined():
    """Tell the pservers of this process's joined job that this trainer is done, whoever holds the connection
    (fleet.stop_worker). Returns whether there was one."""
    conn = joined()
    if conn is None:
        return False
    conn.close()
    return True
