"""The IR's API: Program, Block, Variable, Parameter, Operator, unique names, guards, the verifier."""

import numpy as np
import pytest

import paddle_compat as fluid
from helpers import param, run
from paddle_compat.fluid import framework
from paddle_compat.ir.verifier import ProgramError, verify

L = fluid.layers


def test_unique_names_follow_paddle():
    x = L.data(name="x", shape=[3])
    L.fc(L.fc(x, 2), 2)
    names = [v.name for v in fluid.default_main_program().list_vars()]
    assert names[:4] == ["x", "fc_0.w_0", "fc_0.tmp_0", "fc_0.b_0"]
    assert "fc_1.w_0" in names and "fc_1.tmp_1" in names
    with fluid.unique_name.guard():
        assert fluid.unique_name.generate("fc") == "fc_0"
    assert fluid.unique_name.generate("fc") == "fc_2"


def test_program_guard_and_blocks():
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        x = L.data(name="x", shape=[2])
        L.fc(x, 1)
        assert fluid.default_main_program() is main
    assert fluid.default_main_program() is not main
    assert [v.name for v in start.global_block().all_parameters()] == ["fc_0.w_0", "fc_0.b_0"]
    gb = main.global_block()
    assert main.block(0) is gb and main.current_block() is gb and main.num_blocks == 1
    assert gb.has_var("x") and gb.var("x") is x
    with pytest.raises(ValueError, match="var nope not in this block"):
        gb.var("nope")
    sub = main._create_block()
    assert sub.parent_idx == 0 and sub._var_recursive("x") is x
    main._rollback()
    assert main.current_block() is gb
    with pytest.raises(TypeError, match="Program"):
        with fluid.program_guard("not a program"):
            pass


def test_block_op_editing_and_operator_api():
    x = L.data(name="x", shape=[2])
    y = L.scale(x, 2.0)
    gb = fluid.default_main_program().global_block()
    op = gb.ops[0]
    assert op.type == "scale" and op.input("X") == ["x"] and op.output("Out") == [y.name]
    assert op.input_arg_names == ["x"] and op.output_arg_names == [y.name]
    assert op.attr("scale") == 2.0 and op.has_attr("bias") and not op.has_attr("nope")
    assert op.all_attrs()["scale"] == 2.0 and op.input_names == ["X"]
    v0 = fluid.default_main_program()._version
    gb._insert_op(0, type="scale", inputs={"X": [x]}, outputs={"Out": [x]}, attrs={"scale": 3.0})
    assert fluid.default_main_program()._version > v0
    assert run(y, {"x": np.ones((1, 2), np.float32)}, startup=False)[0].tolist() == [[6.0, 6.0]]
    gb._remove_op(0)
    assert [o.type for o in gb.ops] == ["scale"]
    op._set_attr("scale", 5.0)
    assert run(y, {"x": np.ones((1, 2), np.float32)}, startup=False)[0].tolist() == [[5.0, 5.0]]


def test_variable_and_parameter_fields():
    x = L.data(name="x", shape=[3])
    h = L.fc(x, 2, param_attr=fluid.ParamAttr(name="w", learning_rate=0.5, trainable=False,
                                              regularizer=fluid.regularizer.L2Decay(0.1)))
    w = fluid.default_main_program().global_block().var("w")
    assert isinstance(w, framework.Parameter) and w.persistable and not w.trainable
    assert w.optimize_attr == {"learning_rate": 0.5} and w.shape == (3, 2)
    assert isinstance(w.regularizer, fluid.regularizer.L2Decay)
    assert h.dtype == fluid.core.VarDesc.VarType.FP32 and h.dtype == "float32" and h.lod_level == 0
    assert x.stop_gradient and not h.stop_gradient and not h.persistable


def test_readable_program_string():
    x = L.data(name="x", shape=[3])
    L.fc(x, 2, act="relu")
    s = str(fluid.default_main_program())
    assert "{ // block 0" in s and "var x : LOD_TENSOR.shape(-1, 3).dtype(float32)" in s
    assert "mul(inputs={X=['x'], Y=['fc_0.w_0']}" in s and "x_num_col_dims = 1" in s and "relu(" in s


def test_random_seed_makes_init_reproducible():
    def init(seed):
        main, start = fluid.Program(), fluid.Program()
        start.random_seed = seed
        with fluid.program_guard(main, start), fluid.unique_name.guard():
            L.fc(L.data(name="x", shape=[4]), 3)
        scope = fluid.Scope()
        fluid.Executor().run(start, scope=scope)
        return np.array(scope.find_var("fc_0.w_0").get_tensor())
    a, b, c = init(7), init(7), init(8)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    with pytest.raises(ValueError, match="random_seed"):
        fluid.Program().random_seed = "x"


