"""Block.append_op runs the op's infer_shape, as Paddle 1.8's Operator ran InferShape: an output variable
without a shape takes the inferred one, and a declared shape that contradicts it is refused (the verifier's
error names the op, the slot and both shapes)."""

import pytest

import paddle_compat as fluid
from paddle_compat.ir.verifier import ProgramError, verify


def test_unset_output_shape_is_inferred():
    x = fluid.data("x_is", [None, 3, 4], "float32")
    block = fluid.default_main_program().global_block()
    out = block.create_var(name="t_out", dtype="float32")
    xshape = block.create_var(name="t_xshape", dtype="float32")
    assert out.shape == ()
    block.append_op(type="transpose2", inputs={"X": [x]}, outputs={"Out": [out], "XShape": [xshape]},
                    attrs={"axis": [0, 2, 1]})
    assert out.shape == (-1, 4, 3)


def test_contradicting_declared_shape_is_refused():
    x = fluid.data("x_cs", [None, 3, 4], "float32")
    block = fluid.default_main_program().global_block()
    out = block.create_var(name="t_bad", shape=[-1, 3, 4], dtype="float32")
    with pytest.raises(ProgramError, match=r"op 'transpose2' \(block 0\): output Out='t_bad' is declared with "
                                           r"shape \[-1, 3, 4\], but its infer_shape gives \[-1, 4, 3\]"):
        block.append_op(type="transpose2", inputs={"X": [x]}, outputs={"Out": [out]}, attrs={"axis": [0, 2, 1]})


def test_unknown_dims_agree_with_anything():
    x = fluid.data("x_uk", [None, 3], "float32")
    block = fluid.default_main_program().global_block()
    out = block.create_var(name="t_uk", shape=[-1, -1], dtype="float32")
    block.append_op(type="scale", inputs={"X": [x]}, outputs={"Out": [out]}, attrs={"scale": 2.0})
    assert out.shape == (-1, -1)      # a declared shape that agrees is kept as given


def test_builders_leave_shapes_to_infer_shape():
    x = fluid.data("x_b", [None, 2, 3], "float32")
    L = fluid.layers
    assert L.transpose(x, [0, 2, 1]).shape == (-1, 3, 2)
    assert L.flatten(x, axis=2).shape == (-1, 3)
    assert L.unsqueeze(x, [1]).shape == (-1, 1, 2, 3)
    assert L.squeeze(L.unsqueeze(x, [1]), [1]).shape == (-1, 2, 3)
    v, i = L.topk(x, k=2)
    assert v.shape == i.shape == (-1, 2, 2)
    assert L.shape(x).shape == (3,)
    assert L.zeros_like(x).shape == L.ones_like(x).shape == L.assign(x).shape == (-1, 2, 3)


def test_the_verifier_refuses_a_shape_changed_after_append():
    # a variable edited after its op was appended (a pass, a hand-made program): verify() names the op, the
    # variable and both shapes
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        x = fluid.data("x_v", [None, 3, 4], "float32")
        y = fluid.layers.transpose(x, [0, 2, 1])
        verify(main)
        y.shape = (-1, 3, 4)
        with pytest.raises(ProgramError, match=r"block 0 op 0 'transpose2'.*: output Out='%s' is declared with "
                                               r"shape \[-1, 3, 4\], but the op's infer_shape gives \[-1, 4, 3\]"
                                               % y.name):
            verify(main)
        y.shape = (-1, -1, 3)       # unknown dims agree
        verify(main)


def test_layers_give_no_shapes_of_their_own():
    # the builders leave output shapes to append_op's infer_shape; what users see is what it gives
    L = fluid.layers
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        x = fluid.data("x_l", [None, 3, 4], "float32")
        h = L.fc(x, 5, num_flatten_dims=2, act="relu")
        assert h.shape == (-1, 3, 5)
        n = L.layer_norm(x, begin_norm_axis=2)
        assert n.shape == (-1, 3, 4)
        assert L.fill_constant([2, 3], "float32", 1.0).shape == (2, 3)
        assert L.fill_constant_batch_size_like(x, [1, 7], "float32", 0.0).shape == (-1, 7)
        assert L.argmax(x, axis=1).shape == (-1, 4)
        assert (x[:, 1:3] * 2.0).shape == (-1, 2, 4) and x[0, ::-1].shape == (3, 4)
        assert L.less_than(x, x).shape == (-1, 3, 4)
        assert L.reshape(x, [0, 12]).shape == (-1, 12)
        verify(main)


def test_a_variable_written_again_takes_the_new_shape():
    # Paddle 1.8.5 (its test_fetch_var, run twice over one program): assign of 0 values, then of 3, into one
    # persistable tensor; its InferShape overwrote the shape: (0,) then (3,), and the run fetched [1, 3, 5]
    import numpy as np
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.create_tensor(dtype="int32", persistable=True, name="x_again")
        fluid.layers.assign(np.array([], dtype="int32"), output=x)
        assert x.shape == (0,)
        fluid.layers.assign(np.array([1, 3, 5], dtype="int32"), output=x)
        assert x.shape == (3,)
        t = fluid.layers.create_tensor(dtype="float32", name="t_again")      # not persistable: written twice
        fluid.layers.assign(np.zeros([2], "float32"), output=t)
        fluid.layers.assign(np.zeros([4], "float32"), output=t)
        assert t.shape == (4,)
    verify(main)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        exe.run(main)
        assert np.array_equal(np.array(scope.find_var("x_again").get_tensor()), [1, 3, 5])
