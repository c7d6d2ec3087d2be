"""Paddle 1.8.5's numbers for py_func, create_py_reader_by_data + double_buffer, and a tensor file written by
its save op for load (io_more family). Record (outside CI) with

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_io_more.py
"""

import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from parity_harness import Case, rand  # noqa: E402

X = rand((3, 4), 71)
Y = rand((3, 4), 72)
LOAD_VALUE = rand((2, 3), 73)
LOAD_DIR = os.path.join(HERE, "io_more_saved")


def np_tanh(x):
    return np.tanh(np.array(x))


def np_tanh_grad(out, dout):      # x is skipped: called with (out, dout)
    out = np.array(out)
    return np.array(dout) * (1 - out * out)


def np_mul_add(x, y):
    x, y = np.array(x), np.array(y)
    return x * y + 1.0, (x - y).astype("float32")


def np_mul_add_grad(x, y, o1, o2, d1, d2):
    x, y, d1, d2 = np.array(x), np.array(y), np.array(d1), np.array(d2)
    return d1 * y + d2, d1 * x - d2


def _out(f, name, shape):
    return f.default_main_program().current_block().create_var(name=name, dtype="float32", shape=shape)


def _tanh(f, x):
    o = _out(f, "py_tanh_out", [3, 4])
    f.layers.py_func(np_tanh, x, o, backward_func=np_tanh_grad, skip_vars_in_backward_input=x)
    return f.layers.scale(o, 2.0)


def _two(f, x, y):
    o1, o2 = _out(f, "py_o1", [3, 4]), _out(f, "py_o2", [3, 4])
    f.layers.py_func(np_mul_add, [x, y], [o1, o2], backward_func=np_mul_add_grad)
    return [o1, o2]


def _fwd_only(f, x):
    o = _out(f, "py_fwd_out", [3, 4])
    f.layers.py_func(np_tanh, x, o)
    return o


CASES = [
    Case("py_func_tanh", [("x", X)], _tanh),
    Case("py_func_two", [("x", X), ("y", Y)], _two, grad_outs=(0, 1)),
    Case("py_func_forward_only", [("x", X)], _fwd_only, grad=False),
]


def reader_run(fluid):
    """Sums of 3 batches read through create_py_reader_by_data + double_buffer, then the EOF."""
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data("rx", shape=[3], dtype="float32")
        py_reader = fluid.layers.create_py_reader_by_data(4, [x])
        x_read = fluid.layers.read_file(fluid.layers.double_buffer(py_reader))
        s = fluid.layers.reduce_sum(x_read * 2.0)

    def batches():
        for i in range(3):
            yield [np.full((2, 3), i + 0.5, "float32")]
    py_reader.decorate_tensor_provider(batches)
    exe = fluid.Executor(fluid.CPUPlace())
    out = []
    exe.run(startup)           # the global scope: Paddle's reader queue lives there
    py_reader.start()
    try:
        for _ in range(10):
            out.append(float(np.asarray(exe.run(main, fetch_list=[s])[0]).reshape(-1)[0]))
    except fluid.core.EOFException:
        py_reader.reset()
    return out


if __name__ == "__main__":
    import paddle.fluid as fluid
    from parity_harness import record
    record(fluid, CASES, os.path.join(HERE, "io_more.npz"))
    # A tensor file in Paddle's save-op format, for the load layer's test.
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        v = fluid.layers.create_global_var([2, 3], 0.0, "float32", persistable=True, name="saved_tensor")
    exe = fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(fluid.Scope()):
        exe.run(startup)
        fluid.global_scope().find_var("saved_tensor").get_tensor().set(LOAD_VALUE, fluid.CPUPlace())
        fluid.io.save_vars(exe, LOAD_DIR, main, vars=[v])
    with open(os.path.join(HERE, "io_more.json"), "w") as fh:
        json.dump({"reader_sums": reader_run(fluid)}, fh)
    print(os.listdir(LOAD_DIR))
