"""LoDTensor.set from numpy does not load torch: the value is kept and becomes a tensor when first read.
Paddle's distributed op tests fill a forked server's table this way before its exe.run announces the port,
and give it 5 s; loading torch there (seconds on a busy machine) made them miss the announcement."""

import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CHILD = r'''
import sys
import numpy as np
import paddle.fluid as fluid
scope = fluid.core.Scope()
t = scope.var("table").get_tensor()
t.set(np.arange(6, dtype="float32").reshape(2, 3), fluid.CPUPlace())
scope.var("ints").get_tensor().set([[1, 2]], fluid.CPUPlace())
s2 = fluid.core.Scope()
s2.var("x").get_tensor().set(np.array([[1.0, 2.0]], dtype="float32"), fluid.CPUPlace())
print("TORCH_AFTER_SET", "torch" in sys.modules)
prog = fluid.Program()
with fluid.program_guard(prog, fluid.Program()):
    x = prog.global_block().create_var(name="x", shape=[1, 2], dtype="float32", persistable=True)
    y = fluid.layers.scale(x, scale=3.0)
print("RUN", fluid.Executor(fluid.CPUPlace()).run(prog, scope=s2, fetch_list=[y])[0].tolist())
print("VALUE", np.array(t).tolist(), np.array(scope.find_var("ints").get_tensor()).dtype, t.shape())
print("TORCH_AFTER_READ", "torch" in sys.modules)
'''


def test_set_keeps_numpy_until_read():
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = dict(l.split(" ", 1) for l in out.stdout.splitlines())
    assert lines["TORCH_AFTER_SET"] == "False", out.stdout
    assert lines["VALUE"] == "[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]] int64 [2, 3]", out.stdout
    assert lines["TORCH_AFTER_READ"] == "True", out.stdout
    assert lines["RUN"] == "[[3.0, 6.0]]", out.stdout

