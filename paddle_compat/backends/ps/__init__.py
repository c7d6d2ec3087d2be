"""Pserver mode on the wire transport (backends/wire): each trainer holds one authenticated connection to
each pserver; messages are plain data and tensors, decoded by a codec that cannot build anything else.

  membership.py who is connected to a pserver, what a closed connection means (sync: a lost trainer fails
                the job; async / half-async / Geo: elastic, trainers come and go), when serving ends
  service.py    the pserver: its blocks in its scope, the handlers (exchange, done, pull_state, ...), sync rounds
  optimize.py   the pserver's optimize sub-blocks, lowered once, applied to received gradients
  client.py     the trainer: one call per pserver per step, overlapped across pservers
  connections.py  who holds a trainer's connection (the Executors running its job), and the one lookup of
                the joined connection for code with no Executor at hand
  comm_plan.py  how a lowered block's send/recv/barrier ops batch into those calls
  exchange.py   trainer-to-trainer payloads through pserver 0's key-value store
  kernels.py    the kernels of the ops declared runtime="ps" (send, recv, barriers, listen_and_serv, prefetch,
                geo_sgd), registered with the lowering's registry on first need
torch.distributed.rpc is not used.
"""

from ..lowering import registry as _kernel_registry
from ...ops import remote_rows as _remote_rows


def _load_kernels():
    # kept in a function: torch and the service modules load with the first program holding a pserver op
    from . import kernels  # noqa: F401


_kernel_registry.provide("ps", _load_kernels)


def _fetch_rows(op, ids, like):
    # kept in a function: the reader loads torch and the wire client
    from .layer_reader import fetch_rows
    return fetch_rows(op, ids, like)


_remote_rows.provide(_fetch_rows)
