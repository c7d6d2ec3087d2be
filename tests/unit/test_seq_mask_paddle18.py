"""sequence_mask against outputs recorded from Paddle 1.8.5 (tests/data/paddle18/make_seq_mask.py)."""

import json
import os

import numpy as np
import pytest

import paddle_compat as fluid

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18")
with open(os.path.join(DATA, "seq_mask.json")) as _fh:
    REF = json.load(_fh)


@pytest.mark.parity
@pytest.mark.parametrize("i", range(len(REF["cases"])))
def test_sequence_mask_matches_paddle18(i):
    c = REF["cases"][i]
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data("x", shape=[3, 2], dtype="int64", append_batch_size=False)
        y = fluid.layers.sequence_mask(x, maxlen=c["maxlen"], dtype=c["dtype"])
    out, = fluid.Executor(fluid.CPUPlace()).run(main, feed={"x": np.array(REF["x"], "int64")}, fetch_list=[y])
    assert str(out.dtype) == c["out_dtype"]
    np.testing.assert_array_equal(out, c["out"])
