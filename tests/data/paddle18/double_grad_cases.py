"""Gradients of gradients (fluid.gradients over a program that already holds a backward), shared by
make_double_grad.py (run under Paddle 1.8.5) and tests/unit/test_double_grad_paddle18.py. Each case builds
its program with the `fluid` given and returns (main, startup, feed, {label: fetched Variable or name})."""

import numpy as np

X = (np.arange(12, dtype="float32").reshape(4, 3) - 5.0) / 7.0
W = np.array([[0.3, -0.2], [0.1, 0.4], [-0.5, 0.25]], "float32")
B = np.array([0.05, -0.1], "float32")


def square_sub(fluid, twice=False):
    """Paddle's test_calc_gradient test1: z = (x - dx^2/dx)^2, dz/dx = 2x = 6 at x = 3."""
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.create_parameter(name="x", shape=[1], dtype="float32",
                                          default_initializer=fluid.initializer.Constant(3))
        g1, = fluid.gradients(x * x, x)
        d = x - g1
        g2, = fluid.gradients((x - g1) * (x - g1) if twice else d * d, x)
    return main, startup, {}, {"g1": g1.name, "g2": g2.name}


def square_sub_twice(fluid):
    """The same z with x - dx^2/dx written twice (two elementwise_sub ops reading x@GRAD): Paddle 1.8.5 gives
    9, not 6 (z is x^2 whatever the ops)."""
    return square_sub(fluid, True)


def penalty(fluid, act=None):
    """A gradient penalty: gx = d(sum(act(fc(x))^2))/dx, pen = mean(gx^2); d pen / d (w, b)."""
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data(name="x", shape=[4, 3], dtype="float32")
        x.stop_gradient = False
        h = fluid.layers.fc(x, size=2, act=act,
                            param_attr=fluid.ParamAttr(name="w", initializer=fluid.initializer.NumpyArrayInitializer(W)),
                            bias_attr=fluid.ParamAttr(name="b", initializer=fluid.initializer.NumpyArrayInitializer(B)))
        y = fluid.layers.reduce_sum(h * h)
        gx, = fluid.gradients(y, x)
        pen = fluid.layers.reduce_mean(gx * gx)
        gw, gb = fluid.gradients(pen, [main.global_block().var("w"), main.global_block().var("b")])
    fetch = {"gx": gx, "pen": pen, "gw": gw, "gb": gb}
    return main, startup, {"x": X}, {k: v for k, v in fetch.items() if v is not None}


def penalty_tanh(fluid):
    """The penalty through tanh: Paddle 1.8.5 has no second derivative of tanh (no tanh_grad_grad), so its
    d pen / d b is None and its d pen / d w misses the terms through tanh'' (finite differences show it)."""
    return penalty(fluid, "tanh")


def penalty_sgd(fluid):
    """Two SGD steps on mean(fc(x)) + the gradient penalty above (minimize after fluid.gradients)."""
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data(name="x", shape=[4, 3], dtype="float32")
        x.stop_gradient = False
        h = fluid.layers.fc(x, size=2,
                            param_attr=fluid.ParamAttr(name="w", initializer=fluid.initializer.NumpyArrayInitializer(W)),
                            bias_attr=fluid.ParamAttr(name="b", initializer=fluid.initializer.NumpyArrayInitializer(B)))
        gx, = fluid.gradients(fluid.layers.reduce_sum(h * h), x)
        loss = fluid.layers.reduce_mean(h) + fluid.layers.reduce_mean(gx * gx)
        fluid.optimizer.SGD(0.5).minimize(loss)
    return main, startup, {"x": X}, {"loss": loss, "w": "w", "b": "b"}


CASES = {"square_sub": (square_sub, 1), "square_sub_twice": (square_sub_twice, 1), "penalty": (penalty, 1), "penalty_tanh": (penalty_tanh, 1),
         "penalty_sgd": (penalty_sgd, 2)}


def run(fluid, name):
    """{label: [value per step]} of case `name`."""
    build, steps = CASES[name]
    main, startup, feed, fetch = build(fluid)
    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(scope):
        exe.run(startup)
        out = {k: [] for k in fetch}
        for _ in range(steps):
            vals = exe.run(main, feed=feed, fetch_list=list(fetch.values()))
            for k, v in zip(fetch, vals):
                out[k].append(np.array(v).tolist())
    return out
