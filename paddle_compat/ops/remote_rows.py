"""Rows of a table that servers hold: lookup_table / lookup_table_v2 / nce with remote_prefetch and an `epmap`
(Paddle 1.8's prefetch from listen_and_serv servers, as its op tests build them) read the rows their ids need
from the servers instead of from W. `height_sections` cut the id space into one block per server (block i:
ids [sum(sections[:i]), sum(sections[:i+1])) from table_names[i] at epmap[i]).

The transport belongs to a backend runtime (backends/ps registers it with `provide`), which this layer does
not import; the kernels reach it through `fetch`. Our own transpiler never builds such ops (a distributed
table there is split_ids / prefetch / merge_ids), so an op without an epmap reads W as before.
"""

__all__ = ["provide", "is_remote", "fetch"]

_PROVIDER = []


def provide(fn):
    """fn(op, ids, like) -> rows: the runtime's fetch (see `fetch`)."""
    _PROVIDER[:] = [fn]


def is_remote(op):
    return bool(op.attrs.get("remote_prefetch")) and bool(op.attrs.get("epmap"))


def fetch(op, ids, like):
    """The rows of int64 `ids` (1-D) from the servers, as a [len(ids), width] tensor of `like`'s dtype and
    device (like: the local W, whose width the rows have). A server is asked for id - the start of its block."""
    if not _PROVIDER:
        raise RuntimeError("%s with remote_prefetch reads its rows from servers %s, but the pserver runtime "
                           "(paddle_compat.backends.ps) is not loaded" % (op.type, list(op.attrs.get("epmap"))))
    return _PROVIDER[0](op, ids, like)
