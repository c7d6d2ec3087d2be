"""The eager single-op path (fluid/eager_op.py): inside fluid.dygraph.guard, block.append_op runs the op at
once on VarBase inputs, and loss.backward() gives each leaf's gradient, as Paddle 1.8's OpTest drives it."""

import numpy as np
import pytest

import paddle_compat.fluid as fluid
from paddle_compat.fluid import core
from paddle_compat.fluid.eager_op import VarBase


def test_guard_runs_an_appended_op_at_once_and_fills_its_outputs():
    x = np.arange(6, dtype="float32").reshape(2, 3)
    y = np.full((2, 3), 0.5, dtype="float32")
    assert not fluid.in_dygraph_mode()
    with fluid.dygraph.guard(fluid.CPUPlace()):
        assert fluid.in_dygraph_mode() and fluid.dygraph.enabled()
        block = fluid.default_main_program().global_block()
        vx, vy = fluid.dygraph.to_variable(x), fluid.dygraph.base.to_variable(y)
        out = block.create_var(dtype=np.float32, type=core.VarDesc.VarType.LOD_TENSOR, persistable=False)
        assert isinstance(out, VarBase)
        block.append_op(type="elementwise_mul", inputs={"X": [vx], "Y": [vy]}, outputs={"Out": [out]})
        np.testing.assert_array_equal(out.numpy(), x * y)
        np.testing.assert_array_equal(np.array(out.value().get_tensor()), x * y)
        assert out.shape == [2, 3] and out.dtype == core.VarDesc.VarType.FP32
        assert not block.ops       # nothing was recorded in the (fresh) main program
    assert not fluid.in_dygraph_mode()


def test_optimizer_op_runs_eagerly():
    p = np.ones((3, 2), dtype="float32")
    g = np.full((3, 2), 2.0, dtype="float32")
    lr = np.array([0.1], dtype="float32")
    with fluid.dygraph.guard():
        block = fluid.default_main_program().global_block()
        ins = {k: [fluid.dygraph.to_variable(v)] for k, v in (("Param", p), ("Grad", g), ("LearningRate", lr))}
        out = block.create_var(name="ParamOut_eager", dtype=np.float32)
        block.append_op(type="sgd", inputs=ins, outputs={"ParamOut": [out]})
        np.testing.assert_allclose(out.numpy(), p - 0.1 * g, rtol=1e-6)
        assert out.name == "ParamOut_eager"


def test_lod_set_on_an_input_reaches_the_op():
    x = np.arange(10, dtype="float32").reshape(5, 2)
    with fluid.dygraph.guard():
        block = fluid.default_main_program().global_block()
        vx = fluid.dygraph.to_variable(x)
        vx.value().get_tensor().set_recursive_sequence_lengths([[2, 3]])
        out = block.create_var(dtype=np.float32)
        block.append_op(type="sequence_pool", inputs={"X": [vx]}, outputs={"Out": [out]},
                        attrs={"pooltype": "SUM"})
        np.testing.assert_allclose(out.numpy(), [x[:2].sum(0), x[2:].sum(0)])


def test_backward_gives_leaf_gradients_as_numpy():
    rng = np.random.RandomState(0)
    x = rng.rand(4, 3).astype("float64")
    w = rng.rand(3, 2).astype("float64")
    with fluid.dygraph.guard():
        block = fluid.default_main_program().global_block()
        vx, vw = fluid.dygraph.to_variable(x), fluid.dygraph.to_variable(w)
        vx.stop_gradient = False
        vw.stop_gradient = False
        out = block.create_var(dtype=np.float64, stop_gradient=False)
        block.append_op(type="mul", inputs={"X": [vx], "Y": [vw]}, outputs={"Out": [out]})
        loss = block.create_var(dtype=np.float64, shape=[1], stop_gradient=False)
        block.append_op(type="mean", inputs={"X": out}, outputs={"Out": [loss]})
        loss.backward()
        # d mean(x @ w) / dx = ones(4, 2) @ w.T / 8
        np.testing.assert_allclose(vx.gradient(), np.ones((4, 2)) @ w.T / 8, rtol=1e-12)
        np.testing.assert_allclose(vw.gradient(), x.T @ np.ones((4, 2)) / 8, rtol=1e-12)
        np.testing.assert_allclose(loss.numpy(), [(x @ w).mean()], rtol=1e-12)


def test_to_variable_outside_guard_and_bad_slots_are_refused():
    with pytest.raises(AssertionError, match="dygraph mode"):
        fluid.dygraph.to_variable(np.zeros(2, dtype="float32"))
    with fluid.dygraph.guard():
        block = fluid.default_main_program().global_block()
        with pytest.raises(ValueError, match="type"):
            block.append_op(inputs={}, outputs={})
        with pytest.raises(TypeError, match="VarBase"):
            block.append_op(type="relu", inputs={"X": [np.zeros(2)]}, outputs={})


def test_registry_queries_answer_as_paddle_185():
    kernels = core._get_all_register_op_kernels()
    # Paddle 1.8.5's CPU build: sgd has no grad kernel, mul does (op_test.py decides from this whether a
    # test must check gradients)
    assert "sgd" in kernels and "sgd_grad" not in kernels and "mul_grad" in kernels
    assert any("data_type[float]" in k for k in kernels["sgd"])
    assert core.has_grad_op_maker("mul") and core.has_grad_op_maker("sgd")
    assert not core.has_infer_inplace("relu")      # no in-place reuse here (core_registry's docstring)
    prog = fluid.Program()
    with fluid.program_guard(prog):
        x = fluid.data("x", [2, 3])
        y = fluid.layers.relu(x)
    descs, grad_to_var = core.get_grad_op_desc(prog.global_block().ops[-1].desc, set(), [])
    assert [d.type() for d in descs] == ["relu_grad"]
    assert grad_to_var == {"x@GRAD": "x", y.name + "@GRAD": y.name}
    sgd = fluid.Program()
    with fluid.program_guard(sgd):
        blk = sgd.global_block()
        for n in ("p", "g", "lr"):
            blk.create_var(name=n, shape=[1], dtype="float32")
        op = blk.append_op(type="sgd", inputs={"Param": "p", "Grad": "g", "LearningRate": "lr"},
                           outputs={"ParamOut": "p"})
    assert core.get_grad_op_desc(op.desc, set(), []) == ([], {})


def test_infer_shape_of_an_optimizer_op_follows_its_slot_names():
    prog = fluid.Program()
    blk = prog.global_block()
    blk.create_var(name="p", shape=[4, 3], dtype="float64")
    blk.create_var(name="m", shape=[4, 3], dtype="float64")
    for n in ("g", "lr", "po", "mo"):
        blk.create_var(name=n, dtype="float32")
    op = blk.append_op(type="momentum", inputs={"Param": "p", "Grad": "g", "Velocity": "m", "LearningRate": "lr"},
                       outputs={"ParamOut": "po", "VelocityOut": "mo"})
    op.desc.infer_shape(blk.desc)
    assert tuple(blk.var("po").shape) == (4, 3) and tuple(blk.var("mo").shape) == (4, 3)
    assert blk.var("po").dtype == core.VarDesc.VarType.FP64
