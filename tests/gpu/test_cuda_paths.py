"""CUDAPlace paths that need one GPU: training on torch's CUDA gives the CPU's numbers (the CPU path is the one
held to Paddle 1.8.5's recorded numbers), files written from a GPU scope load on the CPU, pserver jobs whose
trainers (or pservers) run on the GPU give the local losses, and a one-GPU collective job runs over NCCL."""

import os
import sys

import numpy as np
import pytest

import paddle_compat as fluid
from dist_utils import Cluster, base_env, endpoints, gpu_count
import dp_reference

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(os.path.dirname(HERE), "dist", "scripts")
sys.path.insert(0, SCRIPTS)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "dist"))


pytestmark = [pytest.mark.gpu, pytest.mark.skipif(gpu_count() == 0, reason="needs a CUDA device")]

RNG = np.random.RandomState(7)


def _mlp():
    x = fluid.layers.data(name="x", shape=[32], dtype="float32")
    y = fluid.layers.data(name="y", shape=[1], dtype="int64")
    h = fluid.layers.fc(x, 64, act="relu")
    p = fluid.layers.fc(h, 10, act="softmax")
    loss = fluid.layers.mean(fluid.layers.cross_entropy(p, y))
    fluid.optimizer.Momentum(0.1, momentum=0.9).minimize(loss)
    feeds = [{"x": RNG.rand(16, 32).astype("float32"), "y": RNG.randint(0, 10, (16, 1)).astype("int64")}
             for _ in range(5)]
    return loss, feeds


def _conv_bn():
    img = fluid.layers.data(name="img", shape=[1, 8, 8], dtype="float32")
    y = fluid.layers.data(name="y", shape=[1], dtype="int64")
    # no conv bias before batch_norm: its gradient is rounding noise, which Adam scales up to lr-sized steps
    c = fluid.layers.conv2d(img, num_filters=4, filter_size=3, padding=1, bias_attr=False)
    c = fluid.layers.batch_norm(c, act="relu")
    c = fluid.layers.pool2d(c, pool_size=2, pool_stride=2, pool_type="max")
    logits = fluid.layers.fc(c, 10)
    loss = fluid.layers.mean(fluid.layers.softmax_with_cross_entropy(logits, y))
    fluid.optimizer.Adam(0.01).minimize(loss)
    feeds = [{"img": RNG.rand(8, 1, 8, 8).astype("float32"), "y": RNG.randint(0, 10, (8, 1)).astype("int64")}
             for _ in range(5)]
    return loss, feeds


def _sparse_embedding():
    ids = fluid.layers.data(name="ids", shape=[1], dtype="int64")
    y = fluid.layers.data(name="y", shape=[1], dtype="float32")
    e = fluid.layers.embedding(ids, size=[100, 8], is_sparse=True)
    pred = fluid.layers.fc(e, 1)
    loss = fluid.layers.mean(fluid.layers.square_error_cost(pred, y))
    fluid.optimizer.Adagrad(0.1).minimize(loss)
    feeds = [{"ids": RNG.randint(0, 100, (16, 1)).astype("int64"), "y": RNG.rand(16, 1).astype("float32")}
             for _ in range(5)]
    return loss, feeds


def _lstm_lod():
    words = fluid.layers.data(name="words", shape=[1], dtype="int64", lod_level=1)
    y = fluid.layers.data(name="y", shape=[1], dtype="int64")
    e = fluid.layers.embedding(words, size=[50, 8])
    proj = fluid.layers.fc(e, 4 * 6)
    h, _ = fluid.layers.dynamic_lstm(proj, size=4 * 6)
    pooled = fluid.layers.sequence_pool(h, "max")
    p = fluid.layers.fc(pooled, 3, act="softmax")
    loss = fluid.layers.mean(fluid.layers.cross_entropy(p, y))
    fluid.optimizer.SGD(0.5).minimize(loss)
    feeds = []
    for _ in range(4):
        lens = [3, 1, 5, 2]
        w = RNG.randint(0, 50, (sum(lens), 1)).astype("int64")
        feeds.append({"words": fluid.create_lod_tensor(w, [lens], fluid.CPUPlace()),
                      "y": RNG.randint(0, 3, (4, 1)).astype("int64")})
    return loss, feeds


