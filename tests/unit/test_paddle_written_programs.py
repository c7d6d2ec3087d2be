"""Training programs Paddle 1.8.5 wrote (main_program.desc.serialize_to_string() after minimize: forward, its
explicit grad ops, optimizer ops; *_grad_grad ops where a gradient penalty differentiates a backward) run here
as a user loads them: parse the desc, load the persistables 1.8.5
saved after its startup program, feed the same batches. Losses, the fetched @GRAD variables and every
persistable after 5 steps match 1.8.5's (tests/data/paddle18/make_written_programs.py records them)."""

import json
import os

import numpy as np
import pytest

import paddle_compat as fluid
from paddle_compat.backends.lowering.autograd_region import find_regions
from paddle_compat.ir import OP_ROLE_KEY, OpRole

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "paddle18",
                    "written_programs")
MODELS = ["fit_a_line", "digits_mlp", "conv_net", "word2vec", "ctr_sparse", "misc_ops", "grad_forms",
          "control_flow", "while_rnn", "grad_penalty", "grad_penalty_conv"]
# programs with a gradient penalty: 1.8.5 wrote *_grad_grad ops into them
DOUBLE_GRAD = ["grad_penalty", "grad_penalty_conv"]
# 1.8.5's float32 kernels and ours sum in different orders: the gradients agree to a few ulps
RTOL, ATOL = 1e-5, 1e-6


def _load(model):
    d = os.path.join(DATA, model)
    with open(os.path.join(d, "meta.json")) as f:
        meta = json.load(f)
    with open(os.path.join(d, "main.pdmodel"), "rb") as f:
        prog = fluid.Program.parse_from_string(f.read())
    return d, meta, prog


def _feed(meta, data, step):
    feed = {}
    for k in meta["feeds"]:
        a = data["%s__%d" % (k, step)]
        if k in meta["lod_feeds"]:
            t = fluid.LoDTensor()
            t.set(a, fluid.CPUPlace())
            t.set_lod([data["%s__%d__lod" % (k, step)].tolist()])
            a = t
        feed[k] = a
    return feed


@pytest.mark.parity
@pytest.mark.parametrize("model", MODELS)
def test_runs_with_paddles_numbers(model):
    d, meta, prog = _load(model)
    data = np.load(os.path.join(d, "data.npz"))
    want = np.load(os.path.join(d, "expected.npz"))
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        fluid.io.load_persistables(exe, os.path.join(d, "params"), prog)
        for step in range(meta["steps"]):
            out = exe.run(prog, feed=_feed(meta, data, step), fetch_list=[meta["loss"]] + meta["grads"])
            np.testing.assert_allclose(np.asarray(out[0]), want["loss__%d" % step], rtol=RTOL, atol=ATOL,
                                       err_msg="loss, step %d" % step)
            for g, a in zip(meta["grads"], out[1:]):
                np.testing.assert_allclose(np.asarray(a), want["grad__%s__%d" % (g, step)], rtol=RTOL, atol=ATOL,
                                           err_msg="%s, step %d" % (g, step))
    finals = [k for k in want.files if k.startswith("final__")]
    assert len(finals) >= 2
    for k in finals:
        got = np.array(scope.find_var(k[len("final__"):]).get_tensor())
        np.testing.assert_allclose(got, want[k], rtol=RTOL, atol=ATOL, err_msg=k)


@pytest.mark.parity
@pytest.mark.parametrize("model", ["digits_mlp", "conv_net", "ctr_sparse"])
def test_runs_data_parallel_with_paddles_numbers(model):
    """The parsed program on 2 CPU places (CompiledProgram.with_data_parallel): each place's loss (batch_norm's
    statistics per place) and the persistables after 5 steps are 1.8.5's ParallelExecutor's. A parsed program
    has no Parameter objects: the gradients averaged across places are those its ops name in op_role_var.
    (1.8.5 itself races on ctr_sparse's row-sparse gradient there: the outcome most of its runs reach is the
    reference, and every run of ours reaches it.)"""
    d, meta, prog = _load(model)
    data = np.load(os.path.join(d, "data.npz"))
    want = np.load(os.path.join(d, "expected_dp2.npz"))
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        fluid.io.load_persistables(exe, os.path.join(d, "params"), prog)
        compiled = fluid.CompiledProgram(prog).with_data_parallel(loss_name=meta["loss"],
                                                                  places=[fluid.CPUPlace()] * 2)
        for step in range(meta["steps"]):
            out = exe.run(compiled, feed=_feed(meta, data, step), fetch_list=[meta["loss"]])
            np.testing.assert_allclose(np.asarray(out[0]).ravel(), want["loss__%d" % step].ravel(), rtol=RTOL,
                                       atol=ATOL, err_msg="loss, step %d" % step)
    finals = [k for k in want.files if k.startswith("final__")]
    assert len(finals) >= 2
    for k in finals:
        got = np.array(scope.find_var(k[len("final__"):]).get_tensor())
        np.testing.assert_allclose(got, want[k], rtol=RTOL, atol=ATOL, err_msg=k)


