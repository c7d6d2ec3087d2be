"""The understand_sentiment book models (convolution net, stacked LSTM net), written as in Paddle's book with
small sizes, and their training set-up; shared by the unit parity test and the pserver-mode test. The same
code, run with Paddle 1.8.5, recorded tests/data/paddle18/book_sentiment.json (make_book_sentiment.py)."""

import numpy as np

import paddle_compat as fluid

DICT, CLASSES, BATCH = 60, 2, 6


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


NETS = {"conv": convolution_net, "stacked_lstm": stacked_lstm_net}


def build(name, train=True):
    """(main, startup, cost, params) of a book model trained with Adagrad (train=False: forward only)."""
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        words = fluid.layers.data(name="words", shape=[1], dtype="int64", lod_level=1)
        label = fluid.layers.data(name="label", shape=[1], dtype="int64")
        cost = NETS[name](words, label, input_dim=DICT, class_dim=CLASSES)
        if train:
            fluid.optimizer.Adagrad(learning_rate=0.002 * 10).minimize(cost)
    return main, startup, cost, main.global_block().all_parameters()


def init_values(shapes):
    """The recording script's initial weights (numpy's legacy RandomState streams are fixed)."""
    return [np.random.RandomState(100 + i).uniform(-0.3, 0.3, size=s).astype("float32") for i, s in enumerate(shapes)]


def set_params(scope, params):
    for p, v in zip(params, init_values([p.shape for p in params])):
        scope.find_var(p.name).get_tensor().set(v, fluid.CPUPlace())


def batches(steps, seed=7):
    r = np.random.RandomState(seed)
    out = []
    for _ in range(steps):
        lens = r.randint(1, 9, size=BATCH).tolist()
        out.append({"lens": lens, "words": r.randint(0, DICT, size=sum(lens)).tolist(),
                    "label": r.randint(0, CLASSES, size=BATCH).tolist()})
    return out


def feed(*bs):
    """The feed of one or more batches joined into one (the mean loss of a join of equal-size batches is the
    mean of their losses, so its gradient is the average of theirs)."""
    lens = sum((b["lens"] for b in bs), [])
    words = np.array(sum((b["words"] for b in bs), []), "int64").reshape(-1, 1)
    label = np.array(sum((b["label"] for b in bs), []), "int64").reshape(-1, 1)
    return {"words": fluid.create_lod_tensor(words, [lens], fluid.CPUPlace()), "label": label}


def local_two_trainer_losses(name, steps, trainers=2):
    """What each of `trainers` sync pserver-mode trainers should see: trainer t's loss at step s is its batch
    s * trainers + t under the parameters after s updates, each update with the trainers' averaged gradient."""
    main, startup, cost, params = build(name)
    fwd, _, fwd_cost, _ = build(name, train=False)
    data = batches(steps * trainers, seed=11)
    exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
    out = {t: [] for t in range(trainers)}
    with fluid.scope_guard(scope):
        exe.run(startup)
        set_params(scope, params)
        for s in range(steps):
            mine = data[s * trainers:(s + 1) * trainers]
            for t, b in enumerate(mine):
                out[t].append(float(np.array(exe.run(fwd, feed=feed(b), fetch_list=[fwd_cost])[0]).reshape(-1)[0]))
            exe.run(main, feed=feed(*mine), fetch_list=[cost])
    return out
