"""Book chapter understand_sentiment (convolution net and stacked LSTM net, written as in Paddle's book, with
small sizes): the first 10 Adagrad losses equal Paddle 1.8.5's from the same initial weights and data
(recorded by tests/data/paddle18/make_book_sentiment.py)."""

import json
import os

import numpy as np
import pytest

import paddle_compat as fluid

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18")
with open(os.path.join(DATA, "book_sentiment.json")) as _fh:
    REF = json.load(_fh)
DICT, CLASSES = 60, 2


def convolution_net(data, label, input_dim, class_dim=2, emb_dim=16, hid_dim=8):
    emb = fluid.layers.embedding(input=data, size=[input_dim, emb_dim], is_sparse=True)
    conv_3 = fluid.nets.sequence_conv_pool(input=emb, num_filters=hid_dim, filter_size=3, act="tanh",
                                           pool_type="sqrt")
    conv_4 = fluid.nets.sequence_conv_pool(input=emb, num_filters=hid_dim, filter_size=4, act="tanh",
                                           pool_type="sqrt")
    prediction = fluid.layers.fc(input=[conv_3, conv_4], size=class_dim, act="softmax")
    return fluid.layers.mean(fluid.layers.cross_entropy(input=prediction, label=label))


def stacked_lstm_net(data, label, input_dim, class_dim=2, emb_dim=16, hid_dim=16, stacked_num=3):
    emb = fluid.layers.embedding(input=data, size=[input_dim, emb_dim], is_sparse=True)
    fc1 = fluid.layers.fc(input=emb, size=hid_dim)
    lstm1, cell1 = fluid.layers.dynamic_lstm(input=fc1, size=hid_dim)
    inputs = [fc1, lstm1]
    for i in range(2, stacked_num + 1):
        fc = fluid.layers.fc(input=inputs, size=hid_dim)
        lstm, cell = fluid.layers.dynamic_lstm(input=fc, size=hid_dim, is_reverse=(i % 2) == 0)
        inputs = [fc, lstm]
    fc_last = fluid.layers.sequence_pool(input=inputs[0], pool_type="max")
    lstm_last = fluid.layers.sequence_pool(input=inputs[1], pool_type="max")
    prediction = fluid.layers.fc(input=[fc_last, lstm_last], size=class_dim, act="softmax")
    return fluid.layers.mean(fluid.layers.cross_entropy(input=prediction, label=label))


def init_values(shapes):
    """The recording script's initial weights (numpy's legacy RandomState streams are fixed)."""
    return [np.random.RandomState(100 + i).uniform(-0.3, 0.3, size=s).astype("float32") for i, s in enumerate(shapes)]


def train(net, ref):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        words = fluid.layers.data(name="words", shape=[1], dtype="int64", lod_level=1)
        label = fluid.layers.data(name="label", shape=[1], dtype="int64")
        cost = net(words, label, input_dim=DICT, class_dim=CLASSES)
        fluid.optimizer.Adagrad(learning_rate=0.002 * 10).minimize(cost)
    params = main.global_block().all_parameters()
    # same parameters in the same creation order (names may differ: unique-name counters run on per process)
    assert [list(p.shape) for p in params] == [s for _, s in ref["params"]]
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    losses = []
    with fluid.scope_guard(scope):
        exe.run(startup)
        for p, v in zip(params, init_values([p.shape for p in params])):
            scope.find_var(p.name).get_tensor().set(v, fluid.CPUPlace())
        for b in REF["batches"]:
            w = fluid.create_lod_tensor(np.array(b["words"], "int64").reshape(-1, 1), [b["lens"]], fluid.CPUPlace())
            lab = np.array(b["label"], "int64").reshape(-1, 1)
            loss, = exe.run(main, feed={"words": w, "label": lab}, fetch_list=[cost])
            losses.append(float(np.array(loss).reshape(-1)[0]))
    return losses


@pytest.mark.parity
@pytest.mark.parametrize("name,net", [("conv", convolution_net), ("stacked_lstm", stacked_lstm_net)])
def test_first_10_losses_match_paddle18(name, net):
    ref = REF[name]
    np.testing.assert_allclose(train(net, ref), ref["losses"], rtol=1e-4, err_msg=name)
