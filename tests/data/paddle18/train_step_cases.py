"""Small whole training steps (conv + batch_norm residual blocks with Momentum, an MLP with SGD, batch_norm
corner cases) shared by the recording script (make_train_step.py, run with Paddle 1.8.5) and
tests/unit/test_train_step_paddle18.py. They hold the lowering's grouped optimizer updates, its batch_norm and
its freeing of activations before the backward to Paddle's numbers. Python 3.7 compatible.
"""

import numpy as np

STEPS = 4
_rs = np.random.RandomState(7)
IMG = _rs.uniform(-1, 1, (4, 3, 8, 8)).astype("float32")
LABEL = _rs.randint(0, 5, (4, 1)).astype("int64")
VEC = _rs.uniform(-1, 1, (6, 7)).astype("float32")
VEC_LABEL = _rs.randint(0, 3, (6, 1)).astype("int64")


def _w(shape, seed):
    rs = np.random.RandomState(seed)
    fan_in = int(np.prod(shape[1:])) if len(shape) == 4 else shape[0]
    return (rs.uniform(-1, 1, shape) * np.sqrt(3.0 / fan_in)).astype("float32")


def _conv_bn(fluid, x, cin, cout, k, stride, act, seed, layout="NCHW"):
    init = fluid.initializer.NumpyArrayInitializer
    c = fluid.layers.conv2d(x, num_filters=cout, filter_size=k, stride=stride, padding=(k - 1) // 2,
                            bias_attr=False, param_attr=fluid.ParamAttr(initializer=init(_w((cout, cin, k, k), seed))))
    return fluid.layers.batch_norm(c, act=act, data_layout=layout)


def resnet_mini(fluid):
    """conv-bn-relu, a basic block (8 -> 8), a basic block (8 -> 16, stride 2, 1x1 conv-bn shortcut), global
    avg pool, fc softmax, cross_entropy, mean. Returns (loss, first conv-bn output)."""
    x = fluid.layers.data("img", shape=[3, 8, 8], dtype="float32")
    y = fluid.layers.data("label", shape=[1], dtype="int64")
    h = stem = _conv_bn(fluid, x, 3, 8, 3, 1, "relu", 1)
    for cin, cout, stride, seed in ((8, 8, 1, 10), (8, 16, 2, 20)):
        t = _conv_bn(fluid, h, cin, cout, 3, stride, "relu", seed)
        t = _conv_bn(fluid, t, cout, cout, 3, 1, None, seed + 1)
        short = _conv_bn(fluid, h, cin, cout, 1, stride, None, seed + 2) if cin != cout else h
        h = fluid.layers.elementwise_add(t, short, act="relu")
    pool = fluid.layers.pool2d(h, pool_type="avg", global_pooling=True)
    init = fluid.initializer.NumpyArrayInitializer
    pred = fluid.layers.fc(pool, 5, act="softmax", param_attr=fluid.ParamAttr(initializer=init(_w((16, 5), 30))))
    return fluid.layers.mean(fluid.layers.cross_entropy(pred, y)), stem


def mlp(fluid):
    init = fluid.initializer.NumpyArrayInitializer
    x = fluid.layers.data("vec", shape=[7], dtype="float32")
    y = fluid.layers.data("vec_label", shape=[1], dtype="int64")
    h = fluid.layers.fc(x, 5, act="relu", param_attr=fluid.ParamAttr(initializer=init(_w((7, 5), 40))))
    pred = fluid.layers.fc(h, 3, act="softmax", param_attr=fluid.ParamAttr(initializer=init(_w((5, 3), 41))))
    return fluid.layers.mean(fluid.layers.cross_entropy(pred, y)), h


def bn_corner(layout, n):
    """batch_norm over [n, 4, 1, 1] (one value per channel when n == 1) or NHWC [4, 3, 3, 2], then a
    square loss, SGD."""
    def build(fluid):
        shape = [3, 3, 2] if layout == "NHWC" else [4, 1, 1]
        x = fluid.layers.data("bn_x", shape=shape, dtype="float32")
        x.stop_gradient = False
        y = fluid.layers.batch_norm(x, data_layout=layout, momentum=0.8, epsilon=1e-3)
        return fluid.layers.mean(fluid.layers.square(y - 0.5) * fluid.layers.reduce_sum(x)), y
    return build


def feeds(name):
    if name.startswith("bn_nhwc"):
        return {"bn_x": (np.arange(4 * 3 * 3 * 2, dtype="float32").reshape(4, 3, 3, 2) % 7) / 3.0 - 1.0}
    if name.startswith("bn_single"):
        return {"bn_x": np.array([[[[0.5]], [[-1.0]], [[2.0]], [[0.25]]]], dtype="float32")}
    if name.startswith("mlp"):
        return {"vec": VEC, "vec_label": VEC_LABEL}
    return {"img": IMG, "label": LABEL}


def cases(fluid):
    """name -> (build(fluid) -> (loss, an intermediate to fetch), make the optimizer)."""
    O = fluid.optimizer
    return {
        "resnet_momentum": (resnet_mini, lambda: O.Momentum(0.05, 0.9)),
        "resnet_momentum_piecewise_l2": (resnet_mini, lambda: O.Momentum(
            fluid.layers.piecewise_decay([1, 3], [0.1, 0.05, 0.01]), 0.9,
            regularization=fluid.regularizer.L2Decay(1e-3))),
        "resnet_nesterov": (resnet_mini, lambda: O.Momentum(0.05, 0.9, use_nesterov=True)),
        "mlp_sgd": (mlp, lambda: O.SGD(0.2)),
        "mlp_sgd_exp_decay": (mlp, lambda: O.SGD(fluid.layers.exponential_decay(0.2, 2, 0.5))),
        "bn_nhwc_sgd": (bn_corner("NHWC", 4), lambda: O.SGD(0.1)),
        "bn_single_value_sgd": (bn_corner("NCHW", 1), lambda: O.SGD(0.1)),
    }
