"""FLAGS_conv_channels_last (on by default): on the CPU, conv2d reads its input in channels-last memory order,
which torch's oneDNN convolutions run faster. Only the memory order changes: with the flag on and off a conv +
batch_norm + residual + pool + fc program trains to the same losses and parameters; conv activations are
channels-last inside the run and come out of it (fetches, np.array of a scope tensor) in C order, as Paddle's
arrays are; parameters and their gradients keep the standard layout (the wire codec and the allreduce buckets
take them as they are); dropout draws the same mask either way; images under 8x8 go back to NCHW memory
unless the convolution is grouped or depthwise; conv2d_transpose follows conv2d's rule."""

import numpy as np
import pytest

import paddle_compat as fluid


def _build():
    main, start = fluid.Program(), fluid.Program()
    main.random_seed = start.random_seed = 5
    with fluid.program_guard(main, start), fluid.unique_name.guard():
        img = fluid.layers.data(name="img", shape=[3, 12, 12], dtype="float32")
        label = fluid.layers.data(name="label", shape=[1], dtype="int64")
        c1 = fluid.layers.conv2d(img, num_filters=8, filter_size=3, padding=1, bias_attr=False,
                                 param_attr=fluid.ParamAttr(name="c1.w"))
        b1 = fluid.layers.batch_norm(c1, act="relu")
        c2 = fluid.layers.conv2d(b1, num_filters=8, filter_size=3, padding=1, bias_attr=False)
        b2 = fluid.layers.batch_norm(c2)
        h = fluid.layers.relu(fluid.layers.elementwise_add(b2, b1))
        grp = fluid.layers.conv2d(h, num_filters=8, filter_size=3, padding=1, groups=2)
        d = fluid.layers.dropout(fluid.layers.conv2d(h, num_filters=8, filter_size=3, padding=1), 0.3, seed=3)
        g = fluid.layers.elementwise_add(grp, d)    # dropout's mask: the same draw in either memory order
        p = fluid.layers.pool2d(g, pool_size=2, pool_stride=2, pool_type="max")
        # a small image: channels-last is slower there, the convolution goes back to NCHW memory; a depthwise
        # one (groups = channels) is faster channels-last at any size
        s = fluid.layers.conv2d(p, num_filters=8, filter_size=3, padding=1, act="relu")
        dw = fluid.layers.conv2d(p, num_filters=8, filter_size=3, padding=1, groups=8)
        tr = fluid.layers.conv2d_transpose(h, num_filters=4, filter_size=4, stride=2, padding=1)   # 24x24
        trp = fluid.layers.pool2d(tr, pool_size=4, pool_stride=4, pool_type="avg")
        pred = fluid.layers.fc(fluid.layers.concat([p, s, dw, trp], axis=1), size=5, act="softmax")
        loss = fluid.layers.mean(fluid.layers.cross_entropy(pred, label))
        fluid.optimizer.Momentum(learning_rate=0.05, momentum=0.9).minimize(loss)
    return main, start, loss, c1, h, s, (grp, dw, tr)


def _train(monkeypatch, flag, steps=4):
    monkeypatch.setenv("FLAGS_conv_channels_last", flag)
    main, start, loss, c1, h, small, (grp, dw, tr) = _build()
    scope, exe = fluid.Scope(), fluid.Executor(fluid.CPUPlace())
    exe.run(start, scope=scope)
    rng = np.random.RandomState(0)
    losses, last = [], None
    for _ in range(steps):
        feed = {"img": rng.uniform(-1, 1, (6, 3, 12, 12)).astype("float32"),
                "label": rng.randint(0, 5, (6, 1)).astype("int64")}
        l, act, act_t, wgrad = exe.run(main, feed=feed, fetch_list=[loss, c1, h, "c1.w@GRAD"], scope=scope)
        losses.append(float(np.asarray(l).reshape(-1)[0]))
        last = (act, act_t, wgrad)
    lt = exe.run(main, feed=feed, fetch_list=[h, "c1.w@GRAD", small, grp, dw, tr], scope=scope,
                 return_numpy=False)
    params = {p.name: np.array(scope.find_var(p.name).get_tensor()) for p in main.global_block().all_parameters()}
    return losses, params, last, lt


def test_on_and_off_train_alike_and_the_arrays_leave_in_c_order(monkeypatch):
    on_losses, on_params, (act, h, wgrad), (h_lt, g_lt, small_lt, grp_lt, dw_lt, tr_lt) = _train(monkeypatch, "1")
    off_losses, off_params, (act0, h0, wgrad0), (h_lt0, _, _, grp_lt0, _, tr_lt0) = _train(monkeypatch, "0")
    np.testing.assert_allclose(on_losses, off_losses, rtol=1e-5)
    assert on_params.keys() == off_params.keys()
    for name in on_params:
        np.testing.assert_allclose(on_params[name], off_params[name], rtol=1e-4, atol=1e-5, err_msg=name)
    np.testing.assert_allclose(act, act0, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(h, h0, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(wgrad, wgrad0, rtol=1e-4, atol=1e-5)
    for a in (act, h, wgrad, np.array(h_lt)):
        assert a.flags.c_contiguous
    # the flag is live: the activation inside the run is channels-last with it, not without it
    import torch
    assert h_lt._torch().is_contiguous(memory_format=torch.channels_last)
    assert not h_lt._torch().is_contiguous()
    assert h_lt0._torch().is_contiguous()
    assert small_lt._torch().is_contiguous()       # 6x6 image: NCHW memory
    import torch as _t
    # grouped, depthwise, transposed (from a 12x12 input): channels-last
    for t in (grp_lt._torch(), dw_lt._torch(), tr_lt._torch()):
        assert t.is_contiguous(memory_format=_t.channels_last) and not t.is_contiguous()
    assert grp_lt0._torch().is_contiguous() and tr_lt0._torch().is_contiguous()
    np.testing.assert_allclose(np.array(tr_lt), np.array(tr_lt0), rtol=1e-4, atol=1e-5)
    # a parameter's gradient keeps the standard layout
    assert g_lt._torch().is_contiguous()


@pytest.mark.parametrize("flag", ["1", "0"])
def test_saved_parameters_load_back_equal(monkeypatch, tmp_path, flag):
    """save_params writes C-order bytes: what a trained scope holds loads back bit for bit."""
    monkeypatch.setenv("FLAGS_conv_channels_last", flag)
    main, start, loss, _, _, _, _ = _build()
    scope, exe = fluid.Scope(), fluid.Executor(fluid.CPUPlace())
    exe.run(start, scope=scope)
    rng = np.random.RandomState(0)
    for _ in range(2):
        feed = {"img": rng.uniform(-1, 1, (6, 3, 12, 12)).astype("float32"),
                "label": rng.randint(0, 5, (6, 1)).astype("int64")}
        exe.run(main, feed=feed, fetch_list=[loss], scope=scope)
    with fluid.scope_guard(scope):
        fluid.io.save_params(exe, str(tmp_path), main_program=main)
    scope2, exe2 = fluid.Scope(), fluid.Executor(fluid.CPUPlace())
    exe2.run(start, scope=scope2)
    with fluid.scope_guard(scope2):
        fluid.io.load_params(exe2, str(tmp_path), main_program=main)
    for p in main.global_block().all_parameters():
        np.testing.assert_array_equal(np.array(scope2.find_var(p.name).get_tensor()),
                                      np.array(scope.find_var(p.name).get_tensor()), err_msg=p.name)
