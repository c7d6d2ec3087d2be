"""The word2vec (N-gram), recommender_system and recognize_digits (convolutional) book models, written as in
Paddle's book with small sizes, and
their training set-up. They take the fluid module as an argument, so tests/data/paddle18/make_book_more.py
runs the very same code with Paddle 1.8.5 to record the reference. Python 3.7 compatible.

word2vec variants: the book's softmax head with dense or sparse (is_sparse) shared embedding table, and two
heads of the older book text: hsigmoid over a custom tree and nce with fixed negatives (both is_sparse).
digits_conv: the book's two simple_img_conv_pool stages and softmax fc, without its batch_norm (whose batch
statistics would make two trainers' averaged gradients differ from one process on both batches)."""

import numpy as np

W2V_DICT, EMBED, HIDDEN, W2V_BATCH = 40, 8, 16, 8
NCE_NEG = [3, 17, 29, 8, 35]
USERS, AGES, JOBS, MOVIES, CATEGORIES, TITLE_DICT, REC_BATCH = 20, 7, 21, 30, 18, 50, 6
DIGITS_SIDE, DIGITS_BATCH = 16, 8
MODELS = ["word2vec", "word2vec_sparse", "word2vec_hs", "word2vec_nce", "recommender", "digits_conv"]


# ---- word2vec ---------------------------------------------------------------------------------------------
def _tree(classes):
    """The default complete binary tree as a custom one: per class its node path and branch bits (-1 padded)."""
    length = (classes - 1).bit_length()
    table = -np.ones((classes, length), "int64")
    code = -np.ones((classes, length), "int64")
    for c in range(classes):
        k = c + classes
        for j in range(k.bit_length() - 1):
            table[c, j], code[c, j] = (k >> (j + 1)) - 1, (k >> j) & 1
    return table, code


def word2vec_net(fluid, words, head, is_sparse):
    embs = [fluid.layers.embedding(input=w, size=[W2V_DICT, EMBED], dtype='float32', is_sparse=is_sparse,
                                   param_attr='shared_w') for w in words[:4]]
    concat_embed = fluid.layers.concat(input=embs, axis=1)
    hidden1 = fluid.layers.fc(input=concat_embed, size=HIDDEN, act='sigmoid')
    next_word = words[4]
    if head == "softmax":
        predict_word = fluid.layers.fc(input=hidden1, size=W2V_DICT, act='softmax')
        cost = fluid.layers.cross_entropy(input=predict_word, label=next_word)
    elif head == "hs":
        ptable = fluid.layers.data(name='ptable', shape=[(W2V_DICT - 1).bit_length()], dtype='int64')
        pcode = fluid.layers.data(name='pcode', shape=[(W2V_DICT - 1).bit_length()], dtype='int64')
        cost = fluid.layers.hsigmoid(input=hidden1, label=next_word, num_classes=W2V_DICT, path_table=ptable,
                                     path_code=pcode, is_custom=True, is_sparse=True)
    else:
        cost = fluid.layers.nce(input=hidden1, label=next_word, num_total_classes=W2V_DICT,
                                num_neg_samples=len(NCE_NEG), is_sparse=True, seed=1)
        for op in fluid.default_main_program().global_block().ops:
            if op.type == "nce":       # fixed negatives: Paddle's sampler draws cannot be reproduced
                op._set_attr("custom_neg_classes", list(NCE_NEG))
    return fluid.layers.mean(cost)


# ---- recommender_system -----------------------------------------------------------------------------------
def get_usr_combined_features(fluid, is_sparse):
    layers = fluid.layers
    uid = layers.data(name='user_id', shape=[1], dtype='int64')
    usr_emb = layers.embedding(input=uid, dtype='float32', size=[USERS, 8], param_attr='user_table',
                               is_sparse=is_sparse)
    usr_fc = layers.fc(input=usr_emb, size=8)
    usr_gender_id = layers.data(name='gender_id', shape=[1], dtype='int64')
    usr_gender_emb = layers.embedding(input=usr_gender_id, size=[2, 4], param_attr='gender_table',
                                      is_sparse=is_sparse)
    usr_gender_fc = layers.fc(input=usr_gender_emb, size=4)
    usr_age_id = layers.data(name='age_id', shape=[1], dtype="int64")
    usr_age_emb = layers.embedding(input=usr_age_id, size=[AGES, 4], is_sparse=is_sparse, param_attr='age_table')
    usr_age_fc = layers.fc(input=usr_age_emb, size=4)
    usr_job_id = layers.data(name='job_id', shape=[1], dtype="int64")
    usr_job_emb = layers.embedding(input=usr_job_id, size=[JOBS, 4], param_attr='job_table', is_sparse=is_sparse)
    usr_job_fc = layers.fc(input=usr_job_emb, size=4)
    concat_embed = layers.concat(input=[usr_fc, usr_gender_fc, usr_age_fc, usr_job_fc], axis=1)
    return layers.fc(input=concat_embed, size=16, act="tanh")


