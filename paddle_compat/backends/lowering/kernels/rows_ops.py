"""SelectedRows accessors: merge_selected_rows and get_tensor_from_selected_rows.

They act on the backend's row-sparse representation (torch sparse COO tensors, backends/selected_rows.py),
so they stay with the backend while the other tensor ops are defined in paddle_compat/ops/defs/tensor_ops.py.
"""

from ...selected_rows import make_rows, merge_rows, rows_values
from ....ops import kernel


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
