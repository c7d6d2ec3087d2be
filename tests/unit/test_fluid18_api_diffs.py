"""Fluid 1.8 API details that unmodified scripts and Paddle's own tests rely on."""

import numpy as np
import pytest

import paddle.fluid as fluid


def test_server_runtime_config_and_mode_from_distribute_transpiler():
    from paddle.fluid.transpiler.distribute_transpiler import (DistributedMode, DistributeTranspilerConfig,
                                                               ServerRuntimeConfig)
    from paddle.fluid.incubate.fleet.parameter_server.distribute_transpiler import distributed_strategy as ds
    assert ds.ServerRuntimeConfig is ServerRuntimeConfig
    assert ServerRuntimeConfig()._rpc_send_thread_num > 0
    assert (DistributedMode.SYNC, DistributedMode.ASYNC, DistributedMode.HALF_ASYNC, DistributedMode.GEO) == \
        (0, 1, 2, 3)
    assert DistributeTranspilerConfig is fluid.DistributeTranspilerConfig


def _mlp():
    x = fluid.data("x", [None, 3], "float32")
    loss = fluid.layers.mean(fluid.layers.fc(x, 2))
    fluid.optimizer.SGD(0.1).minimize(loss)
    return loss


def test_transpile_pserver_mode_accepts_current_endpoint_none():
    _mlp()
    t = fluid.DistributeTranspiler()
    t.transpile(0, pservers="127.0.0.1:6170,127.0.0.1:6171", trainers=2, current_endpoint=None)
    ops = [op.type for op in t.get_trainer_program().global_block().ops]
    assert "send" in ops and "recv" in ops
    assert t.get_pserver_program("127.0.0.1:6171").global_block().ops


def test_transpile_nccl2_still_needs_current_endpoint():
    _mlp()
    cfg = fluid.DistributeTranspilerConfig()
    cfg.mode = "nccl2"
    with pytest.raises(Exception, match="current_endpoint"):
        fluid.DistributeTranspiler(cfg).transpile(0, trainers="127.0.0.1:6170,127.0.0.1:6171",
                                                  current_endpoint=None)


def test_async_strategy_set_debug_opt():
    from paddle.fluid.incubate.fleet.parameter_server.distribute_transpiler.distributed_strategy import \
        StrategyFactory
    s = StrategyFactory.create_async_strategy()
    s.set_debug_opt({"dump_param": ["fc_0.w_0"], "dump_fields_path": "/tmp/x"})
    assert s.debug_opt["dump_param"] == ["fc_0.w_0"]
    assert s.get_debug_opt()["dump_param"] == ["fc_0.w_0"] and s.get_debug_opt()["dump_file_num"] == 16
    # as Paddle 1.8.5: any value is kept; get_debug_opt reads only a dict
    s.set_debug_opt(["dump_param"])
    assert s.get_debug_opt() == {}
    StrategyFactory.create_sync_strategy().set_debug_opt({"dump_param": []})


def _clip_run(clip):
    x = fluid.data("x", [None, 2], "float32")
    y = fluid.layers.fc(x, 1, param_attr=fluid.ParamAttr(name="w", initializer=fluid.initializer.Constant(1.0)),
                        bias_attr=fluid.ParamAttr(name="b", initializer=fluid.initializer.Constant(0.0)))
    loss = fluid.layers.reduce_sum(y) * 10.0
    fluid.optimizer.SGD(1.0, grad_clip=clip).minimize(loss)
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(fluid.default_startup_program())
    exe.run(feed={"x": np.array([[1.0, 2.0]], "float32")}, fetch_list=[loss])
    scope = fluid.global_scope()
    return (np.array(scope.find_var("w").get_tensor()).ravel(), np.array(scope.find_var("b").get_tensor()).ravel())


def test_gradient_clip_need_clip_skips_params():
    # grads: w = [10, 20], b = [10]; only w is clipped to [-1, 1]
    clip = fluid.clip.GradientClipByValue(1.0, need_clip=lambda p: p.name == "w")
    w, b = _clip_run(clip)
    np.testing.assert_allclose(w, [0.0, 0.0])
    np.testing.assert_allclose(b, [-10.0])


def test_gradient_clip_global_norm_need_clip_excludes_from_norm():
    # only w counts: norm = sqrt(10^2 + 20^2); b keeps its raw grad
    clip = fluid.clip.GradientClipByGlobalNorm(1.0, need_clip=lambda p: p.name == "w")
    w, b = _clip_run(clip)
    n = np.sqrt(500.0)
    np.testing.assert_allclose(w, [1 - 10 / n, 1 - 20 / n], rtol=1e-5)
    np.testing.assert_allclose(b, [-10.0])


def test_gradient_clip_by_norm_need_clip_and_bad_value():
    w, b = _clip_run(fluid.clip.GradientClipByNorm(1.0, need_clip=lambda p: p.name == "b"))
    np.testing.assert_allclose(w, [-9.0, -19.0])
    np.testing.assert_allclose(b, [-1.0])
    with pytest.raises(TypeError, match="need_clip"):
        fluid.clip.GradientClipByValue(1.0, need_clip=True)


def test_getitem_builds_paddles_ops_and_values():
    x = fluid.data("x", [None, 4, 3], "float32")
    x.stop_gradient = False
    n = fluid.layers.shape(x)[0]
    col = x[:, 1]
    first = x[0]
    strided = x[1:, 0:4:2, -1]
    rev = x[::-1]
    assert n.shape == (1,) and col.shape == (-1, 3) and first.shape == (4, 3) and strided.shape == (-1, 2)
    types = [op.type for op in fluid.default_main_program().global_block().ops]
    assert types == ["shape", "slice", "slice", "slice", "strided_slice", "strided_slice"]
    loss = fluid.layers.reduce_sum(strided) + fluid.layers.reduce_sum(col)
    g = fluid.backward.gradients([loss], [x])[0]
    xv = np.arange(24, dtype="float32").reshape(2, 4, 3)
    rn, rc, rf, rs, rr, rg = fluid.Executor(fluid.CPUPlace()).run(
        feed={"x": xv}, fetch_list=[n, col, first, strided, rev, g])
    assert rn.tolist() == [2]
    np.testing.assert_array_equal(rc, xv[:, 1])
    np.testing.assert_array_equal(rf, xv[0])
    np.testing.assert_array_equal(rs, xv[1:, 0:4:2, -1])
    np.testing.assert_array_equal(rr, xv[::-1])
    expect = np.zeros_like(xv)
    expect[1:, 0:4:2, -1] += 1
    expect[:, 1] += 1
    np.testing.assert_array_equal(rg, expect)


def test_getitem_bad_index_names_the_variable():
    x = fluid.data("xv", [None, 4], "float32")
    with pytest.raises(IndexError, match="xv"):
        x[0, 0, 0]
    with pytest.raises(IndexError, match="out of range.*xv"):
        x[:, 4]
    with pytest.raises(TypeError, match="xv"):
        x["a"]
    assert x[:] is x
