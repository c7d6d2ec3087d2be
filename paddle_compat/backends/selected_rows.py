"""Row-sparse tensors (Paddle's SelectedRows) as torch sparse COO tensors.

A gradient of embedding(is_sparse=True) comes out of autograd as an uncoalesced COO tensor of shape
[height, ...]: indices[0] are the looked-up rows in lookup order (a row repeats once per use), values
the matching gradient rows. That is exactly Paddle's SelectedRows, so it is kept as is end to end:
`sum` concatenates rows, optimizers touch only these rows, and `merge_rows` (Paddle's MergeAdd: unique
sorted rows, repeated rows added up) is applied where Paddle merges (adagrad, lazy adam, clipping) and
before anything is sent over the wire. `split_rows` cuts rows by row ranges (Paddle's
split_selected_rows) for parameter blocks that live on different servers.
"""

import torch

__all__ = ["is_rows", "rows_values", "merge_rows", "make_rows", "split_rows", "scale_rows", "pack_rows",
           "unpack_rows", "merged"]


def is_rows(t):
    return isinstance(t, torch.Tensor) and t.is_sparse


def rows_values(t):
    """(rows int64 [n], values [n, ...]) as produced, repeats kept, no copy."""
    return t._indices()[0], t._values()


def merge_rows(t):
    """(unique rows ascending, summed values): Paddle's MergeAdd."""
    c = t.coalesce()
    return c._indices()[0], c._values()


def make_rows(rows, values, height, coalesced=False):
    """coalesced=True: the caller knows rows are unique and ascending (merge_rows is then free)."""
    return torch.sparse_coo_tensor(rows.reshape(1, -1), values, (int(height),) + tuple(values.shape[1:]),
                                   check_invariants=False, is_coalesced=bool(coalesced))


def merged(t):
    """The same row-sparse tensor with each row once, rows ascending (Paddle's merge_selected_rows)."""
    if t.is_coalesced():
        return t
    rows, values = merge_rows(t)
    return make_rows(rows, values, t.shape[0], coalesced=True)


def pack_rows(t):
    """A row-sparse tensor as it travels to a pserver: (rows, values), rows merged (each row once, summed,
    as Paddle's merge_selected_rows) so a row's gradient crosses the wire once."""
    rows, values = merge_rows(t)
    return rows, values.contiguous()


def unpack_rows(payload, height):
    rows, values = payload
    return make_rows(rows, values, height, coalesced=True)


def scale_rows(t, factor):
    """t * factor, keeping t row-sparse (factor: a python number or a 1-element tensor)."""
    rows, values = rows_values(t)
    return make_rows(rows, values * factor, t.shape[0])


def split_rows(t, sections):
    """Cut a row-sparse [height, ...] tensor into one per row block (block i holds rows
    [sum(sections[:i]), sum(sections[:i+1]))), rows renumbered from 0 within each block. Rows keep
    their order and repeats (merge first to send each row once)."""
    rows, values = rows_values(t)
    out, start = [], 0
    coalesced = t.is_coalesced()
    for size in sections:
        mask = (rows >= start) & (rows < start + size)
        out.append(make_rows(rows[mask] - start, values[mask], size, coalesced=coalesced))
        start += size
    if start != t.shape[0]:
        raise ValueError("split_rows: sections %s add up to %d rows but the tensor has %d"
                         % (list(sections), start, t.shape[0]))
    return out
