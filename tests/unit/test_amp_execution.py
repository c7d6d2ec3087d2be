"""Mixed precision running on the CPU (torch has float16 and bfloat16 CPU kernels for the white ops and the
gray ops after them): the rewritten MLP and conv net train close to float32, the white ops' outputs really
are float16/bfloat16 tensors, the parameters (master weights) stay float32, and the custom lists and black
variable names steer the rewrite. The same programs on CUDA: tests/gpu/test_amp_cuda.py."""

import os
import sys

import numpy as np
import pytest

import paddle_compat as fluid
from paddle_compat.fluid.contrib import mixed_precision as mp
from paddle_compat.ir.dtypes import VarType

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18")
sys.path.insert(0, DATA)
import make_amp as M  # noqa: E402

RNG = np.random.RandomState(3)
FEEDS = {
    "mlp": [{"img": RNG.uniform(-1, 1, (16, 16)).astype("float32"),
             "label": RNG.randint(0, 10, (16, 1)).astype("int64")} for _ in range(5)],
    "conv": [{"img": RNG.rand(8, 3, 8, 8).astype("float32"),
              "label": RNG.randint(0, 10, (8, 1)).astype("int64")} for _ in range(5)],
}
WHITE_OUT = {"mlp": "fc_0.tmp_0", "conv": "conv2d_0.tmp_0"}


_PRODUCTS = ("mm", "addmm", "bmm", "convolution", "convolution_backward")


