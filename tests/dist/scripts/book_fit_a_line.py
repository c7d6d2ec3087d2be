"""A Paddle-book-style script (fit_a_line), written for Paddle Fluid 1.x and run unchanged: `import paddle`,
`import paddle.fluid as fluid`, paddle.batch / paddle.reader, fluid.DistributeTranspiler, PADDLE_* env vars.
It prints each trainer's losses as a `RESULT {...}` line for tests/dist/test_book_script.py.

    PADDLE_TRAINING_ROLE=PSERVER|TRAINER  PADDLE_PSERVERS_IP_PORT_LIST=ip:port,...  PADDLE_TRAINERS_NUM=2
    PADDLE_TRAINER_ID=0 (trainers)  PADDLE_CURRENT_ENDPOINT=ip:port (pservers)
"""

from __future__ import print_function

import json
import math
import os
import sys

import numpy

import paddle
import paddle.fluid as fluid

BATCH_SIZE = 8
STEPS = 6


def housing_like_reader(trainer_id):
    """13 features and a price, like uci_housing's samples; each trainer reads its own shard."""
    def reader():
        rng = numpy.random.RandomState(100 + trainer_id)
        w = numpy.linspace(-1.0, 1.0, 13).astype("float32")
        for _ in range(BATCH_SIZE * STEPS):
            x = rng.uniform(-1, 1, 13).astype("float32")
            yield x, numpy.array([x.dot(w) + 0.5], dtype="float32")
    return reader


def train(trainer_id):
    x = fluid.layers.data(name='x', shape=[13], dtype='float32')
    y_predict = fluid.layers.fc(input=x, size=1, act=None,
                                param_attr=fluid.ParamAttr(initializer=fluid.initializer.Constant(0.1)),
                                bias_attr=fluid.ParamAttr(initializer=fluid.initializer.Constant(0.0)))
    y = fluid.layers.data(name='y', shape=[1], dtype='float32')
    cost = fluid.layers.square_error_cost(input=y_predict, label=y)
    avg_cost = fluid.layers.mean(cost)
    fluid.optimizer.SGD(learning_rate=0.1).minimize(avg_cost)

    train_reader = paddle.batch(paddle.reader.firstn(housing_like_reader(trainer_id), BATCH_SIZE * STEPS),
                                batch_size=BATCH_SIZE)
    place = fluid.CPUPlace()
    exe = fluid.Executor(place)

    def train_loop(main_program):
        feeder = fluid.DataFeeder(place=place, feed_list=[x, y])
        exe.run(fluid.default_startup_program())
        losses = []
        for data in train_reader():
            avg_loss_value, = exe.run(main_program, feed=feeder.feed(data), fetch_list=[avg_cost])
            print("loss %f" % avg_loss_value)
            if math.isnan(float(avg_loss_value)):
                sys.exit("got NaN loss, training failed.")
            losses.append(float(avg_loss_value))
        print("RESULT " + json.dumps({"trainer": trainer_id, "losses": losses}))

    pserver_endpoints = os.getenv("PADDLE_PSERVERS_IP_PORT_LIST")
    trainers = int(os.getenv("PADDLE_TRAINERS_NUM"))
    training_role = os.getenv("PADDLE_TRAINING_ROLE", "TRAINER")
    t = fluid.DistributeTranspiler()
    t.transpile(trainer_id, pservers=pserver_endpoints, trainers=trainers)
    if training_role == "PSERVER":
        current_endpoint = os.getenv("PADDLE_CURRENT_ENDPOINT")
        pserver_prog = t.get_pserver_program(current_endpoint)
        pserver_startup = t.get_startup_program(current_endpoint, pserver_prog)
        exe.run(pserver_startup)
        exe.run(pserver_prog)
    elif training_role == "TRAINER":
        train_loop(t.get_trainer_program())


if __name__ == '__main__':
    train(int(os.getenv("PADDLE_TRAINER_ID", "0")))