def get_mov_combined_features(fluid, is_sparse):
    layers = fluid.layers
    mov_id = layers.data(name='movie_id', shape=[1], dtype='int64')
    mov_emb = layers.embedding(input=mov_id, dtype='float32', size=[MOVIES, 8], param_attr='movie_table',
                               is_sparse=is_sparse)
    mov_fc = layers.fc(input=mov_emb, size=8)
    category_id = layers.data(name='category_id', shape=[1], dtype='int64', lod_level=1)
    mov_categories_emb = layers.embedding(input=category_id, size=[CATEGORIES, 8], is_sparse=is_sparse)
    mov_categories_hidden = layers.sequence_pool(input=mov_categories_emb, pool_type="sum")
    mov_title_id = layers.data(name='movie_title', shape=[1], dtype='int64', lod_level=1)
    mov_title_emb = layers.embedding(input=mov_title_id, size=[TITLE_DICT, 8], is_sparse=is_sparse)
    mov_title_conv = fluid.nets.sequence_conv_pool(input=mov_title_emb, num_filters=8, filter_size=3, act="tanh",
                                                   pool_type="sum")
    concat_embed = layers.concat(input=[mov_fc, mov_categories_hidden, mov_title_conv], axis=1)
    return layers.fc(input=concat_embed, size=16, act="tanh")


def recommender_net(fluid, is_sparse=True):
    usr = get_usr_combined_features(fluid, is_sparse)
    mov = get_mov_combined_features(fluid, is_sparse)
    inference = fluid.layers.cos_sim(X=usr, Y=mov)
    scale_infer = fluid.layers.scale(x=inference, scale=5.0)
    label = fluid.layers.data(name='score', shape=[1], dtype='float32')
    square_cost = fluid.layers.square_error_cost(input=scale_infer, label=label)
    return fluid.layers.mean(square_cost)


# ---- recognize_digits ------------------------------------------------------------------------------------
def digits_conv_net(fluid):
    img = fluid.layers.data(name='img', shape=[1, DIGITS_SIDE, DIGITS_SIDE], dtype='float32')
    label = fluid.layers.data(name='label', shape=[1], dtype='int64')
    conv_pool_1 = fluid.nets.simple_img_conv_pool(input=img, filter_size=3, num_filters=4, pool_size=2,
                                                  pool_stride=2, act="relu")
    conv_pool_2 = fluid.nets.simple_img_conv_pool(input=conv_pool_1, filter_size=3, num_filters=8, pool_size=2,
                                                  pool_stride=2, act="relu")
    prediction = fluid.layers.fc(input=conv_pool_2, size=10, act='softmax')
    return fluid.layers.mean(fluid.layers.cross_entropy(input=prediction, label=label))


# ---- set-up shared by the recording script, the unit test and the pserver test ----------------------------
def build(fluid, name, train=True):
    """(main, startup, cost, params); train=False: forward only."""
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        if name == "recommender":
            cost = recommender_net(fluid)
            lr = 0.2
        elif name == "digits_conv":
            cost = digits_conv_net(fluid)
            lr = 0.1
        else:
            words = [fluid.layers.data(name=n, shape=[1], dtype='int64')
                     for n in ('firstw', 'secondw', 'thirdw', 'forthw', 'nextw')]
            head = {"word2vec_hs": "hs", "word2vec_nce": "nce"}.get(name, "softmax")
            cost = word2vec_net(fluid, words, head, is_sparse=name != "word2vec")
            lr = 0.5
        if train:
            fluid.optimizer.SGD(learning_rate=lr).minimize(cost)
    return main, startup, cost, main.global_block().all_parameters()


