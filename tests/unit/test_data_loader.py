"""DataLoader.from_generator (iterable and start/reset modes), PyReader, layers.py_reader."""

import numpy as np
import pytest

import paddle_compat as fluid

PLACE = fluid.CPUPlace()


def _samples(n):
    """n samples (dense[2], ids, [label]) with a known content: sample i has i % 3 + 1 ids."""
    for i in range(n):
        yield [float(i), float(-i)], list(range(i, i + i % 3 + 1)), [i % 2]


def _model():
    dense = fluid.layers.data(name="dense", shape=[2], dtype="float32")
    ids = fluid.layers.data(name="ids", shape=[1], dtype="int64", lod_level=1)
    label = fluid.layers.data(name="label", shape=[1], dtype="int64")
    emb = fluid.layers.embedding(ids, size=[64, 2], is_sparse=True)
    h = fluid.layers.concat([fluid.layers.sequence_pool(emb, "sum"), dense], axis=1)
    pred = fluid.layers.fc(h, 2, act="softmax")
    loss = fluid.layers.mean(fluid.layers.cross_entropy(pred, label))
    fluid.optimizer.SGD(0.01).minimize(loss)
    # count rows and sequences seen, so a test can tell which batch was fed
    n_rows = fluid.layers.reduce_sum(fluid.layers.cast(ids, "float32"))
    return [dense, ids, label], loss, n_rows


def _expected_sums(n, batch, drop_last=True):
    out, samples = [], list(_samples(n))
    for lo in range(0, n, batch):
        part = samples[lo:lo + batch]
        if len(part) < batch and drop_last:
            break
        out.append(float(sum(sum(s[1]) for s in part)))
    return out


def test_iterable_sample_generator():
    feed_list, loss, n_rows = _model()
    exe = fluid.Executor(PLACE)
    exe.run(fluid.default_startup_program())
    for drop_last in (True, False):
        loader = fluid.io.DataLoader.from_generator(feed_list=feed_list, capacity=4, iterable=True)
        loader.set_sample_generator(lambda: _samples(10), batch_size=4, drop_last=drop_last, places=PLACE)
        sums = []
        for data in loader():
            assert isinstance(data, list) and len(data) == 1 and set(data[0]) == {"dense", "ids", "label"}
            sums.append(float(exe.run(feed=data, fetch_list=[n_rows])[0][0]))
        assert sums == _expected_sums(10, 4, drop_last)


def test_iterable_sample_list_and_batch_generators():
    feed_list, loss, n_rows = _model()
    exe = fluid.Executor(PLACE)
    exe.run(fluid.default_startup_program())

    def sample_lists():
        batch = []
        for s in _samples(9):
            batch.append(s)
            if len(batch) == 3:
                yield batch
                batch = []
    a = fluid.io.DataLoader.from_generator(feed_list=feed_list, capacity=2)
    a.set_sample_list_generator(sample_lists, places=PLACE)
    got_a = [float(exe.run(feed=d, fetch_list=[n_rows])[0][0]) for d in a()]
    assert got_a == _expected_sums(9, 3)

    feeder = fluid.DataFeeder(feed_list, PLACE)

    def batches():
        for batch in sample_lists():
            t = feeder.feed(batch)
            yield [np.array(t["dense"]), t["ids"], np.array(t["label"])]
    b = fluid.io.DataLoader.from_generator(feed_list=feed_list, capacity=2, return_list=True)
    b.set_batch_generator(batches, places=[PLACE])
    got_b = []
    for data in b:
        assert isinstance(data[0], list) and len(data[0]) == 3
        got_b.append(float(exe.run(feed=dict(zip(["dense", "ids", "label"], data[0])), fetch_list=[n_rows])[0][0]))
    assert got_b == got_a
    bad = fluid.io.DataLoader.from_generator(feed_list=feed_list, capacity=2)
    bad.set_batch_generator(lambda: iter([[np.zeros((1, 2), np.float32)]]))
    with pytest.raises(ValueError, match="3 arrays"):
        list(bad())


def test_non_iterable_start_until_eof_then_reset():
    feed_list, loss, n_rows = _model()
    loader = fluid.io.DataLoader.from_generator(feed_list=feed_list, capacity=4, iterable=False)
    # Paddle's order: the double-buffer wrapper (use_double_buffer defaults to True), then `read`
    assert [op.type for op in fluid.default_main_program().global_block().ops[:2]] == [
        "create_double_buffer_reader", "read"]
    loader.set_sample_generator(lambda: _samples(11), batch_size=4, drop_last=False)
    exe = fluid.Executor(PLACE)
    exe.run(fluid.default_startup_program())
    with pytest.raises(RuntimeError, match="not started"):
        exe.run(fetch_list=[loss])
    for _ in range(2):                      # two passes: reset() makes the loader reusable
        loader.start()
        sums, losses = [], []
        try:
            while True:
                l, s = exe.run(fetch_list=[loss, n_rows])
                losses.append(float(l[0]))
                sums.append(float(s[0]))
        except fluid.core.EOFException:
            loader.reset()
        assert sums == _expected_sums(11, 4, drop_last=False)
        assert all(np.isfinite(losses))
    with pytest.raises(RuntimeError, match="iterable=False"):
        iter(loader).__next__()
    loader.start()
    with pytest.raises(RuntimeError, match="already started"):
        loader.start()


