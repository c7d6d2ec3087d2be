"""A Fluid 1.x MNIST-style MLP trained on synthetic data, single process: the script is plain Fluid code;
only the import line differs from Paddle.

    python examples/train_mlp.py [--steps 50] [--opt sgd|adam]
"""

import argparse

import numpy as np

import paddle_compat as fluid


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--opt", choices=["sgd", "adam"], default="adam")
    args = ap.parse_args()

    rng = np.random.RandomState(0)
    teacher = rng.randn(784, 10).astype("float32")

    img = fluid.layers.data(name="img", shape=[784], dtype="float32")
    label = fluid.layers.data(name="label", shape=[1], dtype="int64")
    h = fluid.layers.fc(input=img, size=200, act="relu")
    h = fluid.layers.fc(input=h, size=200, act="relu")
    prediction = fluid.layers.fc(input=h, size=10, act="softmax")
    loss = fluid.layers.mean(fluid.layers.cross_entropy(input=prediction, label=label))
    acc = fluid.layers.accuracy(input=prediction, label=label)
    opt = fluid.optimizer.Adam(learning_rate=0.001) if args.opt == "adam" else fluid.optimizer.SGD(learning_rate=0.1)
    opt.minimize(loss)

    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(fluid.default_startup_program())
    for step in range(args.steps):
        x = rng.uniform(0, 1, (64, 784)).astype("float32")
        y = np.argmax((x - 0.5) @ teacher, axis=1).astype("int64").reshape(-1, 1)
        l, a = exe.run(feed={"img": x, "label": y}, fetch_list=[loss, acc])
        print("step %3d  loss %.5f  acc %.3f" % (step, l[0], a[0]))


if __name__ == "__main__":
    main()
