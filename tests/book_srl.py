"""The label_semantic_roles book model (db_lstm + linear_chain_crf, written as in Paddle's book with small
sizes) and its training set-up. It takes the fluid module as an argument so that
tests/data/paddle18/make_book_srl.py runs the very same code with Paddle 1.8.5 to record the reference."""

import numpy as np

WORD_DICT, PRED_DICT, MARK_DICT, LABEL_DICT = 50, 10, 2, 5
WORD_DIM, MARK_DIM, HIDDEN_DIM, DEPTH = 8, 4, 16, 4
MIX_HIDDEN_LR = 1e-3
EMBEDDING_NAME = "emb"
FEATURES = ["word", "ctx_n2", "ctx_n1", "ctx_0", "ctx_p1", "ctx_p2", "predicate", "mark"]


def db_lstm(fluid, word, predicate, ctx_n2, ctx_n1, ctx_0, ctx_p1, ctx_p2, mark):
    predicate_embedding = fluid.layers.embedding(input=predicate, size=[PRED_DICT, WORD_DIM], dtype='float32',
                                                 is_sparse=True, param_attr='vemb')
    mark_embedding = fluid.layers.embedding(input=mark, size=[MARK_DICT, MARK_DIM], dtype='float32', is_sparse=True)
    word_input = [word, ctx_n2, ctx_n1, ctx_0, ctx_p1, ctx_p2]
    emb_layers = [fluid.layers.embedding(size=[WORD_DICT, WORD_DIM], input=x,
                                         param_attr=fluid.ParamAttr(name=EMBEDDING_NAME, trainable=False))
                  for x in word_input]
    emb_layers.append(predicate_embedding)
    emb_layers.append(mark_embedding)
    hidden_0_layers = [fluid.layers.fc(input=emb, size=HIDDEN_DIM) for emb in emb_layers]
    hidden_0 = fluid.layers.sums(input=hidden_0_layers)
    lstm_0 = fluid.layers.dynamic_lstm(input=hidden_0, size=HIDDEN_DIM, candidate_activation='relu',
                                       gate_activation='sigmoid', cell_activation='sigmoid')
    # stack L-LSTM and R-LSTM with direct edges
    input_tmp = [hidden_0, lstm_0]
    for i in range(1, DEPTH):
        mix_hidden = fluid.layers.sums(input=[fluid.layers.fc(input=input_tmp[0], size=HIDDEN_DIM),
                                              fluid.layers.fc(input=input_tmp[1], size=HIDDEN_DIM)])
        lstm = fluid.layers.dynamic_lstm(input=mix_hidden, size=HIDDEN_DIM, candidate_activation='relu',
                                         gate_activation='sigmoid', cell_activation='sigmoid',
                                         is_reverse=((i % 2) == 1))
        input_tmp = [mix_hidden, lstm]
    return fluid.layers.sums(input=[fluid.layers.fc(input=input_tmp[0], size=LABEL_DICT, act='tanh'),
                                    fluid.layers.fc(input=input_tmp[1], size=LABEL_DICT, act='tanh')])


def build(fluid):
    """(main, startup, avg_cost, crf_decode, params)."""
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        feats = {n: fluid.layers.data(name=n, shape=[1], dtype='int64', lod_level=1) for n in FEATURES}
        feature_out = db_lstm(fluid, **feats)
        target = fluid.layers.data(name='target', shape=[1], dtype='int64', lod_level=1)
        crf_cost = fluid.layers.linear_chain_crf(input=feature_out, label=target,
                                                 param_attr=fluid.ParamAttr(name='crfw', learning_rate=MIX_HIDDEN_LR))
        avg_cost = fluid.layers.mean(crf_cost)
        sgd_optimizer = fluid.optimizer.SGD(learning_rate=fluid.layers.exponential_decay(
            learning_rate=0.05, decay_steps=100000, decay_rate=0.5, staircase=True))
        sgd_optimizer.minimize(avg_cost)
        crf_decode = fluid.layers.crf_decoding(input=feature_out, param_attr=fluid.ParamAttr(name='crfw'))
    return main, startup, avg_cost, crf_decode, main.global_block().all_parameters()


def init_values(shapes):
    return [np.random.RandomState(200 + i).uniform(-0.4, 0.4, size=s).astype("float32") for i, s in enumerate(shapes)]


def batches(steps, seed=5, batch=4):
    r = np.random.RandomState(seed)
    out = []
    for _ in range(steps):
        lens = r.randint(1, 8, size=batch).tolist()
        b = {"lens": lens}
        for n in FEATURES:
            hi = {"predicate": PRED_DICT, "mark": MARK_DICT}.get(n, WORD_DICT)
            b[n] = r.randint(0, hi, size=sum(lens)).tolist()
        b["target"] = r.randint(0, LABEL_DICT, size=sum(lens)).tolist()
        out.append(b)
    return out


def feed(fluid, *bs):
    """The feed of one or more batches joined into one (equal batch sizes: the joined mean cost's gradient is
    the average of theirs)."""
    lens = sum((b["lens"] for b in bs), [])
    return {n: fluid.create_lod_tensor(np.array(sum((b[n] for b in bs), []), "int64").reshape(-1, 1), [lens],
                                       fluid.CPUPlace())
            for n in FEATURES + ["target"]}


def train(fluid, steps=10):
    """Losses of `steps` SGD steps from init_values, and the last batch's decoded path."""
    main, startup, avg_cost, crf_decode, params = build(fluid)
    exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
    losses = []
    with fluid.scope_guard(scope):
        exe.run(startup)
        for p, v in zip(params, init_values([p.shape for p in params])):
            scope.find_var(p.name).get_tensor().set(v, fluid.CPUPlace())
        for b in batches(steps):
            loss, path = exe.run(main, feed=feed(fluid, b), fetch_list=[avg_cost, crf_decode], return_numpy=False)
            losses.append(float(np.array(loss).reshape(-1)[0]))
    return {"params": [list(p.shape) for p in params], "losses": losses, "last_path": np.array(path).tolist()}


def local_two_trainer_losses(fluid, steps, trainers=2):
    """What each sync pserver-mode trainer should see (see book_sentiment.local_two_trainer_losses)."""
    main, startup, avg_cost, _, params = build(fluid)
    # forward only; its learning-rate counter step is harmless (staircase decay over 100000 steps)
    fwd = main.clone(for_test=True)
    data = batches(steps * trainers, seed=11)
    exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
    out = {t: [] for t in range(trainers)}
    with fluid.scope_guard(scope):
        exe.run(startup)
        for p, v in zip(params, init_values([p.shape for p in params])):
            scope.find_var(p.name).get_tensor().set(v, fluid.CPUPlace())
        for s in range(steps):
            mine = data[s * trainers:(s + 1) * trainers]
            for t, b in enumerate(mine):
                loss, = exe.run(fwd, feed=feed(fluid, b), fetch_list=[avg_cost])
                out[t].append(float(np.array(loss).reshape(-1)[0]))
            exe.run(main, feed=feed(fluid, *mine), fetch_list=[avg_cost])
    return out
