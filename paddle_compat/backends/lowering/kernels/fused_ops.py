"""The lowering's fused op (see backends/lowering/fusion.py): k lookups of one table, each sum-pooled.

It exists only inside lowered blocks (no program names it), so it lives with the backend rather than among
the op definitions in paddle_compat/ops/defs/.
"""

import torch
import torch.nn.functional as F

from ..fusion import FUSED_TYPE
from ..registry import register
from .common import attr
from ....ops.defs.tensor_ops import check_ids_on_gpu


@register(FUSED_TYPE, inputs=("Ids*", "W"), outputs=("Out*",), lod_in=("Ids*",), lod_out=("Out*",))
def fused_lookup_seqpool_sum(op, ctx):
    """k lookups of one table, each sum-pooled: one embedding over all ids, one segment_reduce over all
    sequences, split back per slot (see backends/lowering/fusion.py). Same sums in the same order as
    the separate ops, and the same table gradient rows in the same order."""
    sparse = bool(attr(op, "is_sparse", False))
    names = op.input("Ids")

    def k(ids_list, w, lods):
        flat, offs, sizes, out_lods, base = [], [], [], [], 0
        # slots go in last to first: the table gradient then lists its rows in the order Paddle's `sum`
        # of the per-lookup gradients does, so a sparse update applies them in the same order
        for name, ids, lod in zip(reversed(names), reversed(ids_list), reversed(lods)):
            if not lod:
                raise ValueError("lookup_table + sequence_pool: ids %s carry no LoD (feed a LoDTensor to a "
                                 "variable declared with lod_level=1)" % name)
            off = lod[-1]
            if int(off[-1]) != ids.shape[0]:
                raise ValueError("sequence_pool: the LoD of %s covers %d rows but the tensor has %d"
                                 % (name, int(off[-1]), ids.shape[0]))
            flat.append(ids.reshape(-1))
            offs.append(off[1:] + base if offs else off)     # one offsets list over all slots' rows
            sizes.append(off.numel() - 1)
            out_lods.append(tuple(lod[:-1]) or None)
            base += ids.shape[0]
        all_ids = torch.cat(flat)
        if all_ids.dtype != torch.int64:
            all_ids = all_ids.long()
        try:
            check_ids_on_gpu(all_ids, w, "lookup_table")
            emb = F.embedding(all_ids, w, sparse=sparse)
        except IndexError:
            raise IndexError("lookup_table: an id fed to %s is outside the table %s of %d rows (ids: min %d, "
                             "max %d)" % (", ".join(names), op.input("W")[0], w.shape[0], int(all_ids.min()),
                                          int(all_ids.max()))) from None
        pooled = torch.segment_reduce(emb, "sum", offsets=torch.cat(offs), axis=0, unsafe=True)
        return list(torch.split(pooled, sizes))[::-1], out_lods[::-1]
    return k
