"""Paddle 1.8.5, in a subprocess, loads inference models saved here (Paddle's ProgramDesc __model__ and
parameter files) and predicts our outputs. Runs only where a Paddle 1.8.5 Python is installed."""

import os
import subprocess

import numpy as np
import pytest

import paddle_compat as fluid

PADDLE18 = os.environ.get("PADDLE18_PYTHON", "/work/paddle18/bin/python")
SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scripts", "paddle18_predict.py")

pytestmark = [pytest.mark.dist, pytest.mark.parity,
              pytest.mark.skipif(not os.path.exists(PADDLE18),
                                 reason="needs Paddle 1.8.5's Python at %s (set PADDLE18_PYTHON)" % PADDLE18)]


def _mlp():
    x = fluid.layers.data(name="x", shape=[6], dtype="float32")
    h = fluid.layers.fc(input=x, size=8, act="relu")
    h = fluid.layers.fc(input=h, size=5, act="tanh")
    return ["x"], [fluid.layers.fc(input=h, size=3, act="softmax")], {"x": (4, 6)}


def _conv():
    img = fluid.layers.data(name="img", shape=[2, 8, 8], dtype="float32")
    c = fluid.layers.conv2d(img, num_filters=4, filter_size=3, padding=1)
    c = fluid.layers.batch_norm(c, act="relu")
    c = fluid.layers.pool2d(c, pool_size=2, pool_stride=2, pool_type="max")
    return ["img"], [fluid.layers.fc(input=c, size=3, act="softmax"), c], {"img": (3, 2, 8, 8)}


def _ctr():
    ids = fluid.layers.data(name="ids", shape=[1], dtype="int64", lod_level=1)
    dense = fluid.layers.data(name="dense", shape=[3], dtype="float32")
    emb = fluid.layers.embedding(ids, size=[20, 4], is_sparse=True)
    pooled = fluid.layers.sequence_pool(emb, "sum")
    h = fluid.layers.fc(input=fluid.layers.concat([pooled, dense], axis=1), size=5, act="relu")
    return ["ids", "dense"], [fluid.layers.fc(input=h, size=2, act="softmax")], {"ids": (7, 1), "dense": (3, 3)}


LODS = {"ids": [2, 4, 1]}


@pytest.mark.timeout(240)
@pytest.mark.parametrize("build", [_mlp, _conv, _ctr], ids=["mlp", "conv", "ctr"])
@pytest.mark.parametrize("params", [None, "params"], ids=["files", "combined"])
def test_paddle18_predicts_our_outputs(tmp_path, build, params):
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start), fluid.unique_name.guard():
        feeds, targets, shapes = build()
    exe = fluid.Executor(fluid.CPUPlace())
    rng = np.random.RandomState(5)
    feed = {n: (rng.randint(0, 20, size=shapes[n]).astype("int64") if n in LODS
                else rng.rand(*shapes[n]).astype("float32")) for n in feeds}
    run_feed = {n: (fluid.create_lod_tensor(a, [LODS[n]], fluid.CPUPlace()) if n in LODS else a)
                for n, a in feed.items()}
    d = str(tmp_path / "model")
    with fluid.scope_guard(fluid.Scope()):
        exe.run(start)
        for v in main.list_vars():        # non-trivial batch_norm statistics
            if v.persistable and ("mean" in v.name or "variance" in v.name or v.name.endswith((".w_1", ".w_2"))):
                t = fluid.global_scope().find_var(v.name).get_tensor()
                t.set((rng.rand(*np.array(t).shape) + 0.5).astype("float32"), fluid.CPUPlace())
        want = exe.run(main.clone(for_test=True), feed=run_feed, fetch_list=targets)
        fluid.io.save_inference_model(d, feeds, targets, exe, main_program=main, params_filename=params)
    np.savez(str(tmp_path / "in.npz"), **feed, **{"lod_" + n: np.array(LODS[n]) for n in feed if n in LODS})
    env = dict(os.environ, GLOG_v="0", OMP_NUM_THREADS="1", CPU_NUM="1")
    env.pop("PYTHONPATH", None)
    r = subprocess.run([PADDLE18, SCRIPT, d, params or "-", str(tmp_path / "in.npz"), str(tmp_path / "out.npz")],
                       env=env, capture_output=True, text=True, timeout=200)
    assert r.returncode == 0, r.stderr[-4000:]
    got = np.load(str(tmp_path / "out.npz"))
    assert list(got["feeds"]) == feeds
    for i, w in enumerate(want):
        np.testing.assert_allclose(got["out_%d" % i], w, rtol=0, atol=1e-6)
        # Paddle's predictor on our model, and ours, predict the same
        np.testing.assert_allclose(got["pred_%d" % i], w, rtol=0, atol=1e-6)
    cfg = fluid.core.AnalysisConfig(d) if params is None else fluid.core.AnalysisConfig(
        os.path.join(d, "__model__"), os.path.join(d, params))
    ins = [fluid.core.PaddleTensor(feed[n], n, [[0] + np.cumsum(LODS[n]).tolist()] if n in LODS else [])
           for n in feeds]
    for i, o in enumerate(fluid.core.create_paddle_predictor(cfg).run(ins)):
        np.testing.assert_allclose(o.as_ndarray(), got["pred_%d" % i], rtol=0, atol=1e-6)