def product_dtypes(fn):
    """Runs fn() and returns {(aten op, input dtypes): count} of the matrix products and convolutions torch
    dispatched meanwhile (what kernels actually ran, on any device)."""
    import collections

    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    seen = collections.Counter()

    class Log(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            name = func.overloadpacket.__name__
            if name in _PRODUCTS:
                seen[(name, tuple(str(a.dtype)[6:] for a in args if isinstance(a, torch.Tensor)))] += 1
            return func(*args, **(kwargs or {}))

    with Log():
        fn()
    return seen


def train(net, dtype=None, place=None, lists=None, **kw):
    """Losses of 5 Momentum steps (dropout off), the white op's output of the last step (a torch tensor),
    the parameters after, and the program."""
    main, startup = fluid.Program(), fluid.Program()
    main.random_seed = startup.random_seed = 5
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        loss = (M.build_mlp if net == "mlp" else M.build_conv)(fluid)
        opt = fluid.optimizer.Momentum(0.1, 0.9)
        if dtype is not None:
            opt = mp.decorate(opt, amp_lists=lists, init_loss_scaling=kw.pop("init_loss_scaling", 128.0),
                              dtype=dtype, **kw)
        opt.minimize(loss)
    for op in main.global_block().ops:
        if op.type == "dropout":
            op._set_attr("is_test", True)
    exe, scope = fluid.Executor(place or fluid.CPUPlace()), fluid.Scope()
    losses = []
    with fluid.scope_guard(scope):
        exe.run(startup)
        for f in FEEDS[net]:
            loss_v, white = exe.run(main, feed=f, fetch_list=[loss, WHITE_OUT[net]], return_numpy=False)
            losses.append(float(np.array(loss_v).ravel()[0]))
        params = {p.name: scope.find_var(p.name).get_tensor()._holder.value
                  for p in main.global_block().all_parameters()}
    return losses, white._holder.value, params, main


@pytest.mark.parametrize("net", ["mlp", "conv"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_low_precision_trains_close_to_float32(net, dtype):
    import torch
    ref, white32, _, _ = train(net)
    got, white, params, main = train(net, dtype)
    assert white32.dtype == torch.float32
    assert white.dtype == (torch.float16 if dtype == "float16" else torch.bfloat16)
    tol = 1e-3 if dtype == "float16" else 1e-2
    np.testing.assert_allclose(got, ref, rtol=tol)
    assert got != ref                       # the low-precision kernels really ran
    for name, t in params.items():          # float32 master weights
        assert t.dtype == torch.float32, name
        assert main.global_block().var(name).dtype == VarType.FP32


@pytest.mark.parametrize("dtype", [None, "float16", "bfloat16"])
def test_white_ops_run_low_precision_kernels(dtype):
    for net, ops in (("mlp", {"mm"}), ("conv", {"mm", "convolution", "convolution_backward"})):
        seen = product_dtypes(lambda: train(net, dtype))
        assert ops <= set(op for op, _ in seen), seen      # (float32 fc: addmm as well)
        want = dtype or "float32"
        assert all(dts == (want,) * len(dts) for _, dts in seen), seen


def test_custom_lists_and_black_varnames_steer_the_rewrite():
    def low_ops(main):
        blk = main.global_block()
        return sorted(set(op.type for op in blk.ops if op.attrs.get("op_role", 0) == 0 and any(
            blk.var(n).dtype == VarType.FP16 for n in op.output_arg_names if blk.has_var(n))))

    _, _, _, main = train("conv", "float16")
    # the gray ops after conv2d follow it (batch_norm's Y only), up to the black softmax
    assert low_ops(main) == ["batch_norm", "cast", "conv2d", "dropout", "elementwise_add", "mul", "pool2d", "relu"]
    # conv2d black: batch_norm and relu (gray) follow it into float32; pool2d, made white, starts float16 again
    lists = mp.AutoMixedPrecisionLists(custom_black_list={"conv2d"}, custom_white_list={"pool2d"})
    _, _, _, main = train("conv", "float16", lists=lists)
    assert low_ops(main) == ["cast", "dropout", "elementwise_add", "mul", "pool2d"]
    # ops touching a black variable name run in float32 whatever their type
    lists = mp.AutoMixedPrecisionLists(custom_black_varnames={"fc_0.tmp_0"})
    losses, white, _, main = train("mlp", "float16", lists=lists)
    assert str(white.dtype) == "torch.float32"
    assert "mul" in low_ops(main) and np.isfinite(losses).all()


def test_lists_follow_paddle18():
    lists = mp.AutoMixedPrecisionLists(custom_white_list={"tanh", "exp"}, custom_black_list={"mul"})
    assert "tanh" in lists.white_list and "tanh" not in lists.gray_list
    assert "exp" in lists.white_list and "exp" not in lists.black_list
    assert "mul" in lists.black_list and "mul" not in lists.white_list
    assert {"conv2d", "matmul"} <= lists.white_list and "relu" in lists.gray_list
    with pytest.raises(ValueError, match="overlap"):
        mp.AutoMixedPrecisionLists(custom_white_list={"relu"}, custom_black_list={"relu"})


def test_scaled_loss_and_scaling_are_fetchable():
    main, startup = fluid.Program(), fluid.Program()
    main.random_seed = startup.random_seed = 5
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        loss = M.build_mlp(fluid)
        opt = mp.decorate(fluid.optimizer.SGD(0.1), init_loss_scaling=64.0)
        opt.minimize(loss)
    exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
    with fluid.scope_guard(scope):
        exe.run(startup)
        l, s, k = exe.run(main, feed=FEEDS["mlp"][0], fetch_list=[loss, opt.get_scaled_loss(),
                                                                   opt.get_loss_scaling()])
    assert float(k[0]) == 64.0
    np.testing.assert_allclose(s, l * 64.0, rtol=1e-6)


def test_flag_picks_bfloat16(monkeypatch):
    monkeypatch.setenv("FLAGS_amp_dtype", "bfloat16")
    main2 = fluid.Program()
    with fluid.program_guard(main2, fluid.Program()), fluid.unique_name.guard():
        loss = M.build_mlp(fluid)
        mp.decorate(fluid.optimizer.SGD(0.1)).minimize(loss)
    assert main2.global_block().var("fc_0.tmp_0").dtype == VarType.BF16
    monkeypatch.setenv("FLAGS_amp_dtype", "int8")
    with pytest.raises(ValueError, match="bfloat16"):
        mp.decorate(fluid.optimizer.SGD(0.1))


@pytest.mark.parametrize("net", ["mlp", "conv"])
def test_amp_step_is_capturable(net, monkeypatch):
    # the fused update_loss_scaling keeps the step free of 1.8.5's Switch blocks (conditional_block, decided
    # on the host), so a whole-step CUDA graph can hold it; dropout aside (the conv net's has no fixed seed)
    from paddle_compat.backends.lowering.plan import plan_block
    from test_lowering_differential import as_feeds, startup_scope
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        loss = (M.build_mlp if net == "mlp" else M.build_conv)(fluid)
        mp.decorate(fluid.optimizer.Momentum(0.1, 0.9), init_loss_scaling=128.0).minimize(loss)
    for op in main.global_block().ops:
        if op.type == "dropout":
            op._set_attr("is_test", True)
    names, values, with_lod = as_feeds(main.global_block(), FEEDS[net][0])
    scope = startup_scope(startup)
    verdict = plan_block(main, 0, scope, names, [loss.name], with_lod).capture
    assert verdict.safe, verdict.reason
    # and run op by op, no op of the step reads a tensor back on the host (test_capture_check's probe)
    import torch
    from paddle_compat.backends.lowering import interpreter
    from test_capture_check import _SYNCS
    interp = interpreter.interpret_block(main, 0, scope, "cpu", names, [loss.name], feed_lod=with_lod)
    seen, current, run_op = [], [None], interpreter._Run.op

    def op(self, i, op, spec, kernel):
        current[0] = op.type
        try:
            return run_op(self, i, op, spec, kernel)
        finally:
            current[0] = None

    def probe(meth, orig):
        def wrapped(*a, **k):
            seen.append((current[0] or "autograd", meth))
            return orig(*a, **k)
        return wrapped
    monkeypatch.setattr(interpreter._Run, "op", op)
    for meth in _SYNCS:
        monkeypatch.setattr(torch.Tensor, meth, probe(meth, getattr(torch.Tensor, meth)))
    try:
        for _ in range(2):
            out = interp(values)
    finally:
        monkeypatch.undo()
    assert np.isfinite(out[0][0].detach().float().numpy()).all()
    # (autograd_region._seed reads a one-element CPU seed to pass None for ones: a CPU-only path)
    assert seen == [], seen


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_avg_pool3d_without_a_cpu_kernel_runs_in_float32_rounded(dtype):
    # pool3d is gray: after a white conv3d (made white here) it gets float16 input, for which torch's CPU has no
    # avg_pool3d; it computes in float32 and rounds back
    import torch
    main, startup = fluid.Program(), fluid.Program()
    main.random_seed = startup.random_seed = 5
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        x = fluid.layers.data("x", shape=[2, 4, 4, 4], dtype="float32")
        c = fluid.layers.conv3d(x, 3, 3, padding=1, bias_attr=False)
        p = fluid.layers.pool3d(c, 2, pool_type="avg", pool_stride=2)
        loss = fluid.layers.mean(p)
        mp.decorate(fluid.optimizer.SGD(0.1), amp_lists=mp.AutoMixedPrecisionLists(custom_white_list={"conv3d"}),
                    init_loss_scaling=8.0, dtype=dtype).minimize(loss)
    assert main.global_block().var(p.name).dtype == (VarType.FP16 if dtype == "float16" else VarType.BF16)
    exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
    feed = {"x": RNG.rand(2, 2, 4, 4, 4).astype("float32")}
    with fluid.scope_guard(scope):
        exe.run(startup)
        got, c_val = [t._holder.value for t in exe.run(main, feed=feed, fetch_list=[p, c], return_numpy=False)]
    assert got.dtype == getattr(torch, dtype) and c_val.dtype == getattr(torch, dtype)
    want = torch.nn.functional.avg_pool3d(c_val.float(), 2, 2).to(c_val.dtype)
    assert torch.equal(got, want)
