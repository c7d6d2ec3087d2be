"""Small helpers for single-process unit tests."""

import numpy as np

import paddle_compat as fluid


def run(fetch, feed=None, startup=True, program=None):
    """Run the default startup program (once) and the main program; return the fetched arrays."""
    exe = fluid.Executor(fluid.CPUPlace())
    if startup:
        exe.run(fluid.default_startup_program())
    fetch = fetch if isinstance(fetch, (list, tuple)) else [fetch]
    return exe.run(program or fluid.default_main_program(), feed=feed or {}, fetch_list=list(fetch))


def param(name):
    return np.array(fluid.global_scope().find_var(name).get_tensor())


def rand(*shape, seed=0, low=-1.0, high=1.0):
    return np.random.RandomState(seed).uniform(low, high, shape).astype(np.float32)


def numeric_grad(f, x, eps=1e-3):
    """Central differences of scalar f at x (float64 accumulation)."""
    g = np.zeros_like(x, dtype=np.float64)
    flat = x.reshape(-1)
    for i in range(flat.size):
        old = flat[i]
        flat[i] = old + eps
        hi = f(x)
        flat[i] = old - eps
        lo = f(x)
        flat[i] = old
        g.reshape(-1)[i] = (hi - lo) / (2 * eps)
    return g


INIT_OPS = ("fill_constant", "uniform_random", "gaussian_random", "truncated_gaussian_random", "assign_value")


def startup_order(op_types):
    """A startup op list with its initializer ops sorted: Paddle 1.8 prepends each initializer op (newest
    first), Paddle 3.x appends them, and we prepend only the deterministic ones; the initializers write
    independent variables, so their order does not matter, while every other op's order does."""
    inits = sorted(t for t in op_types if t in INIT_OPS)
    return inits + [t for t in op_types if t not in INIT_OPS]
