"""dynamic_lstm's fused recurrence (ops/defs/lstm_seq.py: one autograd node, hand-written backward, packed
longest-first batch) against torch.nn.LSTM with the same weights (gates reordered from Paddle's candidate,
input, forget, output layout): hidden states and gradients, forward and reverse, with initial states and an
empty sequence in the batch."""

import numpy as np
import pytest
import torch

import paddle_compat as fluid

H = 5


def _ours(x, lens, w, b, h0, c0, reverse):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        xv = fluid.layers.data("x", shape=[4 * H], dtype="float32", lod_level=1)
        xv.stop_gradient = False
        h0v = fluid.layers.data("h0", shape=[H], dtype="float32")
        c0v = fluid.layers.data("c0", shape=[H], dtype="float32")
        h0v.stop_gradient = c0v.stop_gradient = False
        h, _ = fluid.layers.dynamic_lstm(xv, 4 * H, h_0=h0v, c_0=c0v, use_peepholes=False, is_reverse=reverse,
                                         param_attr=fluid.ParamAttr(name="w"), bias_attr=fluid.ParamAttr(name="b"))
        wv = fluid.layers.data("wt", shape=[H], dtype="float32", lod_level=1)
        loss = fluid.layers.reduce_sum(h * wv)
        grads = fluid.gradients([loss], [xv, h0v, c0v, main.global_block().var("w"), main.global_block().var("b")])
    exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
    weights = np.linspace(-1, 1, sum(lens) * H).astype("float32").reshape(-1, H)
    with fluid.scope_guard(scope):
        exe.run(startup)
        scope.find_var("w").get_tensor().set(w, fluid.CPUPlace())
        scope.find_var("b").get_tensor().set(b, fluid.CPUPlace())
        res = exe.run(main, feed={"x": fluid.create_lod_tensor(x, [lens], fluid.CPUPlace()), "h0": h0, "c0": c0,
                                  "wt": fluid.create_lod_tensor(weights, [lens], fluid.CPUPlace())},
                      fetch_list=[h] + grads, return_numpy=False)
    return [np.array(r) for r in res], weights


def _torch(x, lens, w, b, h0, c0, reverse, weights):
    order = np.concatenate([np.arange(H, 2 * H), np.arange(2 * H, 3 * H), np.arange(H), np.arange(3 * H, 4 * H)])
    xt = torch.tensor(x, requires_grad=True)
    wt = torch.tensor(w, requires_grad=True)
    bt = torch.tensor(b, requires_grad=True)
    h0t, c0t = torch.tensor(h0, requires_grad=True), torch.tensor(c0, requires_grad=True)
    outs, off = [], 0
    for i, n in enumerate(lens):
        if n == 0:
            continue
        seq = xt[off:off + n]
        if reverse:
            seq = seq.flip(0)
        out = torch._VF.lstm(seq.unsqueeze(1)[:, :, order], (h0t[i:i + 1].unsqueeze(0), c0t[i:i + 1].unsqueeze(0)),
                                [torch.eye(4 * H), wt.t()[order], torch.zeros(4 * H), bt.reshape(-1)[order]],
                                True, 1, 0.0, False, False, False)[0]
        out = out[:, 0]
        outs.append(out.flip(0) if reverse else out)
        off += n
    h = torch.cat(outs, 0)
    (h * torch.tensor(weights)).sum().backward()
    return [h.detach().numpy(), xt.grad.numpy(), h0t.grad.numpy(), c0t.grad.numpy(), wt.grad.numpy(),
            bt.grad.numpy()]


@pytest.mark.parametrize("reverse", [False, True])
def test_fused_lstm_matches_torch_lstm(reverse):
    r = np.random.RandomState(4)
    lens = [3, 0, 6, 1, 6]
    x = r.uniform(-1, 1, (sum(lens), 4 * H)).astype("float32")
    w = r.uniform(-0.5, 0.5, (H, 4 * H)).astype("float32")
    b = r.uniform(-0.5, 0.5, (1, 4 * H)).astype("float32")
    h0 = r.uniform(-1, 1, (len(lens), H)).astype("float32")
    c0 = r.uniform(-1, 1, (len(lens), H)).astype("float32")
    got, weights = _ours(x, lens, w, b, h0, c0, reverse)
    want = _torch(x, lens, w, b, h0, c0, reverse, weights)
    for name, g, e in zip(["hidden", "x", "h0", "c0", "w", "b"], got, want):
        np.testing.assert_allclose(g, e.reshape(g.shape), rtol=1e-4, atol=1e-5, err_msg=name)
