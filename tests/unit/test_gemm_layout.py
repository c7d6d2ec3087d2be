"""A narrow weight (2..11 outputs) enters CPU matrix products in torch.nn.Linear's layout (ops/gemm_layout.py):
the forward multiplies by a column-major [in, out], the backward takes the weight gradient as dOut^T @ x (torch's
call, an [out, in] product) and hands it back row-major [in, out]. The numbers are torch's within float rounding."""

import numpy as np
import pytest
import torch
from torch.profiler import ProfilerActivity, profile

import paddle_compat as fluid
from paddle_compat.ops import gemm_layout

RS = np.random.RandomState(11)
BATCH, IN, OUT = 64, 300, 10         # batch x in = 19200: past the threshold
X = RS.uniform(-1, 1, (BATCH, IN)).astype(np.float32)
W = RS.uniform(-0.1, 0.1, (IN, OUT)).astype(np.float32)
B = RS.uniform(-0.1, 0.1, (OUT,)).astype(np.float32)
LABEL = RS.randint(0, OUT, (BATCH, 1)).astype(np.int64)


def _mm_shapes(fn):
    """The input shapes of every aten::mm / aten::addmm fn() runs, as (name, shapes) tuples."""
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        fn()
    return [(e.name, [list(s) for s in e.input_shapes if s]) for e in prof.events()
            if e.name in ("aten::mm", "aten::addmm")]


def test_narrow_weight_is_column_major_and_its_gradient_row_major():
    x = torch.from_numpy(X)
    w = torch.from_numpy(W).requires_grad_()
    wc = gemm_layout.column_major(x, w)
    assert wc.shape == (IN, OUT) and wc.stride() == (1, IN)          # torch.nn.Linear's weight.t()
    out = torch.addmm(torch.from_numpy(B), x, wc)
    g = torch.from_numpy(RS.uniform(-1, 1, (BATCH, OUT)).astype(np.float32))
    calls = _mm_shapes(lambda: torch.autograd.grad(out, [w], g))
    # the weight gradient as torch's Linear takes it: dOut^T [out, batch] @ x [batch, in]
    assert ("aten::mm", [[OUT, BATCH], [BATCH, IN]]) in calls, calls
    assert ("aten::mm", [[IN, BATCH], [BATCH, OUT]]) not in calls, calls
    gw, = torch.autograd.grad(torch.addmm(torch.from_numpy(B), x, gemm_layout.column_major(x, w)), [w], g)
    assert gw.shape == (IN, OUT) and gw.is_contiguous()
    np.testing.assert_allclose(gw.numpy(), X.T.astype(np.float64) @ g.numpy().astype(np.float64),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("batch,k,n,dtype,why", [
    (64, 300, 12, torch.float32, "wide enough: both layouts cost the same"),
    (64, 300, 1, torch.float32, "one column: a matrix-vector product"),
    (32, 200, 10, torch.float32, "small product: the copies cost more than they save"),
    (64, 300, 10, torch.float16, "not MKL's sgemm/dgemm"),
])
def test_weight_left_as_it_is(batch, k, n, dtype, why):
    x, w = torch.zeros(batch, k, dtype=dtype), torch.zeros(k, n, dtype=dtype, requires_grad=True)
    assert gemm_layout.column_major(x, w) is w, why


def test_forward_alone_keeps_paddles_call():
    x, w = torch.from_numpy(X), torch.from_numpy(W)
    assert gemm_layout.column_major(x, w) is w                  # no gradient wanted
    w.requires_grad_()
    with torch.no_grad():
        assert gemm_layout.column_major(x, w) is w
    assert gemm_layout.column_major(x, w) is not w


def _fluid_fc(kind):
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start), fluid.unique_name.guard():
        x = fluid.layers.data("x", shape=[IN], dtype="float32")
        label = fluid.layers.data("label", shape=[1], dtype="int64")
        init = fluid.initializer.NumpyArrayInitializer
        if kind == "fc":
            logits = fluid.layers.fc(x, OUT, param_attr=fluid.ParamAttr("w", initializer=init(W)),
                                     bias_attr=fluid.ParamAttr("b", initializer=init(B)))
        else:
            w = fluid.layers.create_parameter([IN, OUT], "float32", name="w", default_initializer=init(W))
            logits = (fluid.layers.mul if kind == "mul" else fluid.layers.matmul)(x, w)
        loss = fluid.layers.mean(fluid.layers.softmax_with_cross_entropy(logits, label))
        fluid.backward.append_backward(loss)
    return main, start, loss


def _torch_grads(with_bias):
    x = torch.from_numpy(X)
    lin = torch.nn.Linear(IN, OUT, bias=with_bias)
    with torch.no_grad():
        lin.weight.copy_(torch.from_numpy(W.T))
        if with_bias:
            lin.bias.copy_(torch.from_numpy(B))
    loss = torch.nn.functional.cross_entropy(lin(x), torch.from_numpy(LABEL).view(-1))
    loss.backward()
    return float(loss.detach()), lin.weight.grad.numpy().T, lin.bias.grad.numpy() if with_bias else None


@pytest.mark.parametrize("kind", ["fc", "mul", "matmul"])
def test_gradients_equal_torch_linear(kind):
    main, start, loss = _fluid_fc(kind)
    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(start, scope=scope)
    fetch = [loss.name, "w@GRAD"] + (["b@GRAD"] if kind == "fc" else [])

    def step():
        return exe.run(main, feed={"x": X, "label": LABEL}, fetch_list=fetch, scope=scope)
    got = step()
    calls = _mm_shapes(step)
    # our step's weight gradient is torch's call, dOut^T @ x, not x^T @ dOut
    assert ("aten::mm", [[OUT, BATCH], [BATCH, IN]]) in calls, calls
    assert ("aten::mm", [[IN, BATCH], [BATCH, OUT]]) not in calls, calls
    want_loss, want_gw, want_gb = _torch_grads(kind == "fc")
    np.testing.assert_allclose(got[0].ravel()[0], want_loss, rtol=1e-6)
    assert got[1].shape == (IN, OUT)
    np.testing.assert_allclose(got[1], want_gw, rtol=1e-5, atol=1e-7)
    if kind == "fc":
        np.testing.assert_allclose(got[2], want_gb, rtol=1e-5, atol=1e-7)
