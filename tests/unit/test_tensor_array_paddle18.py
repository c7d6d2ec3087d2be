"""tensor_array_to_tensor (concat and stack, OutIndex, gradients back into the written elements) against
numbers recorded from Paddle 1.8.5 (tests/data/paddle18/make_tensor_array.py, whose case code runs here)."""

import importlib.util
import json
import os

import numpy as np
import pytest

import paddle_compat as fluid

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18")
with open(os.path.join(DATA, "tensor_array.json")) as _fh:
    REF = json.load(_fh)
_spec = importlib.util.spec_from_file_location("make_tensor_array", os.path.join(DATA, "make_tensor_array.py"))
MK = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(MK)


@pytest.mark.parity
@pytest.mark.parametrize("i", range(len(MK.CASES)))
def test_tensor_array_to_tensor_matches_paddle18(i):
    shapes, axis, stack = MK.CASES[i]
    got, want = MK.run(fluid, shapes, axis, stack), REF[i]
    np.testing.assert_allclose(got["out"], want["out"], rtol=1e-6)
    if axis >= 0:   # Paddle 1.8.5 reads OutIndex past the dims for a negative axis (garbage)
        assert got["index"] == want["index"]
    for g, w in zip(got["grads"], want["grads"]):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_tensor_array_to_tensor_names_the_array_when_shapes_disagree():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        arr = fluid.layers.create_array("float32")
        for j, n in enumerate((2, 3)):
            fluid.layers.array_write(fluid.layers.fill_constant([n, 2], "float32", 1.0),
                                     fluid.layers.fill_constant([1], "int64", j), arr)
        out, _ = fluid.layers.tensor_array_to_tensor(arr, axis=1)
    with pytest.raises(Exception, match=r"elements of array '%s' \(shapes \[\[2, 2\], \[3, 2\]\]\) do not concat"
                       % arr.name):
        fluid.Executor(fluid.CPUPlace()).run(main, fetch_list=[out])
