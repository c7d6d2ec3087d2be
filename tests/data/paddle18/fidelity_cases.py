"""Edge-case inputs where Paddle 1.8's kernels clip or add epsilons, shared by the recording script
(make_fidelity.py, run with Paddle 1.8.5) and the test (tests/unit/test_fidelity_paddle18.py).

Each case builds `out = f(inputs)` with the `fluid` module it is given; the recorded numbers are the forward
output and the gradient of sum(out * w) (w fixed) with respect to each float input. Python 3.7 compatible.
"""

import numpy as np


def _f(a):
    return np.array(a, dtype="float32")


LOGITS = _f([[0.0, -100.0, 1.0], [0.0, -1000.0, -70.0], [1.0, 2.0, 3.0], [50.0, -50.0, 0.0]])
PROBS = _f([[0.2, 0.3, 0.5], [0.0, 1.0, 0.0], [1e-30, 0.5, 0.5], [0.1, 0.1, 0.8]])
HARD = np.array([[1], [0], [0], [2]], dtype="int64")
SOFT = _f([[0.1, 0.8, 0.1], [0.5, 0.25, 0.25], [0.0, 0.0, 1.0], [1 / 3.0, 1 / 3.0, 1 / 3.0]])
BIG = _f([[-100.0, -20.0, 0.0], [0.5, 20.0, 100.0], [-1.0, 1.0, 3.0], [1e-3, -1e-3, 40.0]])
BIN = _f([[0.0, 1.0, 1.0], [1.0, 0.0, 1.0], [0.0, 0.0, 1.0], [1.0, 1.0, 0.0]])
NEARCONST = _f([[1.0, 1.0 + 1e-4, 1.0 - 1e-4], [2.0, 2.0, 2.0], [0.0, 1e-3, 2e-3], [5.0, -5.0, 0.0]])
POS = _f([[1e-30, 1e-3, 1.0], [2.0, 1e10, 0.5], [3.0, 4.0, 5.0], [1e-6, 1e-12, 7.0]])
PRED01 = _f([[0.0, 1.0, 0.5], [1e-6, 1 - 1e-6, 0.3], [0.9, 0.1, 0.2], [0.4, 0.6, 1.0]])
NCHW = (np.arange(2 * 3 * 2 * 2, dtype="float32").reshape(2, 3, 2, 2) % 5) * 1e-3


def cases(fluid):
    """name -> (inputs {name: array}, grad input names, build(vars) -> out)."""
    L = fluid.layers

    def swce(soft):
        def b(v):
            return L.softmax_with_cross_entropy(v["x"], v["label"], soft_label=soft)
        return b

    def bn(v):
        return L.batch_norm(v["x"], epsilon=1e-5,
                            param_attr=fluid.ParamAttr(initializer=fluid.initializer.Constant(1.5)),
                            bias_attr=fluid.ParamAttr(initializer=fluid.initializer.Constant(0.25)))

    def ln(v):
        return L.layer_norm(v["x"], begin_norm_axis=1,
                            param_attr=fluid.ParamAttr(initializer=fluid.initializer.Constant(1.5)),
                            bias_attr=fluid.ParamAttr(initializer=fluid.initializer.Constant(0.25)))

    return {
        "softmax": ({"x": LOGITS}, ["x"], lambda v: L.softmax(v["x"])),
        "softmax_axis0": ({"x": LOGITS}, ["x"], lambda v: L.softmax(v["x"], axis=0)),
        "swce_hard": ({"x": LOGITS, "label": HARD}, ["x"], swce(False)),
        "swce_soft": ({"x": LOGITS, "label": SOFT}, ["x"], swce(True)),
        "cross_entropy_hard": ({"x": PROBS, "label": HARD}, [], lambda v: L.cross_entropy(v["x"], v["label"])),
        "cross_entropy_soft": ({"x": PROBS, "label": SOFT}, [],
                               lambda v: L.cross_entropy(v["x"], v["label"], soft_label=True)),
        "sigmoid_ce": ({"x": BIG, "label": BIN}, ["x"],
                       lambda v: L.sigmoid_cross_entropy_with_logits(v["x"], v["label"])),
        "sigmoid": ({"x": BIG}, ["x"], lambda v: L.sigmoid(v["x"])),
        "logsigmoid": ({"x": BIG}, ["x"], lambda v: L.logsigmoid(v["x"])),
        "softplus": ({"x": BIG}, ["x"], lambda v: L.softplus(v["x"])),
        "tanh": ({"x": BIG}, ["x"], lambda v: L.tanh(v["x"])),
        "log": ({"x": POS}, ["x"], lambda v: L.log(v["x"])),
        "sqrt": ({"x": POS}, ["x"], lambda v: L.sqrt(v["x"])),
        "log_loss": ({"x": PRED01.reshape(12, 1), "label": BIN.reshape(12, 1)}, ["x"],
                     lambda v: L.log_loss(v["x"], v["label"])),
        "l2_normalize": ({"x": NEARCONST * 1e-7}, ["x"], lambda v: L.l2_normalize(v["x"], axis=1)),
        "layer_norm": ({"x": NEARCONST}, ["x"], ln),
        "batch_norm": ({"x": NCHW}, ["x"], bn),
    }
