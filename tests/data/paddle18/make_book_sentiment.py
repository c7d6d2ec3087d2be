"""Records the first 10 training losses of the understand_sentiment book models (convolution net and stacked
LSTM net, as in Paddle's book chapter, shrunk) from real PaddlePaddle 1.8.5 (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_book_sentiment.py

Writes book_sentiment.json: the synthetic word-id batches (LoD), every parameter's initial value (set through
the scope after startup, in creation order) and the losses of 10 Adagrad steps.
"""

import json
import os

import numpy as np
import paddle.fluid as fluid

HERE = os.path.dirname(os.path.abspath(__file__))
DICT, CLASSES, STEPS, BATCH = 60, 2, 10, 6


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


def batches():
    r = np.random.RandomState(7)
    out = []
    for _ in range(STEPS):
        lens = r.randint(1, 9, size=BATCH).tolist()
        out.append({"lens": lens, "words": r.randint(0, DICT, size=sum(lens)).tolist(),
                    "label": r.randint(0, CLASSES, size=BATCH).tolist()})
    return out


def init_values(shapes):
    return [np.random.RandomState(100 + i).uniform(-0.3, 0.3, size=s).astype("float32") for i, s in enumerate(shapes)]


def train(net, data):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        words = fluid.layers.data(name="words", shape=[1], dtype="int64", lod_level=1)
        label = fluid.layers.data(name="label", shape=[1], dtype="int64")
        cost = net(words, label, input_dim=DICT, class_dim=CLASSES)
        fluid.optimizer.Adagrad(learning_rate=0.002 * 10).minimize(cost)
    params = main.global_block().all_parameters()
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    losses = []
    with fluid.scope_guard(scope):
        exe.run(startup)
        inits = init_values([p.shape for p in params])
        for p, v in zip(params, inits):
            scope.find_var(p.name).get_tensor().set(v, fluid.CPUPlace())
        for b in data:
            w = fluid.create_lod_tensor(np.array(b["words"], "int64").reshape(-1, 1), [b["lens"]], fluid.CPUPlace())
            lab = np.array(b["label"], "int64").reshape(-1, 1)
            loss, = exe.run(main, feed={"words": w, "label": lab}, fetch_list=[cost])
            losses.append(float(np.array(loss).reshape(-1)[0]))
    return {"params": [[p.name, list(p.shape)] for p in params], "losses": losses}


if __name__ == "__main__":
    data = batches()
    res = {"batches": data, "conv": train(convolution_net, data), "stacked_lstm": train(stacked_lstm_net, data)}
    with open(os.path.join(HERE, "book_sentiment.json"), "w") as f:
        json.dump(res, f)
    print(res["conv"]["losses"], res["stacked_lstm"]["losses"])