def _cudnn_lstm():
    """fluid.layers.lstm (Paddle 1.8's cudnn_lstm op) over a padded time-major batch, 2 layers, bidirectional."""
    x = fluid.layers.data(name="x", shape=[5, 4, 6], dtype="float32", append_batch_size=False)
    y = fluid.layers.data(name="y", shape=[4, 1], dtype="int64", append_batch_size=False)
    h0 = fluid.layers.fill_constant([4, 4, 8], "float32", 0.0)
    c0 = fluid.layers.fill_constant([4, 4, 8], "float32", 0.0)
    out, _, _ = fluid.layers.lstm(x, h0, c0, max_len=5, hidden_size=8, num_layers=2, is_bidirec=True)
    last = fluid.layers.reduce_mean(out, dim=0)                       # [4, 16]
    loss = fluid.layers.mean(fluid.layers.cross_entropy(fluid.layers.fc(last, 3, act="softmax"), y))
    fluid.optimizer.SGD(0.5).minimize(loss)
    feeds = [{"x": RNG.rand(5, 4, 6).astype("float32"), "y": RNG.randint(0, 3, (4, 1)).astype("int64")}
             for _ in range(4)]
    return loss, feeds


def _train(build, place, init=None):
    """Train build()'s model on `place`; init: {persistable name: array} to start from (the CPU run's)."""
    import torch
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start), fluid.unique_name.guard():
        loss, feeds = build()
    scope, exe = fluid.Scope(), fluid.Executor(place)
    exe.run(start, scope=scope)
    names = [v.name for v in main.list_vars() if v.persistable and scope.find_var(v.name) is not None
             and scope.find_var(v.name).value is not None]
    if init is None:
        init = {n: np.array(scope.find_var(n).value.detach().cpu().numpy()) for n in names}
    else:
        for n, v in init.items():
            scope.var(n).value = torch.from_numpy(v.copy()).to(exe.device)
    losses = [float(exe.run(main, feed=f, fetch_list=[loss], scope=scope)[0]) for f in feeds]
    params = {p.name: scope.find_var(p.name).value.detach().cpu().numpy() for p in main.all_parameters()}
    devices = {str(scope.find_var(p.name).value.device) for p in main.all_parameters()}
    return losses, params, init, devices


@pytest.mark.parametrize("build", [_mlp, _conv_bn, _sparse_embedding, _lstm_lod, _cudnn_lstm],
                         ids=["mlp_momentum", "conv_bn_adam", "sparse_embedding_adagrad", "dynamic_lstm_lod",
                              "cudnn_lstm_bidirectional"])
def test_cuda_training_gives_the_cpu_numbers(build):
    global RNG
    RNG = np.random.RandomState(7)
    cpu_losses, cpu_params, init, _ = _train(build, fluid.CPUPlace())
    RNG = np.random.RandomState(7)
    gpu_losses, gpu_params, _, devices = _train(build, fluid.CUDAPlace(0), init)
    assert devices == {"cuda:0"}, devices
    np.testing.assert_allclose(gpu_losses, cpu_losses, rtol=1e-4, atol=1e-6)
    for n, v in cpu_params.items():
        np.testing.assert_allclose(gpu_params[n], v, rtol=1e-4, atol=1e-5, err_msg=n)


def test_saved_from_cuda_loads_on_cpu_and_predicts_the_same(tmp_path):
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start), fluid.unique_name.guard():
        loss, feeds = _conv_bn()
    test_prog = main.clone(for_test=True)
    gpu_scope, gpu = fluid.Scope(), fluid.Executor(fluid.CUDAPlace(0))
    gpu.run(start, scope=gpu_scope)
    for f in feeds:
        gpu.run(main, feed=f, fetch_list=[loss], scope=gpu_scope)
    want = gpu.run(test_prog, feed=feeds[0], fetch_list=[loss], scope=gpu_scope)[0]
    with fluid.scope_guard(gpu_scope):
        fluid.io.save_persistables(gpu, str(tmp_path / "ckpt"), main)
    cpu_scope, cpu = fluid.Scope(), fluid.Executor(fluid.CPUPlace())
    cpu.run(start, scope=cpu_scope)
    with fluid.scope_guard(cpu_scope):
        fluid.io.load_persistables(cpu, str(tmp_path / "ckpt"), main)
    got = cpu.run(test_prog, feed=feeds[0], fetch_list=[loss], scope=cpu_scope)[0]
    np.testing.assert_allclose(got, want, rtol=1e-5)


def _ps_local(spec):
    from ps_cluster import local_losses
    return local_losses(fluid, spec)