@pytest.mark.parametrize("init,check", [
    (fluid.initializer.Constant(0.5), lambda w: np.all(w == 0.5)),
    (fluid.initializer.Uniform(-0.1, 0.1, seed=3), lambda w: w.min() >= -0.1 and w.max() <= 0.1 and w.std() > 0.03),
    (fluid.initializer.Normal(1.0, 0.01, seed=3), lambda w: abs(w.mean() - 1.0) < 0.01 and w.std() < 0.02),
    (fluid.initializer.TruncatedNormal(0.0, 1.0, seed=3), lambda w: np.abs(w).max() <= 2.0 + 1e-6),
    (fluid.initializer.Xavier(uniform=True, seed=3), lambda w: np.abs(w).max() <= np.sqrt(6 / (40 + 30))),
    (fluid.initializer.MSRA(uniform=True, seed=3), lambda w: np.abs(w).max() <= np.sqrt(6 / 40)),
    (fluid.initializer.NumpyArrayInitializer(np.arange(1200, dtype=np.float32).reshape(40, 30)),
     lambda w: w[1, 2] == 32.0),
])
def test_initializers_emit_paddle_ops(init, check):
    L.fc(L.data(name="x", shape=[40]), 30, param_attr=fluid.ParamAttr(name="w", initializer=init))
    op, = [op for op in fluid.default_startup_program().global_block().ops if op.output("Out") == ["w"]]
    assert op.type in ("fill_constant", "uniform_random", "gaussian_random", "truncated_gaussian_random",
                       "assign_value")
    fluid.Executor().run(fluid.default_startup_program())
    assert check(param("w"))


def test_numpy_initializer_shape_mismatch():
    with pytest.raises(ValueError, match="does not match"):
        L.fc(L.data(name="x", shape=[4]), 3,
             param_attr=fluid.ParamAttr(initializer=fluid.initializer.NumpyArrayInitializer(np.zeros((3, 3)))))


def test_create_parameter_and_global_var():
    p = L.create_parameter(shape=[2, 2], dtype="float32", name="pp",
                           default_initializer=fluid.initializer.Constant(2.0))
    g = L.create_global_var(shape=[1], value=3.0, dtype="float32", persistable=True, name="gv")
    fluid.Executor().run(fluid.default_startup_program())
    assert param("pp").tolist() == [[2.0, 2.0], [2.0, 2.0]] and param("gv").tolist() == [3.0]
    assert p.trainable and g.persistable


def test_name_scope_recorded():
    x = L.data(name="x", shape=[2])
    with fluid.name_scope("encoder"):
        L.scale(x, 1.0)
    op = fluid.default_main_program().global_block().ops[-1]
    assert op.attr("op_namescope").startswith("/encoder")


def test_verifier_catches_undefined_input_and_unknown_op():
    prog = fluid.Program()
    gb = prog.global_block()
    gb.create_var(name="a", shape=[1])
    gb.create_var(name="b", shape=[1])
    gb.append_op(type="scale", inputs={"X": ["a"]}, outputs={"Out": ["b"]})
    with pytest.raises(ProgramError, match="input X='a' is used before any op defines it"):
        verify(prog)
    prog2 = fluid.Program()
    gb2 = prog2.global_block()
    gb2.create_var(name="a", shape=[1], persistable=True)
    with pytest.raises(ValueError, match='Operator "no_such_op" has not been registered.'):   # as Paddle
        gb2.append_op(type="no_such_op", inputs={"X": ["a"]}, outputs={})
    op = gb2.desc.append_op()     # the desc API sets any type, unchecked: the verifier catches it
    op.set_type("no_such_op")
    op.set_input("X", ["a"])
    with pytest.raises(ProgramError, match="unknown op type"):
        verify(prog2)
    gb2.ops.clear()
    gb2.append_op(type="scale", inputs={"X": ["a"]}, outputs={"Out": ["missing"]})
    with pytest.raises(ProgramError, match="'missing', which no block declares"):
        verify(prog2)


def test_startup_lists_constant_initializers_newest_first():
    """Paddle prepends initializer ops: after minimize, the startup's first op is the learning rate's
    fill_constant (created last), as Paddle's test_optimizer reads it.  Random initializers keep creation
    order, so unseeded draws from the global generator come out as before."""
    x = L.data(name="x", shape=[4])
    loss = L.mean(L.fc(L.fc(x, 3), 2))
    fluid.optimizer.Adam(learning_rate=0.01).minimize(loss)
    ops = fluid.default_startup_program().global_block().ops
    assert ops[0].type == "fill_constant" and ops[0].attr("value") == pytest.approx(0.01)
    assert ops[0].output("Out")[0].startswith("learning_rate")
    randoms = [op.output("Out")[0] for op in ops if op.type == "uniform_random"]
    assert randoms == ["fc_0.w_0", "fc_1.w_0"]
    # every fill_constant precedes the random ops, newest first (Adam's beta pow accumulators before fc_1.b_0)
    kinds = [op.type for op in ops]
    assert kinds == ["fill_constant"] * (len(kinds) - 2) + ["uniform_random"] * 2
    outs = [op.output("Out")[0] for op in ops]
    assert outs.index("fc_1.b_0") < outs.index("fc_0.b_0")
