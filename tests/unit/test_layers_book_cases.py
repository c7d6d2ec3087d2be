"""Layer-building cases of Paddle 1.8's own test_layers.py (TestBook / TestLayer) that build programs only or
run static mode: rois_lod for roi_pool, one Variable for partial_concat, NumPy's dtype spellings, the padded
CRF's shapes, and the rest added here as they land."""

import numpy as np

import paddle_compat as fluid


def test_dtype_spellings_follow_numpy():
    # as Paddle 1.8 (np.dtype): "int" is int64 and "float" float64
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        assert fluid.data("a", shape=[-1, 1], dtype="int").dtype == fluid.core.VarDesc.VarType.INT64
        assert fluid.data("b", shape=[-1, 1], dtype="float").dtype == fluid.core.VarDesc.VarType.FP64


def test_partial_concat_takes_one_variable():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data(name="x", shape=[None, 3], dtype="float32")
        out = fluid.contrib.layers.partial_concat(x, start_index=1, length=-1)
    xv = np.arange(6, dtype="float32").reshape(2, 3)
    res, = fluid.Executor(fluid.CPUPlace()).run(main, feed={"x": xv}, fetch_list=[out])
    np.testing.assert_array_equal(res, xv[:, 1:])


def test_roi_pool_rois_lod_tensor_equals_the_lod():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data(name="x", shape=[2, 8, 8], dtype="float32")
        rois = fluid.layers.data(name="rois", shape=[4], dtype="float32", lod_level=1)
        rois_lod = fluid.layers.data(name="rois_lod", shape=[None], dtype="int", append_batch_size=False)
        by_lod = fluid.layers.roi_pool(x, rois, 2, 2, 1.0)
        by_tensor = fluid.layers.roi_pool(x, rois, 2, 2, 1.0, rois_lod)
    r = np.random.RandomState(0)
    xv = r.rand(2, 2, 8, 8).astype("float32")
    rv = np.array([[0, 0, 3, 3], [1, 2, 7, 6], [2, 2, 5, 7]], "float32")
    feed = {"x": xv, "rois": fluid.create_lod_tensor(rv, [[1, 2]], fluid.CPUPlace()),
            "rois_lod": np.array([0, 1, 3], "int64")}
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    a, b = exe.run(main, feed=feed, fetch_list=[by_lod, by_tensor])
    np.testing.assert_array_equal(a, b)
    assert a.shape == (3, 2, 2, 2)


def test_edit_distance_evaluator_accumulates_over_batches():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        predict = fluid.layers.data(name="predict", shape=[-1, 1], dtype="int64", lod_level=1)
        label = fluid.layers.data(name="label", shape=[-1, 1], dtype="int64", lod_level=1)
        ev = fluid.evaluator.EditDistance(predict, label)
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    ev.reset(exe)
    place = fluid.CPUPlace()

    def lod(rows, lens):
        return fluid.create_lod_tensor(np.array(rows, "int64").reshape(-1, 1), [lens], place)
    # batch 1: [1 2 3] vs [1 2 3] (0), [4 5] vs [4 6] (1/2 normalised); batch 2: [7] vs [8] (1)
    for p, l, lens in (([1, 2, 3, 4, 5], [1, 2, 3, 4, 6], [3, 2]), ([7], [8], [1])):
        total, wrong = exe.run(main, feed={"predict": lod(p, lens), "label": lod(l, lens)}, fetch_list=ev.metrics)
    np.testing.assert_allclose(total, [1.0])
    assert int(np.array(wrong).ravel()[0]) == 1
    avg, err = ev.eval(exe)
    np.testing.assert_allclose(avg, [1.5 / 3], rtol=1e-6)
    np.testing.assert_allclose(err, [2 / 3], rtol=1e-6)


def test_chunk_evaluator_accumulates_counts():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        inf = fluid.layers.data(name="inf", shape=[1], dtype="int64", lod_level=1)
        lab = fluid.layers.data(name="lab", shape=[1], dtype="int64", lod_level=1)
        ev = fluid.evaluator.ChunkEvaluator(inf, lab, chunk_scheme="IOB", num_chunk_types=2)
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    ev.reset(exe)
    place = fluid.CPUPlace()
    # IOB with 2 types: tags 0=B-0 1=I-0 2=B-1 3=I-1 4=O
    x = fluid.create_lod_tensor(np.array([[0], [1], [4], [2]], "int64"), [[4]], place)
    y = fluid.create_lod_tensor(np.array([[0], [1], [4], [0]], "int64"), [[4]], place)
    exe.run(main, feed={"inf": x, "lab": y}, fetch_list=ev.metrics)
    p, r, f1 = ev.eval(exe)
    np.testing.assert_allclose([p[0], r[0], f1[0]], [0.5, 0.5, 0.5])


def test_crop_tensor_shape_and_offsets_from_variables():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data(name="x", shape=[6, 5, 8])
        dim1 = fluid.layers.data(name="dim1", shape=[1], dtype="int32", append_batch_size=False)
        dim2 = fluid.layers.data(name="dim2", shape=[1], dtype="int32", append_batch_size=False)
        shape_v = fluid.layers.data(name="shape", shape=[4], dtype="int32", append_batch_size=False)
        offs_v = fluid.layers.data(name="offs", shape=[4], dtype="int32", append_batch_size=False)
        out1 = fluid.layers.crop_tensor(x, shape=(1, 2, 4, 4), offsets=[0, 0, 1, 0])
        out2 = fluid.layers.crop_tensor(x, shape=shape_v, offsets=offs_v)
        out3 = fluid.layers.crop_tensor(x, shape=[-1, dim1, dim2, 4], offsets=[0, dim1, dim2, 0])
    assert out1.shape == (1, 2, 4, 4) and out2.shape == (-1, -1, -1, -1) and out3.shape == (-1, -1, -1, 4)
    assert sorted(main.global_block().ops[-1].inputs) == ["OffsetsTensor", "ShapeTensor", "X"]
    xv = np.arange(2 * 6 * 5 * 8, dtype="float32").reshape(2, 6, 5, 8)
    feed = {"x": xv, "dim1": np.array([2], "int32"), "dim2": np.array([2], "int32"),
            "shape": np.array([1, 3, 2, 5], "int32"), "offs": np.array([1, 2, 0, 3], "int32")}
    a, b, c = fluid.Executor(fluid.CPUPlace()).run(main, feed=feed, fetch_list=[out1, out2, out3])
    np.testing.assert_array_equal(a, xv[0:1, 0:2, 1:5, 0:4])
    np.testing.assert_array_equal(b, xv[1:2, 2:5, 0:2, 3:8])
    np.testing.assert_array_equal(c, xv[:, 2:4, 2:4, 0:4])
