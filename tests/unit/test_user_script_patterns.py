"""Patterns met in 1.x-era user scripts (see tools/real_scripts.md) that once failed here."""
import io

import numpy as np
import pytest

import paddle_compat as fluid
from paddle_compat.fluid.incubate import data_generator as dg


def _fresh():
    return fluid.Program(), fluid.Program()


def test_data_generator_accepts_zip_of_slots():
    # Python 2 era generators yield zip(names, values) (a list there)
    class G(dg.MultiSlotDataGenerator):
        def generate_sample(self, line):
            def r():
                yield zip(["dense", "label"], [[0.5, 1.5], [1]])
            return r

    g, out = G(), io.StringIO()
    g._drive([g.generate_sample("x")], out)
    assert out.getvalue() == "2 0.5 1.5 1 1\n"
    with pytest.raises(ValueError, match="list or tuple"):
        g._gen_str("not a sample")


def test_fill_constant_with_runtime_dim_from_shape():
    main, startup = _fresh()
    with fluid.program_guard(main, startup):
        x = fluid.data(name="x", shape=[None, 3], dtype="float32")
        ones = fluid.layers.fill_constant(shape=[fluid.layers.shape(x)[0], 2], value=1.0, dtype="float32")
        whole = fluid.layers.fill_constant(shape=fluid.layers.shape(x), value=2.0, dtype="float32")
    assert ones.shape == (-1, 2)
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    a, b = exe.run(main, feed={"x": np.zeros((5, 3), "float32")}, fetch_list=[ones, whole])
    np.testing.assert_array_equal(a, np.ones((5, 2), "float32"))
    np.testing.assert_array_equal(b, np.full((5, 3), 2.0, "float32"))


def test_fill_constant_label_in_a_trained_loss():
    # word2vec's NCE: labels sized by the batch feed a sigmoid cross-entropy that trains
    main, startup = _fresh()
    with fluid.program_guard(main, startup):
        x = fluid.data(name="x", shape=[None, 4], dtype="float32")
        logit = fluid.layers.fc(x, 1)
        lab = fluid.layers.fill_constant(shape=[fluid.layers.shape(logit)[0], 1], value=1.0, dtype="float32")
        loss = fluid.layers.reduce_mean(fluid.layers.sigmoid_cross_entropy_with_logits(logit, lab))
        fluid.optimizer.SGD(0.5).minimize(loss)
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    feed = {"x": np.random.RandomState(0).rand(6, 4).astype("float32")}
    first = exe.run(main, feed=feed, fetch_list=[loss])[0]
    for _ in range(5):
        last = exe.run(main, feed=feed, fetch_list=[loss])[0]
    assert last < first


def test_fluid_embedding_keeps_trailing_one():
    # fluid.embedding (1.6+) returns input.shape + [D]; layers.embedding drops a trailing 1
    main, startup = _fresh()
    with fluid.program_guard(main, startup):
        ids = fluid.data(name="ids", shape=[None, 1], dtype="int64")
        seq = fluid.data(name="seq", shape=[None, 3], dtype="int64")
        e1 = fluid.embedding(ids, size=[10, 4], param_attr=fluid.ParamAttr(name="w"))
        e3 = fluid.embedding(seq, size=[10, 4], param_attr=fluid.ParamAttr(name="w"))
        old = fluid.layers.embedding(ids, size=[10, 4], param_attr=fluid.ParamAttr(name="w"))
    assert e1.shape == (-1, 1, 4) and e3.shape == (-1, 3, 4) and old.shape == (-1, 4)
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    a, b, c = exe.run(main, feed={"ids": np.array([[1], [2]], "int64"), "seq": np.array([[1, 2, 3]], "int64")},
                      fetch_list=[e1, e3, old])
    assert a.shape == (2, 1, 4) and b.shape == (1, 3, 4) and c.shape == (2, 4)
    np.testing.assert_array_equal(a[:, 0], c)


def test_generator_loader_queue_size():
    main, startup = _fresh()
    with fluid.program_guard(main, startup):
        x = fluid.data(name="x", shape=[None, 2], dtype="float32")
        loader = fluid.io.DataLoader.from_generator(feed_list=[x], capacity=8, iterable=False)
    assert loader.queue.size() == 0 and loader.queue.capacity() == 8


def test_layer_modules_answer_paddle_names():
    # `import paddle.fluid.layers.nn as nn; nn.cos_sim(...)`: each module holds its Paddle 1.8.5 names
    import paddle_compat.fluid.layers.control_flow as cf
    import paddle_compat.fluid.layers.nn as nn
    import paddle_compat.fluid.layers.tensor as tensor
    assert nn.cos_sim is fluid.layers.cos_sim and nn.reduce_max is fluid.layers.reduce_max
    assert tensor.fill_constant is fluid.layers.fill_constant and cf.While is fluid.layers.While
    with pytest.raises(AttributeError):
        nn.While   # a control_flow name, not an nn one


def test_squeeze_and_cos_sim_keep_lod_for_sequence_ops():
    # tagspace: embedding of LoD ids -> squeeze -> cos_sim -> sequence_reshape (needs the LoD)
    main, startup = _fresh()
    with fluid.program_guard(main, startup):
        ids = fluid.data(name="ids", shape=[None, 1], lod_level=1, dtype="int64")
        emb = fluid.layers.squeeze(fluid.embedding(ids, size=[10, 4]), axes=[1])
        other = fluid.layers.unsqueeze(emb, axes=[1])
        sim = fluid.layers.cos_sim(emb, emb)
        pairs = fluid.layers.sequence_reshape(sim, new_dim=2)
    assert emb.lod_level == 1 and other.lod_level == 1 and sim.lod_level == 1
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    t = fluid.create_lod_tensor(np.array([[1], [2], [3], [4], [5], [6]], "int64"), [[2, 4]], fluid.CPUPlace())
    out, = exe.run(main, feed={"ids": t}, fetch_list=[pairs], return_numpy=False)
    assert out.recursive_sequence_lengths() == [[1, 2]]
    np.testing.assert_allclose(np.array(out), np.ones((3, 2)), rtol=1e-5)


def test_python_dash_m_through_the_paddle_namespace():
    # `python -m paddle.distributed.launch ...` (runpy needs the alias loader's get_code)
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-m", "paddle.distributed.launch", "--help"], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "--selected_gpus" in r.stdout


def test_layers_py_reader_queue_size():
    main, startup = _fresh()
    with fluid.program_guard(main, startup):
        reader = fluid.layers.py_reader(capacity=4, shapes=[[-1, 1]], dtypes=["int64"])
    assert reader.queue.size() == 0 and reader.queue.capacity() == 4
