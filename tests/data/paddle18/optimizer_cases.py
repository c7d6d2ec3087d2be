"""A small fixed model trained a few steps by each optimizer: shared by the recording script
(make_optimizers.py, run with Paddle 1.8.5) and tests/unit/test_optimizers_paddle18.py. Python 3.7 compatible.
"""

import numpy as np

X = (np.arange(12, dtype="float32").reshape(4, 3) - 5.5) / 4.0
Y = np.array([[0.5], [-1.0], [1.5], [0.25]], dtype="float32")
W1 = (np.arange(6, dtype="float32").reshape(3, 2) - 2.5) / 5.0
B1 = np.array([0.1, -0.2], dtype="float32")
W2 = np.array([[0.7], [-0.4]], dtype="float32")
B2 = np.array([0.05], dtype="float32")
PARAMS = ["w1", "b1", "w2", "b2"]
STEPS = 5


def build(fluid):
    """The model: fc(3->2, tanh) -> fc(2->1), loss = mean((pred - y)^2). Returns the loss variable."""
    init = fluid.initializer.NumpyArrayInitializer
    x = fluid.layers.data("x", shape=[4, 3], dtype="float32", append_batch_size=False)
    y = fluid.layers.data("y", shape=[4, 1], dtype="float32", append_batch_size=False)
    h = fluid.layers.fc(x, 2, act="tanh", param_attr=fluid.ParamAttr("w1", initializer=init(W1)),
                        bias_attr=fluid.ParamAttr("b1", initializer=init(B1)))
    pred = fluid.layers.fc(h, 1, param_attr=fluid.ParamAttr("w2", initializer=init(W2)),
                           bias_attr=fluid.ParamAttr("b2", initializer=init(B2)))
    return fluid.layers.mean(fluid.layers.square(pred - y))


def optimizers(fluid):
    """name -> a function making the optimizer (called inside the program guard)."""
    O = fluid.optimizer
    return {
        "momentum": lambda: O.Momentum(0.1, 0.9),
        "adam_big_eps": lambda: O.Adam(0.05, epsilon=0.1),
        "adagrad_big_eps": lambda: O.Adagrad(0.1, epsilon=0.1),
        "rmsprop_centered": lambda: O.RMSProp(0.05, epsilon=0.1, momentum=0.5, centered=True),
        "adamax_big_eps": lambda: O.Adamax(0.05, epsilon=0.1),
        "ftrl": lambda: O.Ftrl(0.1, l1=0.01, l2=0.5),
        "ftrl_power": lambda: O.Ftrl(0.1, l1=0.0, lr_power=-0.6),
        "decayed_adagrad": lambda: O.DecayedAdagrad(0.1, decay=0.9),
        "adadelta": lambda: O.Adadelta(0.1, epsilon=1e-3, rho=0.9),
        "lamb": lambda: O.Lamb(0.05, lamb_weight_decay=0.02),
        "lars_momentum": lambda: O.LarsMomentum(0.1, 0.9, lars_coeff=0.01, lars_weight_decay=0.001),
        "dpsgd": lambda: O.Dpsgd(0.1, clip=0.5, batch_size=4.0, sigma=0.0),
    }
