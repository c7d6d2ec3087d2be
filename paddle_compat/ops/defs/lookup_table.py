"""lookup_table and lookup_table_v2 (Paddle's lookup_table_op, lookup_table_v2_op), and the one lookup helper
every lookup kernel uses (these, the lowering's fused lookup + sequence_pool, the distributed table's
split_ids / merge_ids / lookup_sparse_table): the ids as int64 indices, padding_idx rows output as zeros, and
an id outside the table raised as an IndexError naming the op, the ids, the table and the ids' range.
"""

from ...ir import places
from ...ir.lazy import F, torch
from .. import remote_rows
from ..registry import OutMeta, attr, defop
from ..shapes import first

__all__ = ["lookup_ids", "id_range_error", "check_id_range", "embed", "zero_padding", "mark_checked",
           "checked_below"]


def lookup_ids(ids, squeeze_last=False, flatten=False):
    """ids as int64 indices. flatten: one dim ([N]); squeeze_last: lookup_table's [..., 1] ids lose their
    trailing 1 ([N, 1] -> [N]; squeezing the int ids, not the float output, keeps a view op out of the
    autograd graph); else the ids keep their shape (lookup_table_v2)."""
    if flatten:
        ids = ids.reshape(-1)
    elif squeeze_last and ids.dim() > 1 and ids.shape[-1] == 1:
        ids = ids.view(ids.shape[:-1])
    return ids if ids.dtype == torch.int64 else ids.long()


def id_range_error(op_type, ids_names, table, rows, ids):
    """The error for an id outside a table of `rows` rows. table: what is looked into, e.g. "the table emb",
    "the distributed table emb", "the shard emb.block0 of table emb"."""
    names = ids_names if isinstance(ids_names, str) else ", ".join(ids_names)
    lo, hi = (int(ids.min()), int(ids.max())) if ids.numel() else (0, 0)
    return IndexError("%s: an id fed to %s is outside %s of %d rows (ids: min %d, max %d)"
                      % (op_type, names, table, rows, lo, hi))


def check_id_range(ids, rows, op_type, ids_names, table, always=False):
    """Check ids against [0, rows) before indexing: always on a GPU (an id outside the table trips a
    device-side assert that poisons the whole CUDA context; one sync), on the CPU only when `always` (torch's
    own index check raises otherwise, and embed names it). Not while a CUDA graph is captured: its replays
    run no Python, so ids fed straight to a lookup are checked on the host before they are uploaded
    (backends/feeds.py, FeedSpec), and other ids meet torch's device-side check, as Paddle 1.8.5's own
    GPU kernel's assert."""
    if not ids.numel() or not (ids.device.type != "cpu" or always) or places.capturing(ids.device):
        return
    lo, hi = (int(v) for v in torch.stack(torch.aminmax(ids)).tolist())
    if lo < 0 or hi >= rows:
        raise id_range_error(op_type, ids_names, table, rows, ids)


def zero_padding(out, ids, padding_idx):
    """Paddle outputs zeros for padding ids (torch's embedding would return the row)."""
    if padding_idx is not None and padding_idx >= 0:
        return out.masked_fill((ids == padding_idx).unsqueeze(-1), 0.0)
    return out


def mark_checked(t, bound):
    """Record on a fed tensor that its values were checked against [0, bound) on the host (backends/feeds.py),
    so a kernel need not check them again (that check syncs on a GPU)."""
    t._checked_below = bound
    return t


def checked_below(t):
    """The bound mark_checked recorded on this tensor, or None."""
    return getattr(t, "_checked_below", None)


def embed(ids, w, op_type, ids_names, table, padding_idx=-1, sparse=False, checked=False):
    """Rows of w for int64 ids (any shape), padding ids as zero rows; is_sparse: autograd gives w a row-sparse
    COO gradient (SelectedRows, see backends/selected_rows.py)."""
    if not checked:     # (ids fed and checked on the host: no second check, which syncs on a GPU)
        check_id_range(ids, w.shape[0], op_type, ids_names, table)
    pad = padding_idx if padding_idx is not None and padding_idx >= 0 else None
    try:
        # (without a padding id, F.embedding's checks have nothing to do: torch.embedding itself, one call less)
        out = torch.embedding(w, ids, -1, False, sparse) if pad is None else \
            F.embedding(ids, w, padding_idx=pad, sparse=sparse)
    except IndexError:
        raise id_range_error(op_type, ids_names, table, w.shape[0], ids) from None
    return zero_padding(out, ids, pad)


def _lookup_shape(squeeze_last):
    def infer(ins, attrs):
        ids, w = first(ins, "Ids"), first(ins, "W")
        shape = list(ids.shape)
        if squeeze_last and shape and shape[-1] == 1:
            shape = shape[:-1]
        return {"Out": OutMeta(shape + [w.shape[1]], w.dtype, ids.lod_level)}
    return infer


def _lookup(op, squeeze_last):
    padding_idx = attr(op, "padding_idx", -1)
    sparse = bool(attr(op, "is_sparse", False))
    ids_name, table = op.input("Ids")[0], "the table %s" % op.input("W")[0]

    if remote_rows.is_remote(op):
        # the rows live on servers (Paddle's remote prefetch, ops/remote_rows.py): fetched for these ids
        def remote(ids, w):
            idx = lookup_ids(ids, squeeze_last)
            rows = remote_rows.fetch(op, idx, w).reshape(tuple(idx.shape) + tuple(w.shape[1:]))
            return zero_padding(rows, idx, padding_idx if padding_idx is not None and padding_idx >= 0 else None)
        return remote

    def k(ids, w):
        if w.is_sparse:     # a SelectedRows table (rows are ids): its dense form holds each id's row there
            w = w.coalesce().to_dense()
        bound = checked_below(ids)
        return embed(lookup_ids(ids, squeeze_last), w, op.type, ids_name, table, padding_idx, sparse,
                     checked=bound is not None and bound <= w.shape[0])
    return k


def _fed_ids(op, block):
    """fed_index: the ids against the table's rows."""
    if remote_rows.is_remote(op) or not op.input("Ids") or not op.input("W"):
        return None
    w = block._find_var_recursive(op.input("W")[0])
    rows = w.shape[0] if w is not None and w.shape else -1
    if rows <= 0:
        return None
    ids, table = op.input("Ids")[0], "the table %s" % op.input("W")[0]
    return ids, rows, lambda values: id_range_error(op.type, ids, table, rows, values)


@defop("lookup_table", inputs=("Ids", "W"), infer_shape=_lookup_shape(True), lookup=True, sparse_grad_slot="W",
       fed_index=_fed_ids)
def lookup_table(op, ctx):
    return _lookup(op, squeeze_last=True)


@defop("lookup_table_v2", inputs=("Ids", "W"), infer_shape=_lookup_shape(False), lookup=True,
       sparse_grad_slot="W", fed_index=_fed_ids)
def lookup_table_v2(op, ctx):
    return _lookup(op, squeeze_last=False)
