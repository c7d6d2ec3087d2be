"""layers.create_py_reader_by_data and double_buffer: a start/reset reader filling existing data variables."""

import numpy as np
import pytest

import paddle_compat as fluid


def test_create_py_reader_by_data_fills_feed_vars():
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        x = fluid.data("x", shape=[None, 3], dtype="float32")
        y = fluid.data("y", shape=[None, 1], dtype="int64")
        r = fluid.layers.double_buffer(fluid.layers.create_py_reader_by_data(capacity=4, feed_list=[x, y]))
        xs, ys = fluid.layers.read_file(r)
        sx = fluid.layers.reduce_sum(x)
        sy = fluid.layers.reduce_sum(fluid.layers.cast(y, "float32"))
    assert (xs, ys) == (x, y)
    batches = [(np.full((2, 3), i, "float32"), np.array([[i], [2 * i]], "int64")) for i in range(1, 4)]
    r.decorate_tensor_provider(lambda: iter(batches))
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(start)
    for _ in range(2):      # a reader can be restarted after EOF
        r.start()
        got = []
        try:
            while True:
                got.append([float(v.reshape(-1)[0]) for v in exe.run(main, fetch_list=[sx, sy])])
        except fluid.core.EOFException:
            r.reset()
        assert got == [[6.0 * i, 3.0 * i] for i in range(1, 4)]


def test_errors():
    with pytest.raises(ValueError, match="feed_list"):
        fluid.layers.create_py_reader_by_data(capacity=2, feed_list=[])
    with pytest.raises(TypeError, match="double_buffer"):
        fluid.layers.double_buffer(object())
