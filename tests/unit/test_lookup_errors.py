"""Every lookup kernel (local, fused with sequence_pool, the distributed table's) shares one helper
(ops/defs/lookup_table.py): the same ids handling, padding rows and out-of-range error."""

import numpy as np
import pytest
import torch

import paddle_compat as fluid
from paddle_compat.ops.defs import lookup_table as lk


@pytest.mark.parametrize("api", ["layers", "v2"])
def test_local_lookup_names_table_ids_and_range(api):
    ids = fluid.layers.data("ids_r", shape=[1], dtype="int64", append_batch_size=True)
    attr = fluid.ParamAttr(name="emb_w")
    if api == "layers":
        fluid.layers.embedding(ids, size=[10, 4], param_attr=attr)
    else:
        fluid.embedding(ids, size=[10, 4], param_attr=attr)
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(fluid.default_startup_program())
    with pytest.raises(Exception, match=r"an id fed to ids_r is outside the table emb_w of 10 rows "
                                        r"\(ids: min 3, max 12\)"):
        exe.run(feed={"ids_r": np.array([[3], [12]], np.int64)}, fetch_list=[])


def test_helper_pads_flattens_and_checks():
    w = torch.arange(12, dtype=torch.float32).reshape(4, 3)
    ids = lk.lookup_ids(torch.tensor([[1], [2], [1]], dtype=torch.int32), squeeze_last=True)
    assert ids.dtype == torch.int64 and ids.shape == (3,)
    out = lk.embed(ids, w, "lookup_table", "x", "the table w", padding_idx=1)
    assert out[0].tolist() == [0, 0, 0] and out[1].tolist() == [6, 7, 8]
    assert lk.lookup_ids(torch.tensor([[1, 2]]), flatten=True).shape == (2,)
    with pytest.raises(IndexError, match="lookup_table: an id fed to a, b is outside the table w of 4 rows"):
        lk.check_id_range(torch.tensor([0, 4]), 4, "lookup_table", ["a", "b"], "the table w", always=True)
