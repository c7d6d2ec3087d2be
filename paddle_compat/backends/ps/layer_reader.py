"""Reading a hand-built server's variables without joining its rounds.

Paddle's op tests use listen_and_serv servers as stores: lookup_table / nce with remote_prefetch fetch table
rows from them (Paddle's prefetch RPC) and recv_save pulls whole variables (its GetVarNoBarrier). Such a
reader is not one of the server's `Fanin` clients: it takes no part in rounds and its coming and going
changes nothing there (layer_service.py admits the identity "reader|..." apart from its clients). A process
keeps one connection per server, closed at exit.
"""

import os
import threading
import time

import torch

from ..wire.client import Connection
from .errors import PsError, deadline_s, remote_message

__all__ = ["READER", "fetch_rows", "read_vars"]

READER = "reader"
_CONNS = {}
_LOCK = threading.Lock()


def _conn(endpoint):
    with _LOCK:
        c = _CONNS.get(endpoint)
        if c is None or c.lost is not None:
            c = _CONNS[endpoint] = Connection(endpoint, "%s|%d" % (READER, os.getpid()),
                                              time.monotonic() + deadline_s(), what="server %s" % endpoint)
        return c


def _wait(endpoint, fut, what):
    try:
        return fut.wait()
    except Exception as e:
        raise PsError("reading %s from server %s failed: %s" % (what, endpoint, remote_message(e))) from None


def fetch_rows(op, ids, like):
    """ops/remote_rows.fetch: the rows of `ids` from the servers of op's epmap, one call per server block
    that owes rows, all issued before any is awaited."""
    eps = list(op.attrs.get("epmap") or [])
    tables = list(op.attrs.get("table_names") or [])
    sections = [int(s) for s in (op.attrs.get("height_sections") or [])]
    if not (len(eps) == len(tables) == len(sections)):
        raise ValueError("%s with remote_prefetch: epmap %s, table_names %s and height_sections %s must have one "
                         "entry per server" % (op.type, eps, tables, sections))
    flat = ids.reshape(-1).long().cpu()
    ends = torch.tensor(sections, dtype=torch.int64).cumsum(0)
    if flat.numel() and (int(flat.min()) < 0 or int(flat.max()) >= int(ends[-1])):
        raise IndexError("%s: an id fed to %s is outside the %d rows the servers' height_sections %s hold "
                         "(ids: min %d, max %d)" % (op.type, ", ".join(op.input_arg_names[:1]), int(ends[-1]),
                                                    sections, int(flat.min()), int(flat.max())))
    block = torch.bucketize(flat, ends, right=True)
    pending = []
    for i, (ep, table) in enumerate(zip(eps, tables)):
        mask = block == i
        if not bool(mask.any()):
            continue
        mine = flat[mask]
        if i:
            mine = mine - int(ends[i - 1])
        pending.append((ep, table, mask, _conn(ep).call_async("layer_rows", table, mine.clone())))
    out = torch.zeros((flat.numel(),) + tuple(like.shape[1:]), dtype=like.dtype)
    for ep, table, mask, fut in pending:
        out[mask] = _wait(ep, fut, "rows of table '%s'" % table).to(like.dtype)
    return out.to(like.device)


def read_vars(endpoint, names):
    """Copies of the variables `names` a server's scope holds, as CPU tensors (they are sent as they are)."""
    return _wait(endpoint, _conn(endpoint).call_async("layer_vars", list(names)), "variables %s" % list(names))

