"""Models and checkpoints for the RecomputeOptimizer programs: shared by the recording script
(make_recompute.py, run with Paddle 1.8.5) and tests/unit/test_recompute_paddle18.py. Python 3.7 compatible.
"""

import numpy as np

X = np.random.RandomState(1).uniform(-1, 1, (6, 4)).astype("float32")
Y = np.random.RandomState(2).uniform(-1, 1, (6, 1)).astype("float32")

# case -> (dropout seeds (None: unseeded), names of the checkpoint layers, optimizer)
CASES = {
    "mlp_two_checkpoints": ((None, 7), ["h1", "h2"], "sgd"),
    "mlp_one_checkpoint": ((None, 7), ["h2"], "sgd"),
    "mlp_out_of_order": ((3, 7), ["h3", "h1"], "adam"),
    "mlp_input_checkpoint": ((3, None), ["x", "h2"], "sgd"),
    "mlp_no_dropout": (None, ["h1", "h3"], "momentum"),
}


def net(fluid, seeds):
    """fc(4->8, relu) [dropout] -> fc(8->8, tanh) [dropout] -> fc(8->8, relu) -> fc(8->1); mean square error.
    Returns {name: Variable} with x, h1, h2, h3, loss."""
    init = fluid.initializer.ConstantInitializer
    x = fluid.layers.data("x", shape=[4], dtype="float32")
    y = fluid.layers.data("y", shape=[1], dtype="float32")

    def fc(inp, size, act, k):
        w = np.random.RandomState(10 + k).uniform(-0.5, 0.5, (int(inp.shape[1]), size)).astype("float32")
        return fluid.layers.fc(inp, size, act=act,
                               param_attr=fluid.ParamAttr("w%d" % k,
                                                          initializer=fluid.initializer.NumpyArrayInitializer(w)),
                               bias_attr=fluid.ParamAttr("b%d" % k, initializer=init(0.01 * k)))
    h1 = fc(x, 8, "relu", 1)
    d1 = fluid.layers.dropout(h1, 0.3, seed=seeds[0], name="drop1") if seeds else h1
    h2 = fc(d1, 8, "tanh", 2)
    d2 = fluid.layers.dropout(h2, 0.5, seed=seeds[1], name="drop2") if seeds else h2
    h3 = fc(d2, 8, "relu", 3)
    pred = fc(h3, 1, None, 4)
    loss = fluid.layers.mean(fluid.layers.square(pred - y))
    return {"x": x, "h1": h1, "h2": h2, "h3": h3, "loss": loss}


def optimizer(fluid, kind):
    O = fluid.optimizer
    return {"sgd": lambda: O.SGD(0.1), "adam": lambda: O.Adam(0.05),
            "momentum": lambda: O.Momentum(0.1, 0.9)}[kind]()


def build(fluid, case, recompute=True):
    """Builds the case in the current program; returns the loss. recompute=False: the inner optimizer alone."""
    seeds, checkpoints, kind = CASES[case]
    v = net(fluid, seeds)
    opt = optimizer(fluid, kind)
    if recompute:
        opt = fluid.optimizer.RecomputeOptimizer(opt)
        opt._set_checkpoints([v[n] for n in checkpoints])
    opt.minimize(v["loss"])
    return v["loss"]
