"""The data, initial weights and models of ../shared/reference (real PaddlePaddle 3.3.1 measurements).

Regenerated from the recipe in the reference README (nothing large is committed). The reference numbers
themselves are copied into tests/data/ so the tests run from a clean checkout.
"""

import json
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
N = 32 * 200
BATCH = 32


def load_reference(name="single_process_losses.json"):
    with open(os.path.join(HERE, "data", name)) as f:
        return json.load(f)


def make_data():
    rng = np.random.RandomState(0)
    fit_x = rng.uniform(-1, 1, (N, 13)).astype(np.float32)
    w_true = rng.randn(13, 1).astype(np.float32)
    fit_y = (fit_x @ w_true + 0.5 + 0.1 * rng.randn(N, 1)).astype(np.float32)
    mnist_x = rng.uniform(0, 1, (N, 784)).astype(np.float32)
    teacher = rng.randn(784, 10).astype(np.float32)
    mnist_y = np.argmax((mnist_x - 0.5) @ teacher, axis=1).astype(np.int64).reshape(N, 1)
    return fit_x, fit_y, mnist_x, mnist_y


def make_init():
    rng = np.random.RandomState(1)
    fit_w = (0.1 * rng.randn(13, 1)).astype(np.float32)
    fit_b = np.zeros(1, np.float32)
    mlp = []
    for fan_in, fan_out in [(784, 200), (200, 200), (200, 10)]:
        lim = np.sqrt(6.0 / (fan_in + fan_out))
        mlp.append((rng.uniform(-lim, lim, (fan_in, fan_out)).astype(np.float32), np.zeros(fan_out, np.float32)))
    return (fit_w, fit_b), mlp


def batch(arr, step, size=BATCH):
    s = (step * size) % arr.shape[0]
    return arr[s:s + size]


def build_fit_a_line(fluid, init, lr=0.001, opt="sgd"):
    (w, b) = init
    x = fluid.layers.data(name="x", shape=[13], dtype="float32")
    y = fluid.layers.data(name="y", shape=[1], dtype="float32")
    pred = fluid.layers.fc(input=x, size=1,
                           param_attr=fluid.ParamAttr(name="fc_0.w_0",
                                                      initializer=fluid.initializer.NumpyArrayInitializer(w)),
                           bias_attr=fluid.ParamAttr(name="fc_0.b_0",
                                                     initializer=fluid.initializer.NumpyArrayInitializer(b)))
    cost = fluid.layers.square_error_cost(input=pred, label=y)
    loss = fluid.layers.mean(cost)
    make_optimizer(fluid, opt, lr).minimize(loss)
    return loss


def build_mlp(fluid, init, opt="sgd", lr=None):
    img = fluid.layers.data(name="img", shape=[784], dtype="float32")
    label = fluid.layers.data(name="label", shape=[1], dtype="int64")
    h = img
    acts = ["relu", "relu", "softmax"]
    sizes = [200, 200, 10]
    for i, ((w, b), act, size) in enumerate(zip(init, acts, sizes)):
        h = fluid.layers.fc(input=h, size=size, act=act,
                            param_attr=fluid.ParamAttr(name="fc_%d.w_0" % i,
                                                       initializer=fluid.initializer.NumpyArrayInitializer(w)),
                            bias_attr=fluid.ParamAttr(name="fc_%d.b_0" % i,
                                                      initializer=fluid.initializer.NumpyArrayInitializer(b)))
    loss = fluid.layers.mean(fluid.layers.cross_entropy(input=h, label=label))
    if lr is None:
        lr = 0.1 if opt == "sgd" else 0.001
    make_optimizer(fluid, opt, lr).minimize(loss)
    return loss


def make_optimizer(fluid, opt, lr):
    if opt == "sgd":
        return fluid.optimizer.SGD(learning_rate=lr)
    if opt == "adam":
        return fluid.optimizer.Adam(learning_rate=lr, beta1=0.9, beta2=0.999, epsilon=1e-8)
    if opt == "ftrl":
        return fluid.optimizer.Ftrl(learning_rate=lr, l1=1e-3)
    raise ValueError(opt)