def init_values(shapes):
    return [np.random.RandomState(300 + i).uniform(-0.5, 0.5, size=s).astype("float32")
            for i, s in enumerate(shapes)]


def batches(name, steps, seed=9):
    r = np.random.RandomState(seed)
    out = []
    for _ in range(steps):
        if name == "recommender":
            b = {"user_id": r.randint(0, USERS, REC_BATCH).tolist(), "gender_id": r.randint(0, 2, REC_BATCH).tolist(),
                 "age_id": r.randint(0, AGES, REC_BATCH).tolist(), "job_id": r.randint(0, JOBS, REC_BATCH).tolist(),
                 "movie_id": r.randint(0, MOVIES, REC_BATCH).tolist(),
                 "score": r.randint(1, 6, REC_BATCH).astype("float64").tolist()}
            for k, hi, top in (("category_id", CATEGORIES, 4), ("movie_title", TITLE_DICT, 6)):
                lens = r.randint(1, top, REC_BATCH).tolist()
                b[k] = {"lens": lens, "ids": r.randint(0, hi, sum(lens)).tolist()}
        elif name == "digits_conv":
            b = {"img": r.uniform(-1, 1, (DIGITS_BATCH, 1, DIGITS_SIDE, DIGITS_SIDE)).round(3).tolist(),
                 "label": r.randint(0, 10, DIGITS_BATCH).tolist()}
        else:
            b = {n: r.randint(0, W2V_DICT, W2V_BATCH).tolist() for n in ('firstw', 'secondw', 'thirdw', 'forthw',
                                                                          'nextw')}
        out.append(b)
    return out


def feed(fluid, name, *bs):
    """The feed of one or more batches joined into one (equal batch sizes: the joined mean cost's gradient is
    the average of theirs)."""
    out = {}
    for k in bs[0]:
        if isinstance(bs[0][k], dict):
            lens = sum((b[k]["lens"] for b in bs), [])
            ids = np.array(sum((b[k]["ids"] for b in bs), []), "int64").reshape(-1, 1)
            out[k] = fluid.create_lod_tensor(ids, [lens], fluid.CPUPlace())
        elif k == "img":
            out[k] = np.array(sum((b[k] for b in bs), []), "float32")
        else:
            out[k] = np.array(sum((b[k] for b in bs), []), "float32" if k == "score" else "int64").reshape(-1, 1)
    if name == "word2vec_hs":
        table, code = _tree(W2V_DICT)
        nxt = out["nextw"].reshape(-1)
        out["ptable"], out["pcode"] = table[nxt], code[nxt]
    return out


def set_params(fluid, scope, params):
    for p, v in zip(params, init_values([p.shape for p in params])):
        scope.find_var(p.name).get_tensor().set(v, fluid.CPUPlace())


def train(fluid, name, steps=10):
    main, startup, cost, params = build(fluid, name)
    exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
    losses = []
    with fluid.scope_guard(scope):
        exe.run(startup)
        set_params(fluid, scope, params)
        for b in batches(name, steps):
            loss, = exe.run(main, feed=feed(fluid, name, b), fetch_list=[cost])
            losses.append(float(np.array(loss).reshape(-1)[0]))
    return {"params": [list(p.shape) for p in params], "losses": losses}


def local_two_trainer_losses(fluid, name, steps, trainers=2):
    """What each sync pserver-mode trainer should see: trainer t's loss at step s is its batch
    s * trainers + t under the parameters after s updates, each with the trainers' averaged gradient."""
    main, startup, cost, params = build(fluid, name)
    fwd, _, fwd_cost, _ = build(fluid, name, train=False)
    data = batches(name, steps * trainers, seed=11)
    exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
    out = {t: [] for t in range(trainers)}
    with fluid.scope_guard(scope):
        exe.run(startup)
        set_params(fluid, scope, params)
        for s in range(steps):
            mine = data[s * trainers:(s + 1) * trainers]
            for t, b in enumerate(mine):
                loss, = exe.run(fwd, feed=feed(fluid, name, b), fetch_list=[fwd_cost])
                out[t].append(float(np.array(loss).reshape(-1)[0]))
            exe.run(main, feed=feed(fluid, name, *mine), fetch_list=[cost])
    return out
