"""SelectedRows accessors (merge_selected_rows, get_tensor_from_selected_rows) and the pserver programs'
local splits (split_byref, split_selected_rows, ref_by_trainer_id: no communication, so they run here
without the pserver runtime).

They act on the backend's row-sparse representation (torch sparse COO tensors, backends/selected_rows.py),
so they stay with the backend while the other tensor ops are defined in paddle_compat/ops/defs/tensor_ops.py.
"""

import torch

from ...selected_rows import make_rows, merge_rows, merged, rows_values, split_rows
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
    gradient (is_sparse) at its height_sections into one SelectedRows per block, rows merged first (each
    touched row once) and renumbered within the block: only those rows are then sent."""
    sections = [int(s) for s in (attr(op, "sections", None) or attr(op, "height_sections", []))]
    axis = int(attr(op, "axis", 0))

    def k(x):
        if x.is_sparse:
            return split_rows(merged(x), sections)
        return list(torch.split(x, sections, axis))
    return k


@kernel("ref_by_trainer_id")
def ref_by_trainer_id(op, ctx):
    return lambda xs, tid: xs[int(tid.reshape(-1)[0])]
