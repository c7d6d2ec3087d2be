"""Small programs of the model families the unit suite trains, with their feeds, for tests that run one
program several ways (the lowering against the reference interpreter, CUDA-graph capture on and off): each
builder returns (main, startup, loss, feeds) where feeds is a list of per-step {name: array or (array, lod)}."""

import numpy as np

import paddle_compat as fluid

L = fluid.layers
R = np.random.RandomState


def _xy(steps, batch, dim, classes, seed=1):
    r = R(seed)
    return [{"x": r.rand(batch, dim).astype("float32"),
             "y": r.randint(0, classes, (batch, 1)).astype("int64")} for _ in range(steps)]


def mlp(opt=lambda: fluid.optimizer.SGD(0.1), steps=4, dropout=False):
    x = L.data("x", [16], dtype="float32")
    y = L.data("y", [1], dtype="int64")
    h = L.fc(x, 32, act="relu")
    if dropout:
        h = L.dropout(h, 0.3, dropout_implementation="upscale_in_train")
    h = L.fc(h, 32, act="tanh")
    p = L.fc(h, 5, act="softmax")
    loss = L.mean(L.cross_entropy(p, y))
    opt().minimize(loss)
    return loss, _xy(steps, 8, 16, 5)


def conv_bn(steps=3):
    img = L.data("img", [2, 8, 8], dtype="float32")
    y = L.data("y", [1], dtype="int64")
    c = L.conv2d(img, 4, 3, padding=1, bias_attr=False)
    b = L.batch_norm(c, act="relu")
    c2 = L.conv2d(b, 4, 3, padding=1, bias_attr=False)
    b2 = L.batch_norm(c2)
    s = L.relu(L.elementwise_add(b, b2))
    pooled = L.pool2d(s, 2, "max", 2)
    p = L.fc(pooled, 3, act="softmax")
    loss = L.mean(L.cross_entropy(p, y))
    lr = L.piecewise_decay([2], [0.1, 0.01])
    fluid.optimizer.Momentum(lr, 0.9, regularization=fluid.regularizer.L2Decay(1e-4)).minimize(loss)
    r = R(2)
    return loss, [{"img": r.rand(4, 2, 8, 8).astype("float32"), "y": r.randint(0, 3, (4, 1)).astype("int64")}
                  for _ in range(steps)]


def lstm_lod(steps=3):
    words = L.data("words", [1], dtype="int64", lod_level=1)
    y = L.data("y", [1], dtype="int64")
    emb = L.embedding(words, [30, 8])
    proj = L.fc(emb, 4 * 6)
    hidden, _ = L.dynamic_lstm(proj, 4 * 6)
    pooled = L.sequence_pool(hidden, "max")
    p = L.fc(pooled, 2, act="softmax")
    loss = L.mean(L.cross_entropy(p, y))
    fluid.optimizer.Adagrad(0.1).minimize(loss)
    r, feeds = R(3), []
    for _ in range(steps):
        lens = [3, 5, 2]
        ids = r.randint(0, 30, (sum(lens), 1)).astype("int64")
        feeds.append({"words": (ids, [lens]), "y": r.randint(0, 2, (3, 1)).astype("int64")})
    return loss, feeds


def ctr_sparse(steps=3):
    slots = [L.data("s%d" % k, [1], dtype="int64", lod_level=1) for k in range(3)]
    dense = L.data("dense", [4], dtype="float32")
    y = L.data("y", [1], dtype="int64")
    pooled = [L.sequence_pool(L.embedding(s, [50, 6], is_sparse=True, param_attr=fluid.ParamAttr("tbl")), "sum")
              for s in slots]
    h = L.fc(L.concat(pooled + [dense], axis=1), 16, act="relu")
    p = L.fc(h, 2, act="softmax")
    loss = L.mean(L.cross_entropy(p, y))
    fluid.optimizer.Adam(0.05).minimize(loss)
    r, feeds = R(4), []
    for _ in range(steps):
        f = {"dense": r.rand(4, 4).astype("float32"), "y": r.randint(0, 2, (4, 1)).astype("int64")}
        for k in range(3):
            lens = list(r.randint(1, 4, 4))
            f["s%d" % k] = (r.randint(0, 50, (sum(lens), 1)).astype("int64"), [lens])
        feeds.append(f)
    return loss, feeds


def while_cond(steps=3):
    import subblock_models as sm
    loss = sm.while_cond_model(fluid)
    return loss, [sm.feed(b) for b in sm.batches(steps)]


def switch_lr(steps=4):
    import subblock_models as sm
    loss = sm.switch_lr_model(fluid)
    return loss, [sm.feed(b) for b in sm.batches(steps)]


def _sched(kind):
    return {"exp": lambda: L.exponential_decay(0.1, 2, 0.5, staircase=True),
            "noam": lambda: L.noam_decay(16, 2),
            "cosine": lambda: L.cosine_decay(0.1, 2, 4),
            "poly": lambda: L.polynomial_decay(0.1, 5, 0.01, power=2.0),
            "inv": lambda: L.inverse_time_decay(0.1, 2, 0.5),
            "warmup": lambda: L.linear_lr_warmup(0.1, 3, 0.0, 0.1)}[kind]()


OPTIMIZERS = {
    "sgd_exp": lambda: fluid.optimizer.SGD(_sched("exp")),
    "momentum_nesterov_noam": lambda: fluid.optimizer.Momentum(_sched("noam"), 0.9, use_nesterov=True),
    "adam_cosine": lambda: fluid.optimizer.Adam(_sched("cosine")),
    "adamax_poly": lambda: fluid.optimizer.Adamax(_sched("poly")),
    "rmsprop_inv": lambda: fluid.optimizer.RMSProp(_sched("inv"), centered=True),
    "adagrad_warmup": lambda: fluid.optimizer.Adagrad(_sched("warmup")),
    "lamb": lambda: fluid.optimizer.Lamb(0.01),
    "ftrl": lambda: fluid.optimizer.Ftrl(0.1),
    "decayed_adagrad": lambda: fluid.optimizer.DecayedAdagrad(0.1),
    "adadelta": lambda: fluid.optimizer.Adadelta(0.1),
    "lars": lambda: fluid.optimizer.LarsMomentum(0.1, 0.9),
    "momentum_global_norm_clip": lambda: fluid.optimizer.Momentum(
        0.1, 0.9, grad_clip=fluid.clip.GradientClipByGlobalNorm(0.5)),
}

FAMILIES = {"mlp": mlp, "mlp_dropout": lambda: mlp(dropout=True), "conv_bn": conv_bn, "lstm_lod": lstm_lod,
            "ctr_sparse": ctr_sparse, "while_cond": while_cond, "switch_lr": switch_lr}
FAMILIES.update({"opt_" + k: (lambda f=f: mlp(opt=f)) for k, f in OPTIMIZERS.items()})


def build(name, builder=None):
    """(main, startup, loss, feeds) of FAMILIES[name] (or of builder())."""
    main, startup = fluid.Program(), fluid.Program()
    startup.random_seed = 11        # the same initial parameters in every process
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        loss, feeds = (builder or FAMILIES[name])()
    return main, startup, loss, feeds


def exe_feed(feed):
    """A family's feed for Executor.run: (ids, lengths) pairs as LoDTensors."""
    return {n: fluid.create_lod_tensor(v[0], v[1], fluid.CPUPlace()) if isinstance(v, tuple) else v
            for n, v in feed.items()}