def test_the_programs_hold_paddles_grad_ops():
    """The recorded programs cover the grad op types Paddle's book and CTR models write."""
    types = set()
    for model in MODELS:
        types.update(_load(model)[1]["op_types"])
    for t in ["mul_grad", "elementwise_add_grad", "elementwise_sub_grad", "elementwise_mul_grad", "relu_grad",
              "tanh_grad", "sigmoid_grad", "softmax_grad", "cross_entropy_grad2", "softmax_with_cross_entropy_grad",
              "mean_grad", "reduce_mean_grad", "reduce_sum_grad", "square_grad", "conv2d_grad", "pool2d_grad",
              "batch_norm_grad", "dropout_grad", "lookup_table_grad", "sum", "fill_constant", "reshape2_grad",
              "transpose2_grad", "concat_grad", "matmul_grad", "sequence_pool_grad", "layer_norm_grad",
              "gather_grad", "stack_grad", "unstack_grad", "recurrent_grad", "conditional_block_grad", "while_grad",
              "sgd", "momentum", "adam"]:
        assert t in types, t


@pytest.mark.parametrize("model", [m for m in MODELS if m not in DOUBLE_GRAD])
def test_the_whole_backward_is_one_autograd_region(model):
    """Every backward op Paddle wrote (its *_grad ops, the sums of gradient parts and the ordinary-typed ops
    of its grad makers: split's concat, scale's scale, cast, assign) is computed by one autograd call; only
    the loss gradient's seed (fill_constant, role Backward|Loss) runs by itself."""
    prog = _load(model)[2]
    block = prog.global_block()
    regions = find_regions(block)
    assert len(regions) == 1
    backward = [i for i, op in enumerate(block.ops) if op.attrs.get(OP_ROLE_KEY, 0) == OpRole.Backward]
    assert backward and regions[0].op_idx == backward


@pytest.mark.parametrize("model", DOUBLE_GRAD)
def test_double_grad_programs_are_two_regions(model):
    """A gradient penalty (fluid.gradients, then minimize): 1.8.5 writes the first backward, then the backward
    of everything including it, with its *_grad_grad ops. The first region keeps its graph; the second, one
    autograd call, covers every *_grad_grad op (each of 1.8.5's CPU double-grad types between the two models)."""
    prog = _load(model)[2]
    block = prog.global_block()
    first, second = find_regions(block)
    double = [i for i, op in enumerate(block.ops) if op.type.endswith("_grad_grad")]
    assert first.create_graph and not second.create_graph
    assert double and set(double) <= set(second.op_idx) and not set(double) & set(first.op_idx)


def test_double_grad_programs_cover_paddles_double_grad_ops():
    types = set()
    for model in DOUBLE_GRAD:
        types.update(t for t in _load(model)[1]["op_types"] if t.endswith("_grad_grad"))
    # 1.8.5's CPU *_grad_grad kernels but conv3d's (conv2d's path)
    assert types == {"conv2d_grad_grad", "elementwise_add_grad_grad", "elementwise_div_grad_grad",
                     "elementwise_mul_grad_grad", "elementwise_sub_grad_grad", "elu_grad_grad",
                     "instance_norm_grad_grad", "leaky_relu_grad_grad", "mul_grad_grad", "relu_grad_grad",
                     "reshape2_grad_grad", "sqrt_grad_grad", "square_grad_grad"}


def _run_once(prog, model):
    d = os.path.join(DATA, model)
    with open(os.path.join(d, "meta.json")) as f:
        meta = json.load(f)
    exe = fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(fluid.Scope()):
        fluid.io.load_persistables(exe, os.path.join(d, "params"), prog)
        return exe.run(prog, feed=_feed(meta, np.load(os.path.join(d, "data.npz")), 0), fetch_list=[meta["loss"]])


def test_unknown_grad_op_is_named_with_its_place():
    prog = _load("fit_a_line")[2]
    ops = prog.global_block().ops
    i = [op.type for op in ops].index("square_grad")
    ops[i].desc.set_type("mystery_grad")
    with pytest.raises(NotImplementedError, match=r"block 0 op %d \(mystery_grad\).*'mystery'" % i):
        _run_once(prog, "fit_a_line")


def test_grad_op_of_an_op_without_gradient_is_refused():
    prog = _load("fit_a_line")[2]
    ops = prog.global_block().ops
    i = [op.type for op in ops].index("mean_grad")
    ops[i].desc.set_type("accuracy_grad")
    with pytest.raises(NotImplementedError, match=r"block 0 op %d \(accuracy_grad\).*'accuracy'.*no gradient" % i):
        _run_once(prog, "fit_a_line")


def test_unknown_forward_op_is_named_with_its_place():
    prog = _load("fit_a_line")[2]
    prog.global_block().ops[0].desc.set_type("mystery")
    with pytest.raises(NotImplementedError, match=r"block 0 op 0 \(mystery\).*'mystery' has no lowering"):
        _run_once(prog, "fit_a_line")


@pytest.mark.parity
@pytest.mark.parametrize("overwrite", [True, False])
def test_gather_gradient_mode_with_a_repeated_index(overwrite):
    with open(os.path.join(DATA, "gather_overwrite.json")) as f:
        rec = json.load(f)
    x = fluid.data("x", [3, 2], "float32")
    x.stop_gradient = False
    i = fluid.data("i", [5], "int64")
    w = fluid.data("w", [5, 2], "float32")
    y = fluid.layers.gather(x, i, overwrite=overwrite)
    g = fluid.gradients(fluid.layers.reduce_sum(y * w), x)[0]
    out = fluid.Executor(fluid.CPUPlace()).run(
        feed={"x": np.array(rec["x"], "float32"), "i": np.array(rec["index"], "int64"),
              "w": np.array(rec["w"], "float32")}, fetch_list=[g])
    np.testing.assert_array_equal(np.asarray(out[0]), np.array(rec["x_grad_overwrite_%s" % overwrite], "float32"))

