"""SelectedRows accessors (merge_selected_rows, get_tensor_from_selected_rows) and the pserver programs'
local splits (split_byref, split_selected_rows, ref_by_trainer_id: no communication, so they run here
without the pserver runtime).

They act on the backend's row-sparse representation (torch sparse COO tensors, backends/selected_rows.py),
so they stay with the backend while the other tensor ops are defined in paddle_compat/ops/defs/tensor_ops.py.
"""

import torch

from ...selected_rows import make_rows, merge_rows, rows_values
from ....ops import kernel
from .common import attr


@kernel("merge_selected_rows")
def merge_selected_rows(op, ctx):
    def k(x):
        if not x.is_sparse:
            raise TypeError("merge_selected_rows: %s is not row-sparse (SelectedRows)" % op.input("X")[0])
        rows, values = merge_rows(x)
        return make_rows(rows, values, x.shape[0])
    return k


@kernel("get_tensor_from_selected_rows")
def get_tensor_from_selected_rows(op, ctx):
    def k(x):
        if not x.is_sparse:
            raise TypeError("get_tensor_from_selected_rows: %s is not row-sparse (SelectedRows)" % op.input("X")[0])
        return rows_values(x)[1]
    return k


@kernel(["split_byref", "split_selected_rows"])
def split_byref(op, ctx):
    """Row blocks of X as views (no copy), as Paddle's split_byref; split_selected_rows cuts a row-sparse
    X at its height_sections into one SelectedRows per block (height: the section), rows renumbered within
    the block. (A pserver job's own split is comm_plan's, which merges before sending.)"""
    sections = [int(s) for s in (attr(op, "sections", None) or attr(op, "height_sections", []))]
    axis = int(attr(op, "axis", 0))

    def k(x):
        if x.is_sparse:
            return split_selected_rows(x, sections, op.input("X")[0])
        return list(torch.split(x, sections, axis))
    return k


def split_selected_rows(x, sections, name):
    """Paddle 1.8's split_selected_rows: every row goes to the section holding it, order and repeats kept
    (no merge); the sections need not add up to X's height, but a row past their end is an error, as
    with no sections at all."""
    rows, values = rows_values(x)
    if not sections:
        raise ValueError("split_selected_rows: height_sections of %s is empty" % name)
    ends = torch.tensor(sections, dtype=torch.int64, device=rows.device).cumsum(0)
    if rows.numel() and int(rows.max()) >= int(ends[-1]):
        raise IndexError("split_selected_rows: %s has row %d but its height_sections %s cover rows 0..%d only"
                         % (name, int(rows.max()), sections, int(ends[-1]) - 1))
    block = torch.bucketize(rows, ends, right=True)
    out, start = [], 0
    for i, size in enumerate(sections):
        mask = block == i
        out.append(make_rows(rows[mask] - start, values[mask], size, coalesced=x.is_coalesced()))
        start += size
    return out


@kernel("ref_by_trainer_id")
def ref_by_trainer_id(op, ctx):
    return lambda xs, tid: xs[int(tid.reshape(-1)[0])]
