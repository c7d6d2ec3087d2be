"""fluid.install_check.run_check(): train one tiny program to show the installation works."""
import numpy as np

from . import layers, optimizer
from ..ir import CPUPlace, Program, Scope, program_guard, scope_guard, unique_name
from .executor import Executor

__all__ = ["run_check"]


def run_check():
    print("Running Verify Fluid Program ... ")
    main, startup = Program(), Program()
    with scope_guard(Scope()), program_guard(main, startup), unique_name.guard():
        x = layers.data(name="inp", shape=[2, 2], append_batch_size=False)
        loss = layers.reduce_sum(layers.fc(x, 3))
        optimizer.SGD(learning_rate=0.01).minimize(loss)
        exe = Executor(CPUPlace())
        exe.run(startup)
        out, = exe.run(main, feed={"inp": np.array([[1.0, 2.0], [3.0, 4.0]], "float32")}, fetch_list=[loss])
    if not np.isfinite(out).all():
        raise RuntimeError("install check: the test program produced %s" % (out,))
    print("Your Paddle Fluid works well on SINGLE GPU or CPU.")
    print("Your Paddle Fluid is installed successfully! Let's start deep Learning with Paddle Fluid now")
