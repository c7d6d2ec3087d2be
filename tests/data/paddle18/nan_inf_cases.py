"""Programs run with FLAGS_check_nan_inf=1: shared by make_nan_inf.py (Paddle 1.8.5) and
tests/unit/test_check_nan_inf.py. Python 3.7 compatible; `fluid` is passed in.

CASES: name -> (the PADDLE_INF_NAN_SKIP_* environment of the run, steps run). build(fluid, name) returns
(main, startup, feed, fetch var)."""

import numpy as np

STEPS = 3
CASES = {
    "log_negative": ({}, STEPS),                 # forward: log of a negative -> nan
    "div_by_zero": ({}, STEPS),                  # forward: x / 0 -> inf
    "log_float64": ({}, STEPS),
    "backward_param_grad": ({}, STEPS),          # forward finite, sqrt's gradient at 0 is inf
    "backward_inner_grad": ({}, STEPS),          # the first non-finite gradient is an intermediate one
    "optimizer": ({}, STEPS),                    # sgd's update overflows the parameter
    "lr_schedule": ({}, STEPS),                  # exponential_decay overflows at the third step
    "fed_nan": ({}, STEPS),                      # a fed nan is found in the first op that reads it
    "fed_nan_fetched_only": ({}, STEPS),         # ... and not at all when no op reads it
    "while_body": ({}, STEPS),                   # ops inside a while loop's body
    "int_output": ({"PADDLE_INF_NAN_SKIP_OP": "log"}, STEPS),    # integer outputs are not checked
    "skip_op": ({"PADDLE_INF_NAN_SKIP_OP": "sqrt_grad"}, STEPS),
    "skip_role_backward": ({"PADDLE_INF_NAN_SKIP_ROLE": "backward"}, STEPS),
    "skip_role_forward": ({"PADDLE_INF_NAN_SKIP_ROLE": "forward"}, STEPS),
    "skip_role_optimize": ({"PADDLE_INF_NAN_SKIP_ROLE": "optimize"}, STEPS),
    "skip_var": ({"PADDLE_INF_NAN_SKIP_VAR": "sqrt_grad:w@GRAD"}, STEPS),
}
# the program each case runs (several cases run one program under different skip settings)
PROGRAM = {"skip_op": "backward_param_grad", "skip_role_backward": "backward_param_grad",
           "skip_role_forward": "div_by_zero", "skip_role_optimize": "optimizer",
           "skip_var": "backward_param_grad"}


def build(fluid, name):
    name = PROGRAM.get(name, name)
    L = fluid.layers
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        x = fluid.data("x", [None, 3], "float32")
        ones = np.ones((2, 3), "float32")

        def param(value):
            return L.create_parameter([3], "float32", name="w",
                                      default_initializer=fluid.initializer.Constant(value))

        if name == "log_negative":
            out, feed = L.reduce_sum(L.log(x)), {"x": np.array([[1, -1, 2]], "float32")}
        elif name == "div_by_zero":
            out, feed = L.reduce_sum(L.elementwise_div(x, L.zeros([3], "float32"))), {"x": ones}
        elif name == "log_float64":
            x64 = fluid.data("x64", [None, 3], "float64")
            out, feed = L.log(x64), {"x64": np.array([[1, -1, 2]], "float64")}
        elif name == "backward_param_grad":
            out = L.reduce_sum(L.elementwise_mul(x, L.sqrt(param(0.0))))
            fluid.optimizer.SGD(0.1).minimize(out)
            feed = {"x": ones}
        elif name == "backward_inner_grad":
            h = L.elementwise_mul(x, param(1.0))
            out = L.reduce_sum(L.scale(L.sqrt(h), 0.0))
            fluid.optimizer.SGD(0.1).minimize(out)
            feed = {"x": np.zeros((2, 3), "float32")}
        elif name == "optimizer":
            out = L.reduce_sum(L.elementwise_mul(x, param(1.0)))
            fluid.optimizer.SGD(1e38).minimize(out)
            feed = {"x": np.full((2, 3), 10.0, "float32")}
        elif name == "lr_schedule":
            out = L.reduce_sum(L.elementwise_mul(x, param(1.0)))
            fluid.optimizer.SGD(L.exponential_decay(1.0, 1, 1e30)).minimize(out)
            feed = {"x": ones}
        elif name == "fed_nan":
            out, feed = L.scale(x, 2.0), {"x": np.array([[1, np.nan, 2]], "float32")}
        elif name == "fed_nan_fetched_only":
            out, feed = x, {"x": np.array([[1, np.nan, 2]], "float32")}
        elif name == "while_body":
            i = L.fill_constant([1], "int64", 0)
            n = L.fill_constant([1], "int64", 2)
            acc = L.scale(x, 1.0)
            cond = L.less_than(i, n)
            loop = L.While(cond)
            with loop.block():
                L.assign(L.log(acc), acc)
                L.increment(i, in_place=True)
                L.less_than(i, n, cond=cond)
            out, feed = acc, {"x": np.array([[0.5, 2, 2]], "float32")}
        elif name == "int_output":
            out, feed = L.cast(L.log(x), "int64"), {"x": np.array([[1, -1, 2]], "float32")}
        else:
            raise KeyError(name)
    return main, startup, feed, out
