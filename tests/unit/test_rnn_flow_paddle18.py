"""DynamicRNN, StaticRNN and IfElse against numbers recorded from Paddle 1.8.5
(tests/data/paddle18/make_rnn_flow.py, whose builders make the same programs here): outputs and gradients
w.r.t. the fed inputs and every parameter used inside the step blocks; plus program structure and bad input."""

import os

import numpy as np
import pytest

import paddle_compat as fluid
from paddle18_parity import check_recorded_case, load_recorded

L = fluid.layers
DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18")
MK, REF = load_recorded("rnn_flow")


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(MK.CASES))
def test_matches_paddle18(name):
    check_recorded_case(fluid, MK, REF, name)


def _forward_structure(text):
    """Block 0's ops before the loss, and the ops of the sub-blocks the forward ops own."""
    blocks = dict(part.split(":", 1) for part in text.split(";"))
    ops0 = blocks["0"].split(",")
    ops0 = ops0[:ops0.index("square")]
    n_sub = sum(t in ("while", "recurrent", "conditional_block") for t in ops0)
    return [ops0] + [blocks[str(i)].split(",") for i in range(1, n_sub + 1)]


@pytest.mark.parametrize("name", sorted(MK.CASES))
def test_program_structure_is_paddles(name):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        MK.CASES[name](fluid)
    ours = [[op.type for op in b.ops] for b in main.blocks]
    assert ours == _forward_structure(str(REF[name + "|ops"]))
    for op in main.global_block().ops:
        if op.type in ("while", "recurrent", "conditional_block"):
            assert main.block(op.attr("sub_block").idx).parent_idx == 0


def _drnn_program(second_lod_level=1):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = L.data("x", shape=[2], dtype="float32", lod_level=1)
        y = L.data("y", shape=[2], dtype="float32", lod_level=second_lod_level)
        drnn = L.DynamicRNN()
        with drnn.block():
            xt, yt = drnn.step_input(x), drnn.step_input(y)
            drnn.output(L.elementwise_add(xt, yt))
        out = drnn()
    return main, startup, out


def _lod(rows, lens):
    return fluid.create_lod_tensor(np.arange(rows * 2, dtype="float32").reshape(rows, 2), [lens], fluid.CPUPlace())


def test_dynamic_rnn_output_keeps_lod_and_order():
    main, startup, out = _drnn_program()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    x = _lod(6, [2, 3, 1])
    res, = exe.run(main, feed={"x": x, "y": x}, fetch_list=[out], return_numpy=False)
    np.testing.assert_allclose(np.array(res), 2 * np.array(x))
    assert res.recursive_sequence_lengths() == [[2, 3, 1]]


def test_dynamic_rnn_step_inputs_with_different_lods_are_named():
    main, startup, out = _drnn_program()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    with pytest.raises(Exception) as e:
        exe.run(main, feed={"x": _lod(6, [2, 3, 1]), "y": _lod(6, [3, 2, 1])}, fetch_list=[out])
    msg = str(e.value)
    assert "y" in msg and "[0, 2, 5, 6]" in msg and "[0, 3, 5, 6]" in msg and "same LoD" in msg


def test_dynamic_rnn_rejects_input_without_lod():
    with pytest.raises(TypeError, match="y.*LoD tensor"):
        _drnn_program(second_lod_level=0)


def test_dynamic_rnn_misuse():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = L.data("x", shape=[2], dtype="float32", lod_level=1)
        drnn = L.DynamicRNN()
        with pytest.raises(ValueError, match="inside rnn block"):
            drnn.step_input(x)
        with pytest.raises(ValueError, match="outside the rnn block"):
            drnn()
        with pytest.raises(ValueError, match="memory before update_memory"):
            with drnn.block():
                xt = drnn.step_input(x)
                drnn.update_memory(xt, xt)


def test_static_rnn_memory_never_updated_is_named():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = L.data("xs", shape=[3, 2, 2], dtype="float32", append_batch_size=False)
        h0 = L.data("h0", shape=[2, 2], dtype="float32", append_batch_size=False)
        rnn = L.StaticRNN()
        with pytest.raises(ValueError, match="h0.*never updated"):
            with rnn.step():
                xt = rnn.step_input(x)
                rnn.memory(init=h0)
                rnn.step_output(xt)


def test_ifelse_with_all_rows_in_one_branch():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = L.data("x", shape=[3, 2], dtype="float32", append_batch_size=False)
        c = L.data("c", shape=[3, 1], dtype="bool", append_batch_size=False)
        ie = L.IfElse(c)
        with ie.true_block():
            ie.output(L.scale(ie.input(x), 2.0))
        with ie.false_block():
            ie.output(L.scale(ie.input(x), -1.0))
        out, = ie()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    xv = np.arange(6, dtype="float32").reshape(3, 2)
    for mask, k in ((True, 2.0), (False, -1.0)):
        got, = exe.run(main, feed={"x": xv, "c": np.full([3, 1], mask)}, fetch_list=[out])
        np.testing.assert_allclose(got, k * xv)
    got, = exe.run(main, feed={"x": xv, "c": np.array([[True], [False], [True]])}, fetch_list=[out])
    np.testing.assert_allclose(got, xv * np.array([[2.0], [-1.0], [2.0]]))