@pytest.mark.dist
def test_pserver_job_with_gpu_trainers_gives_the_local_losses(tmp_path):
    """2 pservers + 2 trainers on 127.0.0.1, both trainers on cuda:0 (in some jobs the pservers too, a row-sparse
    table's included): sync jobs give one process's averaged-gradient losses; async DC-ASGD on GPU pservers
    trains."""
    from ps_cluster import run_ok
    sync = [{"model": "mlp", "opt": "sgd", "slice": True, "split": "rr", "steps": 4, "trainer_cuda": True},
            {"model": "mlp", "opt": "adam", "slice": True, "split": "hash", "steps": 4, "trainer_cuda": True},
            {"model": "emb", "opt": "sgd", "lr": 0.5, "slice": True, "split": "rr", "steps": 4,
             "trainer_cuda": True},
            {"model": "mlp", "opt": "adam", "slice": False, "split": "rr", "lr_decay": True, "steps": 4,
             "trainer_cuda": True, "pserver_cuda": True},
            {"model": "emb", "opt": "sgd", "lr": 0.5, "slice": True, "split": "rr", "steps": 4,
             "trainer_cuda": True, "pserver_cuda": True}]
    async_job = {"model": "fit_a_line", "opt": "sgd", "lr": 0.05, "steps": 30, "sync": False, "dc_asgd": True,
                 "trainer_cuda": True, "pserver_cuda": True}
    got = run_ok(tmp_path, sync + [async_job], timeout=280)
    for j, spec in enumerate(sync):
        want = _ps_local(spec)
        for t in range(2):
            np.testing.assert_allclose(got[(j, t)], want[t], rtol=1e-4, atol=1e-5, err_msg="job %d %s" % (j, spec))
    for t in range(2):
        losses = got[(len(sync), t)]
        assert len(losses) == 30 and np.mean(losses[-5:]) < 0.4 * np.mean(losses[:5]), losses


@pytest.mark.dist
def test_one_gpu_nccl2_job_trains_with_local_numbers(tmp_path):
    """An nccl2-transpiled job of one trainer on cuda:0 (its startup's gen_nccl_id, then ParallelExecutor and
    CompiledProgram): the losses and parameters are plain local SGD's. (Collective mode, as in Paddle, needs
    2 endpoints, and NCCL refuses two ranks on one GPU: the 2-GPU tests in test_nccl.py cover those.)"""
    import collective_trainer as T
    eps, configs, steps = endpoints(1), ["pe", "compiled"], 4
    with Cluster(tmp_path) as c:
        c.start("trainer0", [os.path.join(SCRIPTS, "collective_trainer.py"), "--trainer_id", "0",
                             "--endpoints", eps[0], "--configs", ",".join(configs), "--steps", str(steps),
                             "--out", str(tmp_path), "--use_cuda"],
                base_env(FLAGS_selected_gpus=0, FLAGS_rpc_deadline=60000))
        rcs = c.wait(240)
        assert all(rc == 0 for rc in rcs.values()), c.report()
    ref_losses, ref_params = dp_reference.averaged_sgd(T.build, lambda s: [T.feed(s, 0)], steps, 0.1)
    for name in configs:
        got = np.load(str(tmp_path / ("%s_0.npz" % name)))
        np.testing.assert_allclose(got["losses"], ref_losses[:, 0], rtol=1e-4, atol=1e-6, err_msg=name)
        for p in T.PARAMS:
            np.testing.assert_allclose(got[p], ref_params[p], rtol=1e-4, atol=1e-5, err_msg=(name, p))


def test_state_loaded_from_numpy_trains_on_the_gpu(tmp_path):
    """fluid.save on the CPU, then fluid.load (arrays set into the scope) and training on cuda:0: the state
    reaches the GPU run and the losses are the CPU's."""
    global RNG
    RNG = np.random.RandomState(7)
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start), fluid.unique_name.guard():
        loss, feeds = _mlp()
    cpu_scope, cpu = fluid.Scope(), fluid.Executor(fluid.CPUPlace())
    cpu.run(start, scope=cpu_scope)
    with fluid.scope_guard(cpu_scope):
        fluid.save(main, str(tmp_path / "m"))
    want = [float(cpu.run(main, feed=f, fetch_list=[loss], scope=cpu_scope)[0]) for f in feeds]
    gpu_scope, gpu = fluid.Scope(), fluid.Executor(fluid.CUDAPlace(0))
    with fluid.scope_guard(gpu_scope):
        gpu.run(start)                       # GPU values, then the saved ones set from numpy over them
        fluid.load(main, str(tmp_path / "m"), gpu)
        got = [float(gpu.run(main, feed=f, fetch_list=[loss])[0]) for f in feeds]
        assert {str(gpu_scope.find_var(p.name).value.device) for p in main.all_parameters()} == {"cuda:0"}
    np.testing.assert_allclose(got, want, rtol=1e-4)
    # the same state set before any GPU run (values on the CPU): moved to the GPU by the run
    fresh = fluid.Scope()
    with fluid.scope_guard(fresh):
        fluid.load(main, str(tmp_path / "m"))
        got2 = [float(gpu.run(main, feed=f, fetch_list=[loss])[0]) for f in feeds]
    np.testing.assert_allclose(got2, want, rtol=1e-4)
