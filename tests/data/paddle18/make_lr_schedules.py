"""Paddle 1.8.5's values of every schedule in layers.learning_rate_scheduler over 20 steps (bit patterns of the
float32 learning rate each step), for tests/unit/test_lr_schedules_paddle18.py. Record (outside CI) with

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_lr_schedules.py
"""

import json
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
STEPS = 20


def _piecewise(L):
    return L.piecewise_decay([3, 7, 12], [0.1, 0.05, 0.011, 0.0013])


# name -> builder(fluid.layers) returning the learning-rate variable
CASES = {
    "exponential": lambda L: L.exponential_decay(0.7, 3, 0.96),
    "exponential_odd": lambda L: L.exponential_decay(0.123, 7, 0.5),
    "exponential_stair": lambda L: L.exponential_decay(0.7, 3, 0.96, staircase=True),
    "natural_exp": lambda L: L.natural_exp_decay(0.7, 3, 0.3),
    "natural_exp_stair": lambda L: L.natural_exp_decay(0.05, 4, 0.7, staircase=True),
    "inverse_time": lambda L: L.inverse_time_decay(0.7, 3, 0.3),
    "inverse_time_stair": lambda L: L.inverse_time_decay(0.1, 4, 0.7, staircase=True),
    "polynomial": lambda L: L.polynomial_decay(0.7, 13, end_learning_rate=0.013, power=1.3),
    "polynomial_linear": lambda L: L.polynomial_decay(0.1, 9),
    "polynomial_cycle": lambda L: L.polynomial_decay(0.7, 6, end_learning_rate=0.013, power=2.0, cycle=True),
    "piecewise": _piecewise,
    "noam": lambda L: L.noam_decay(512, 7),
    "noam_lr": lambda L: L.noam_decay(64, 5, learning_rate=0.37),
    "cosine": lambda L: L.cosine_decay(0.7, 3, 11),
    "warmup_scalar": lambda L: L.linear_lr_warmup(0.7, 6, 0.011, 0.7),
    "warmup_scalar_up": lambda L: L.linear_lr_warmup(0.1, 9, 1.0 / 3.0, 0.1),
    "warmup_exponential": lambda L: L.linear_lr_warmup(L.exponential_decay(0.7, 3, 0.96), 5, 0.0, 0.7),
    "warmup_piecewise": lambda L: L.linear_lr_warmup(_piecewise(L), 4, 0.02, 0.1),
    # the configurations of Paddle 1.8's own test_learning_rate_scheduler.py
    "p18_exponential_stair": lambda L: L.exponential_decay(1.0, 5, 0.5, staircase=True),
    "p18_exponential": lambda L: L.exponential_decay(1.0, 5, 0.5),
    "p18_natural_exp_stair": lambda L: L.natural_exp_decay(1.0, 5, 0.5, staircase=True),
    "p18_natural_exp": lambda L: L.natural_exp_decay(1.0, 5, 0.5),
    "p18_inverse_time_stair": lambda L: L.inverse_time_decay(1.0, 5, 0.5, staircase=True),
    "p18_inverse_time": lambda L: L.inverse_time_decay(1.0, 5, 0.5),
    "p18_polynomial_cycle": lambda L: L.polynomial_decay(1.0, 5, cycle=True),
    "p18_polynomial": lambda L: L.polynomial_decay(1.0, 5, cycle=False),
    "p18_piecewise": lambda L: L.piecewise_decay([3, 6, 9], [0.1, 0.2, 0.3, 0.4]),
    "p18_cosine": lambda L: L.cosine_decay(0.1, 100, 120),
    "p18_noam": lambda L: L.noam_decay(0.01, 200, 2.0),
    "p18_warmup_exponential": lambda L: L.linear_lr_warmup(L.exponential_decay(1.0, 5, 0.5), 10, 0.1 / 3., 0.1),
    "p18_warmup_noam": lambda L: L.linear_lr_warmup(L.noam_decay(0.01, 200, 2.0), 10, 0.1 / 3., 0.1),
    "p18_warmup_scalar": lambda L: L.linear_lr_warmup(0.2, 10, 0.1 / 3., 0.2),
    "p18_warmup_scalar_int_end": lambda L: L.linear_lr_warmup(2., 10, 0.1 / 3., 1),
    "p18_warmup_scalar_int": lambda L: L.linear_lr_warmup(1, 10, 0, 1),
}


def structure(fluid, name):
    """-> (op types in block order, persistable var names, the learning rate's name) of the schedule's program."""
    main, startup = fluid.Program(), fluid.Program()
    with fluid.unique_name.guard(), fluid.program_guard(main, startup):
        lr = CASES[name](fluid.layers)
    ops = [op.type for b in main.blocks for op in b.ops]
    return ops, sorted(v.name for v in main.list_vars() if v.persistable), lr.name


def run_case(fluid, name, steps=STEPS):
    """-> list of the learning rate's float32 values, one a step (the schedule's step counter starts at 0)."""
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        lr = CASES[name](fluid.layers)
    exe = fluid.Executor(fluid.CPUPlace())
    out = []
    with fluid.scope_guard(fluid.Scope()):
        exe.run(startup)
        for _ in range(steps):
            v, = exe.run(main, fetch_list=[lr])
            out.append(np.asarray(v, "float32").reshape(-1)[0])
    return np.array(out, "float32")


if __name__ == "__main__":
    import paddle.fluid as fluid
    rec = {}
    for name in CASES:
        vals = run_case(fluid, name)
        ops, persistable, lr_name = structure(fluid, name)
        rec[name] = {"bits": vals.view("uint32").tolist(), "values": ["%.9g" % v for v in vals],
                     "ops": ops, "persistable": persistable, "lr_name": lr_name}
    with open(os.path.join(HERE, "lr_schedules.json"), "w") as fh:
        json.dump({"steps": STEPS, "cases": rec}, fh, indent=0, sort_keys=True)
    print("wrote", len(rec), "schedules")