def test_non_iterable_matches_feeding_by_hand():
    """Training through the read op gives the same losses as feeding the DataFeeder's dicts."""
    def train(use_loader):
        main, start = fluid.Program(), fluid.Program()
        main.random_seed = start.random_seed = 5
        with fluid.program_guard(main, start), fluid.unique_name.guard():
            feed_list, loss, _ = _model()
            loader = fluid.io.DataLoader.from_generator(feed_list=feed_list, capacity=4, iterable=not use_loader)
            loader.set_sample_generator(lambda: _samples(12), batch_size=3)
        exe = fluid.Executor(PLACE)
        scope = fluid.Scope()
        exe.run(start, scope=scope)
        if not use_loader:
            return [float(exe.run(main, feed=d, fetch_list=[loss], scope=scope)[0][0]) for d in loader()]
        loader.start()
        out = []
        try:
            while True:
                out.append(float(exe.run(main, fetch_list=[loss], scope=scope)[0][0]))
        except fluid.core.EOFException:
            loader.reset()
        return out
    a, b = train(False), train(True)
    assert len(a) == 4 and a == b


def test_pyreader_and_layers_py_reader():
    feed_list, loss, n_rows = _model()
    reader = fluid.io.PyReader(feed_list=feed_list, capacity=4, iterable=True)
    reader.decorate_sample_generator(lambda: _samples(8), batch_size=4, places=PLACE)
    exe = fluid.Executor(PLACE)
    exe.run(fluid.default_startup_program())
    assert [float(exe.run(feed=d, fetch_list=[n_rows])[0][0]) for d in reader()] == _expected_sums(8, 4)

    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        r = fluid.layers.py_reader(capacity=4, shapes=[(-1, 2), (-1, 1)], dtypes=["float32", "int64"],
                                   lod_levels=[0, 1], name="train_reader")
        dense, ids = fluid.layers.read_file(r)
        total = fluid.layers.reduce_sum(fluid.layers.cast(ids, "float32"))
        width = fluid.layers.reduce_sum(dense)
    assert ids.lod_level == 1 and dense.name == "train_reader_data_0"

    def paddle_reader():                     # what paddle.batch(...) yields: lists of samples
        yield [([1.0, 2.0], [3, 4]), ([0.5, 0.5], [5])]
        yield [([0.0, 1.0], [6])]
    r.decorate_paddle_reader(paddle_reader)
    r.start()
    got = []
    try:
        while True:
            got.append([float(v[0]) for v in exe.run(main, fetch_list=[total, width])])
    except fluid.core.EOFException:
        r.reset()
    assert got == [[12.0, 4.0], [6.0, 1.0]]


def test_loader_argument_errors():
    with pytest.raises(ValueError, match="feed_list"):
        fluid.io.DataLoader.from_generator(feed_list=None, capacity=2)
    x = fluid.layers.data(name="x", shape=[1], dtype="float32")
    loader = fluid.io.DataLoader.from_generator(feed_list=[x], capacity=2)
    with pytest.raises(RuntimeError, match="no data source"):
        list(loader())
    with pytest.raises(ValueError, match="batch_size"):
        list(loader.set_sample_generator(lambda: iter([([1.0],)]), batch_size=0)())


def test_double_buffer_op_and_inference_optimize():
    """py_reader(use_double_buffer=True) records Paddle's create_double_buffer_reader ahead of `read`;
    _inference_optimize drops both unless prune_read_op=False (Paddle's test_program)."""
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        reader = fluid.layers.py_reader(capacity=4, shapes=[[-1, 3], [-1, 1]], dtypes=["float32", "int64"],
                                        use_double_buffer=True)
        x, y = fluid.layers.read_file(reader)
        loss = fluid.layers.mean(fluid.layers.fc(x, 1))
        fluid.optimizer.SGD(0.1).minimize(loss)
    ops = main.global_block().ops
    assert [op.type for op in ops[:2]] == ["create_double_buffer_reader", "read"]
    assert ops[1].input("Reader") == ops[0].output("Out") and ops[0].input("UnderlyingReader") != ops[0].output("Out")
    kept = [op.type for op in main._inference_optimize(prune_read_op=False).global_block().ops]
    pruned = [op.type for op in main._inference_optimize().global_block().ops]
    assert kept[:2] == ["create_double_buffer_reader", "read"] and kept[2:] == pruned
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        r = fluid.layers.py_reader(capacity=4, shapes=[[-1, 3]], dtypes=["float32"], use_double_buffer=False)
        assert [op.type for op in fluid.default_main_program().global_block().ops] == ["read"]
    # it runs: the wrapper is a no-op in front of the DataLoader
    exe = fluid.Executor(PLACE)
    exe.run(startup)
    reader.decorate_tensor_provider(lambda: iter([[np.ones((2, 3), np.float32), np.zeros((2, 1), np.int64)]]))
    reader.start()
    out, = exe.run(main, fetch_list=[loss])
    assert np.isfinite(out).all()
    reader.reset()