def test_tensor_array_to_tensor_and_reorder():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        a = L.data("a", shape=[2, 3], dtype="float32", append_batch_size=False)
        b = L.data("b", shape=[2, 1], dtype="float32", append_batch_size=False)
        arr = L.array_write(a, L.fill_constant([1], "int64", 0))
        L.array_write(b, L.fill_constant([1], "int64", 1), array=arr)
        out, idx = L.tensor_array_to_tensor(arr, axis=1)
        x = L.data("x", shape=[1], dtype="float32", lod_level=1)
        table = L.lod_rank_table(x)
        r = L.reorder_lod_tensor_by_rank(x, table)
        m = L.max_sequence_len(table)
    exe = fluid.Executor(fluid.CPUPlace())
    av, bv = np.ones([2, 3], "float32"), np.zeros([2, 1], "float32")
    xv = fluid.create_lod_tensor(np.arange(6, dtype="float32").reshape(6, 1), [[1, 3, 2]], fluid.CPUPlace())
    o, i, rv, mv = exe.run(main, feed={"a": av, "b": bv, "x": xv}, fetch_list=[out, idx, r, m], return_numpy=False)
    np.testing.assert_allclose(np.array(o), np.concatenate([av, bv], 1))
    assert np.array(i).tolist() == [3, 1] and int(np.array(mv)[0]) == 3
    np.testing.assert_allclose(np.array(rv).ravel(), [1, 2, 3, 4, 5, 0])
    assert rv.recursive_sequence_lengths() == [[3, 2, 1]]


def test_cell_parameter_names_and_shapes_are_paddles():
    """As Paddle 1.8.5 names them (so its saved weights load by name)."""
    with fluid.program_guard(fluid.Program(), fluid.Program()), fluid.unique_name.guard():
        x = L.data("x", shape=[5, 3], dtype="float32")
        L.rnn(L.LSTMCell(4), x)
        L.rnn(L.GRUCell(4), x, is_reverse=True)
        got = [(p.name, tuple(p.shape)) for p in fluid.default_main_program().global_block().all_parameters()]
    assert got == [("LSTMCell/BasicLSTMUnit_0.w_0", (7, 16)), ("LSTMCell/BasicLSTMUnit_0.b_0", (16,)),
                   ("GRUCell/BasicGRUUnit_0.w_0", (7, 8)), ("GRUCell/BasicGRUUnit_0.w_1", (7, 4)),
                   ("GRUCell/BasicGRUUnit_0.b_0", (8,)), ("GRUCell/BasicGRUUnit_0.b_1", (4,))]


@pytest.mark.parity
@pytest.mark.parametrize("name", ["dynamic_rnn_basic", "static_rnn", "ifelse"])
def test_paddle_saved_inference_model_runs(name):
    """Inference models Paddle 1.8.5 saved (make_rnn_flow_models.py): its while/recurrent/conditional_block
    descs, sub-blocks and weights load here and give Paddle's outputs."""
    ref = np.load(os.path.join(DATA, "rnn_flow_models.npz"))
    exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
    with fluid.scope_guard(scope):
        prog, feeds, fetch = fluid.io.load_inference_model(os.path.join(DATA, "inference", "rnn_flow_" + name), exe,
                                                           params_filename="params")
        assert prog.num_blocks > 1
        got = exe.run(prog, feed={k: v for k, v in MK.feeds(fluid).items() if k in feeds}, fetch_list=fetch,
                      return_numpy=False)
    for i, g in enumerate(got):
        np.testing.assert_allclose(np.array(g), ref["%s|out/%d" % (name, i)], rtol=1e-5, atol=1e-6)


def test_paddle_import_paths_of_the_rnn_ops():
    from paddle_compat.fluid.layers.control_flow import (DynamicRNN, IfElse, StaticRNN, lod_rank_table,  # noqa
                                                         shrink_memory)
    assert DynamicRNN is L.DynamicRNN and lod_rank_table is L.lod_rank_table


def test_static_rnn_inputs_of_different_lengths_are_named():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        a = L.data("a", shape=[-1, 2, 3], dtype="float32", append_batch_size=False)
        b = L.data("b", shape=[-1, 2, 3], dtype="float32", append_batch_size=False)
        rnn = L.StaticRNN()
        with rnn.step():
            rnn.step_output(L.elementwise_add(rnn.step_input(a), rnn.step_input(b)))
        out = rnn()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    with pytest.raises(Exception, match="step input b has 2 steps but a has 3"):
        exe.run(main, feed={"a": np.zeros([3, 2, 3], "float32"), "b": np.zeros([2, 2, 3], "float32")},
                fetch_list=[out])


def test_ifelse_mask_of_the_wrong_length_is_named():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = L.data("x", shape=[-1, 2], dtype="float32", append_batch_size=False)
        c = L.data("c", shape=[-1, 1], dtype="bool", append_batch_size=False)
        ie = L.IfElse(c)
        with ie.true_block():
            ie.output(ie.input(x))
        with ie.false_block():
            ie.output(ie.input(x))
        out, = ie()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    with pytest.raises(Exception, match="Mask=c has 2 entries but X=x has 3 rows"):
        exe.run(main, feed={"x": np.zeros([3, 2], "float32"), "c": np.ones([2, 1], bool)}, fetch_list=[out])


def test_dynamic_rnn_static_input_with_too_few_sequences_is_named():
    """A LoD static input needs one sequence per step-input sequence (reordered by the rank table)."""
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = L.data("x", shape=[2], dtype="float32", lod_level=1)
        s = L.data("s", shape=[2], dtype="float32", lod_level=1)
        drnn = L.DynamicRNN()
        with drnn.block():
            drnn.step_input(x)
            drnn.output(L.sequence_pool(drnn.static_input(s), "sum"))
        out = drnn()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    with pytest.raises(Exception, match=r"X=s has LoD .*\(2 sequences\).* has 3"):
        exe.run(main, feed={"x": _lod(6, [2, 3, 1]), "s": _lod(3, [1, 2])}, fetch_list=[out])


