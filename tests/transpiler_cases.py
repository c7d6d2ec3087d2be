"""Pserver-mode transpiler cases whose program structures are recorded from Paddle 1.8.5
(tests/data/paddle18/make_transpiler_cases.py) and checked here (tests/unit/test_transpiler_cases_paddle18.py):
a regression fc (named fc_w / fc_b, 1000 -> 1000) under an LR schedule or an optimizer with state, and a
word2vec-like model of is_sparse embeddings. Written against the fluid API only: `fluid` is real Paddle's or
ours.

Each case: (model, sync_mode). Transpiled with 2 pservers, 2 trainers, trainer 0."""

EPS = ["127.0.0.1:6174", "127.0.0.1:6175"]


def _regression(fluid):
    L = fluid.layers
    x = L.data(name="x", shape=[1000], dtype="float32")
    pred = L.fc(input=x, size=1000, act=None, param_attr=fluid.ParamAttr(name="fc_w"),
                bias_attr=fluid.ParamAttr(name="fc_b"))
    y = L.data(name="y", shape=[1], dtype="float32")
    return L.mean(L.square_error_cost(input=pred, label=y))


def exp_decay_sgd(fluid):
    loss = _regression(fluid)
    lr = fluid.layers.exponential_decay(learning_rate=0.1, decay_steps=100, decay_rate=0.99, staircase=True)
    fluid.optimizer.SGD(learning_rate=lr).minimize(loss)


def piecewise_sgd(fluid):
    loss = _regression(fluid)
    fluid.optimizer.SGD(learning_rate=fluid.layers.piecewise_decay([10000, 20000], [1.0, 0.5, 1.0])).minimize(loss)


def piecewise_momentum_l2(fluid):
    loss = _regression(fluid)
    bounds = [1, 10, 20, 30]
    values = [0.1 ** i for i in range(len(bounds) + 1)]
    fluid.optimizer.Momentum(learning_rate=fluid.layers.piecewise_decay(boundaries=bounds, values=values),
                             momentum=0.9, regularization=fluid.regularizer.L2Decay(1e-4)).minimize(loss)


def rmsprop(fluid):
    fluid.optimizer.RMSProp(learning_rate=0.1).minimize(_regression(fluid))


def sparse_tables(fluid):
    """Three is_sparse tables (emb; emb_w and emb_b read twice each), an LR schedule."""
    L = fluid.layers
    rows, width, neg = 10000, 8, 5
    word = L.data(name="word", shape=[1], dtype="int64", lod_level=1)
    true = L.data(name="true", shape=[1], dtype="int64", lod_level=1)
    negs = L.data(name="negs", shape=[1], dtype="int64", lod_level=1)

    def emb(ids, name, w, init=None):
        return L.embedding(input=ids, is_sparse=True, size=[rows, w],
                           param_attr=fluid.ParamAttr(name=name, initializer=init))

    e = emb(word, "emb", width, fluid.initializer.Uniform(-0.0625, 0.0625))
    tw = emb(true, "emb_w", width, fluid.initializer.Constant(0.0))
    tb = emb(true, "emb_b", 1, fluid.initializer.Constant(0.0))
    neg_ids = L.reshape(negs, shape=[-1, 1])
    neg_ids.stop_gradient = True
    nw = L.reshape(emb(neg_ids, "emb_w", width), shape=[-1, neg, width])
    nb = L.reshape(emb(neg_ids, "emb_b", 1), shape=[-1, neg])
    true_logit = L.elementwise_add(L.reduce_sum(L.elementwise_mul(e, tw), dim=1, keep_dim=True), tb)
    neg_logit = L.elementwise_add(L.reshape(L.matmul(L.reshape(e, shape=[-1, 1, width]), nw, transpose_y=True),
                                            shape=[-1, neg]), nb)
    ones = L.fill_constant_batch_size_like(true_logit, shape=[-1, 1], value=1.0, dtype="float32")
    zeros = L.fill_constant_batch_size_like(true_logit, shape=[-1, neg], value=0.0, dtype="float32")
    cost = L.elementwise_add(L.reduce_sum(L.sigmoid_cross_entropy_with_logits(true_logit, ones), dim=1),
                             L.reduce_sum(L.sigmoid_cross_entropy_with_logits(neg_logit, zeros), dim=1))
    lr = L.exponential_decay(learning_rate=1.0, decay_steps=2100, decay_rate=0.1, staircase=True)
    fluid.optimizer.SGD(learning_rate=lr).minimize(L.reduce_mean(cost))


CASES = {
    "exp_decay_sgd_async": (exp_decay_sgd, False),
    "piecewise_sgd": (piecewise_sgd, True),
    "piecewise_momentum_l2": (piecewise_momentum_l2, True),
    "rmsprop": (rmsprop, True),
    "sparse_tables": (sparse_tables, True),
}


def build(fluid, case):
    main, startup = fluid.Program(), fluid.Program()
    main.random_seed = 1
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        CASES[case][0](fluid)
    return main, startup


def _blocks(prog):
    return [[b.idx, b.parent_idx, [op.type for op in b.ops]] for b in prog.blocks]


def _ops_outs(prog):
    return [[op.type, list(op.output_arg_names)] for op in prog.global_block().ops]


def _attr(op, name):
    return op.all_attrs()[name] if hasattr(op, "all_attrs") else op.attr(name)


def _overview(prog):
    ov = prog._parameters_on_pservers
    return [[v.vtype, v.origin.name, [int(d) for d in v.origin.shape], v.slice.name, [int(d) for d in v.slice.shape],
             bool(v.is_slice), v.endpoint] for v in ov.distributed_vars]


def record(fluid, case):
    """{"trainer", "trainer_startup", "pserver:<ep>", "pserver_startup:<ep>", "listen:<ep>", "overview"}.
    A fresh transpiler per role, as Paddle's own transpiler tests: Paddle's getters edit what the others
    read."""
    sync = CASES[case][1]
    out = {}

    def transpiled():
        main, startup = build(fluid, case)
        t = fluid.DistributeTranspiler()
        t.transpile(0, program=main, startup_program=startup, pservers=",".join(EPS), trainers=2, sync_mode=sync)
        return t, main, startup

    t, main, startup = transpiled()
    trainer = t.get_trainer_program(wait_port=False)
    out["trainer"] = _blocks(trainer)
    out["trainer_startup"] = _ops_outs(startup)
    for ep in EPS:
        t, main, startup = transpiled()
        ps = t.get_pserver_program(ep)
        pstart = t.get_startup_program(ep, ps)
        out["pserver:" + ep] = _blocks(ps)
        out["pserver_startup:" + ep] = _ops_outs(pstart)
        ls = ps.global_block().ops[0]
        out["listen:" + ep] = {"optimize_blocks": [b.idx for b in _attr(ls, "optimize_blocks")],
                               "lr_decay_block_id": _attr(ls, "lr_decay_block_id"),
                               "grad_to_block_id": sorted(_attr(ls, "grad_to_block_id"))}
        out["overview"] = _overview(ps)
    return out
