"""accuracy's and Print's argument checks: Paddle 1.8.5's TypeErrors (layers/arg_checks.py)."""

import numpy as np
import pytest

import paddle_compat.fluid as fluid


def test_accuracy_and_print_refuse_what_paddle_refuses():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        t = fluid.create_lod_tensor(np.array([[-1]]), [[1]], fluid.CPUPlace())
        label = fluid.layers.data(name="label", shape=[-1, 1], dtype="int32")
        with pytest.raises(TypeError, match="The type of 'input' in accuracy"):
            fluid.layers.accuracy(t, label)
        x2 = fluid.layers.data(name="x2", shape=[4], dtype="int32")
        with pytest.raises(TypeError, match=r"The data type of 'input' in accuracy must be \['float16', "):
            fluid.layers.accuracy(x2, label)
        fluid.layers.accuracy(input=fluid.layers.data(name="x3", shape=[-1, 2], dtype="float16"), label=label)
        with pytest.raises(TypeError, match="fluid.layers.Print"):
            fluid.layers.Print(t)
        with pytest.raises(TypeError, match="received float16"):
            fluid.layers.Print(fluid.layers.data(name="x4", shape=[4], dtype="float16"))
        fluid.layers.Print(fluid.layers.data(name="x5", shape=[4], dtype="bool"))


def test_get_tensor_from_selected_rows_wants_a_selected_rows_variable():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.data("x", [-1, 4])
        with pytest.raises(TypeError, match="must be SELECTED_ROWS"):
            fluid.layers.get_tensor_from_selected_rows(x)
        rows = fluid.default_main_program().global_block().create_var(
            name="rows", type=fluid.core.VarDesc.VarType.SELECTED_ROWS, shape=[10, 4], dtype="float32",
            persistable=True)
        assert fluid.layers.get_tensor_from_selected_rows(rows).shape[1:] == (4,)
