"""py_reader.queue fed by the script (no data source, no start()), shared by make_py_reader_queue.py (real
Paddle 1.8.5) and the unit tests. Kept Python 3.7 compatible: Paddle 1.8.5 runs it.
"""

import threading

import numpy as np


def _batches(n):
    rs = np.random.RandomState(7)
    out = []
    for i in range(n):
        rows = 2 + i % 3
        out.append((rs.uniform(-1, 1, (rows, 3)).astype("float32"), rs.randint(0, 5, (rows, 1)).astype("int64")))
    return out


def run(fluid, threaded):
    """Pushes 5 batches (from a thread, or all before the first run), closes the queue, and runs the
    program until EOFException: what each run fetched, and what the queue said along the way."""
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        reader = fluid.layers.py_reader(capacity=8, shapes=[(-1, 3), (-1, 1)], dtypes=["float32", "int64"],
                                        lod_levels=[0, 0])
        x, label = fluid.layers.read_file(reader)
        y = fluid.layers.fc(x, size=2, param_attr=fluid.ParamAttr(initializer=fluid.initializer.Constant(0.5)),
                            bias_attr=fluid.ParamAttr(initializer=fluid.initializer.Constant(0.25)))
        s = fluid.layers.reduce_sum(y) + fluid.layers.reduce_sum(fluid.layers.cast(label, "float32"))
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(start)
    q = reader.queue
    info = {"capacity": int(q.capacity())}
    arrays = []
    for xs, ls in _batches(5):
        arr = fluid.LoDTensorArray()
        for a in (xs, ls):
            t = fluid.LoDTensor()
            t.set(a, fluid.CPUPlace())
            arr.append(t)
        arrays.append(arr)

    pushed = []

    def feed():
        for arr in arrays:
            pushed.append(bool(q.push(arr)))
        q.close()
    if threaded:
        th = threading.Thread(target=feed)
        th.start()
    else:
        feed()
        info["size_after_push"] = int(q.size())
    outs = []
    try:
        while True:
            xv, lv, sv = exe.run(main, fetch_list=[x, label, s])
            outs.append({"x": np.array(xv).tolist(), "label": np.array(lv).ravel().tolist(),
                         "s": float(np.array(sv).ravel()[0])})
    except fluid.core.EOFException:
        info["eof"] = True
    if threaded:
        th.join()
    info["pushed"] = pushed
    info["runs"] = outs
    return info


def two_passes(fluid):
    """Push, close, read to EOFException, reset(): the queue is open and empty again for a second pass."""
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        reader = fluid.layers.py_reader(capacity=4, shapes=[(-1, 2)], dtypes=["float32"])
        x = fluid.layers.read_file(reader)
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(start)
    q = reader.queue
    passes = []
    for p in range(2):
        for i in range(2):
            arr = fluid.LoDTensorArray()
            t = fluid.LoDTensor()
            t.set(np.full((1, 2), i + 10 * p, "float32"), fluid.CPUPlace())
            arr.append(t)
            q.push(arr)
        q.close()
        got = []
        try:
            while True:
                got.append(np.array(exe.run(main, fetch_list=[x])[0]).tolist())
        except fluid.core.EOFException:
            pass
        passes.append(got)
        reader.reset()
    return passes


def cases(fluid):
    return {"single_thread": run(fluid, False), "threaded": run(fluid, True), "two_passes": two_passes(fluid)}
