"""Records training programs that Paddle 1.8.5 itself wrote, with their backward and optimizer ops, and the
numbers 1.8.5 reaches running them (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_written_programs.py

For each small model (fit_a_line, a recognize_digits MLP, a conv net, word2vec, a sparse CTR model, one
that uses the remaining common ops, and two gradient penalties whose programs hold 1.8.5's *_grad_grad ops)
writes written_programs/<model>/ (`make_written_programs.py <model> ...` records only those):
  main.pdmodel     main_program.desc.serialize_to_string() after minimize (forward, grad ops, optimizer ops)
  params/          fluid.io.save_persistables after the startup program (parameters, optimizer state)
  data.npz         the fed batches: <feed>__<step> (and <feed>__<step>__lod for LoD inputs)
  expected.npz     loss__<step>, grad__<name>__<step> for the fetched @GRAD variables, final__<name> for every
                   persistable float variable after the last step
  meta.json        feed names, loss name, fetched grad names, the op types of the program
  expected_dp2.npz (digits_mlp, conv_net, ctr_sparse) the same program parsed back and run on 2 CPU places
                   (CompiledProgram.with_data_parallel): loss__<step> (one per place), final__<name>
and written_programs/gather_overwrite.json: gather's gradient where an index repeats, in both modes.
"""

import json
import os
import shutil
import sys

import numpy as np
import paddle
import paddle.fluid as fluid

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "written_programs")
STEPS = 5
BATCH = 8


def fit_a_line(rng):
    x = fluid.data("x", [None, 13], "float32")
    y = fluid.data("y", [None, 1], "float32")
    pred = fluid.layers.fc(x, 1)
    loss = fluid.layers.mean(fluid.layers.square_error_cost(pred, y))
    fluid.optimizer.SGD(0.01).minimize(loss)
    feeds = [{"x": rng.randn(BATCH, 13).astype("float32"), "y": rng.randn(BATCH, 1).astype("float32")}
             for _ in range(STEPS)]
    return loss, feeds, ["fc_0.w_0@GRAD", "fc_0.b_0@GRAD"]


def digits_mlp(rng):
    img = fluid.data("img", [None, 64], "float32")
    label = fluid.data("label", [None, 1], "int64")
    h = fluid.layers.fc(img, 32, act="relu")
    h = fluid.layers.fc(h, 32, act="relu")
    pred = fluid.layers.fc(h, 10, act="softmax")
    loss = fluid.layers.mean(fluid.layers.cross_entropy(pred, label))
    fluid.layers.accuracy(pred, label)
    fluid.optimizer.Adam(0.01).minimize(loss)
    feeds = [{"img": rng.randn(BATCH, 64).astype("float32"),
              "label": rng.randint(0, 10, (BATCH, 1)).astype("int64")} for _ in range(STEPS)]
    return loss, feeds, ["fc_0.w_0@GRAD", "fc_2.b_0@GRAD"]


def conv_net(rng):
    img = fluid.data("img", [None, 1, 8, 8], "float32")
    label = fluid.data("label", [None, 1], "int64")
    c = fluid.layers.conv2d(img, num_filters=4, filter_size=3, padding=1)
    b = fluid.layers.batch_norm(c, act="relu")
    p = fluid.layers.pool2d(b, pool_size=2, pool_stride=2, pool_type="max")
    p = fluid.layers.dropout(p, dropout_prob=0.0)
    p2 = fluid.layers.pool2d(p, pool_size=2, pool_stride=2, pool_type="avg")
    pred = fluid.layers.fc(p2, 10, act="softmax")
    loss = fluid.layers.mean(fluid.layers.cross_entropy(pred, label))
    fluid.optimizer.Momentum(0.05, 0.9).minimize(loss)
    feeds = [{"img": rng.randn(BATCH, 1, 8, 8).astype("float32"),
              "label": rng.randint(0, 10, (BATCH, 1)).astype("int64")} for _ in range(STEPS)]
    return loss, feeds, ["conv2d_0.w_0@GRAD", "batch_norm_0.w_0@GRAD", "fc_0.w_0@GRAD"]


def word2vec(rng):
    dict_size, emb = 40, 8
    words = [fluid.data("w%d" % i, [None, 1], "int64") for i in range(5)]
    embs = [fluid.layers.embedding(w, [dict_size, emb], param_attr="shared_w") for w in words[:4]]
    h = fluid.layers.fc(fluid.layers.concat(embs, axis=1), 16, act="sigmoid")
    pred = fluid.layers.fc(h, dict_size, act="softmax")
    loss = fluid.layers.mean(fluid.layers.cross_entropy(pred, words[4]))
    fluid.optimizer.SGD(0.1).minimize(loss)
    feeds = [{"w%d" % i: rng.randint(0, dict_size, (BATCH, 1)).astype("int64") for i in range(5)}
             for _ in range(STEPS)]
    return loss, feeds, ["shared_w@GRAD", "fc_0.w_0@GRAD", "fc_1.b_0@GRAD"]


def ctr_sparse(rng):
    dict_size, emb = 30, 4
    slots = [fluid.data("s%d" % i, [None, 1], "int64", lod_level=1) for i in range(2)]
    dense = fluid.data("dense", [None, 3], "float32")
    label = fluid.data("label", [None, 1], "int64")
    pooled = []
    for s in slots:
        e = fluid.layers.embedding(s, [dict_size, emb], is_sparse=True, param_attr="emb")
        pooled.append(fluid.layers.sequence_pool(e, "sum"))
    h = fluid.layers.fc(fluid.layers.concat(pooled + [dense], axis=1), 8, act="relu")
    pred = fluid.layers.fc(h, 2, act="softmax")
    loss = fluid.layers.reduce_mean(fluid.layers.cross_entropy(pred, label))
    fluid.optimizer.Adam(0.05).minimize(loss)
    feeds = []
    for _ in range(STEPS):
        f = {"dense": rng.rand(BATCH, 3).astype("float32"), "label": rng.randint(0, 2, (BATCH, 1)).astype("int64")}
        for i in range(2):
            lens = rng.randint(1, 4, BATCH)
            f["s%d" % i] = (rng.randint(0, dict_size, (int(lens.sum()), 1)).astype("int64"),
                            [[0] + np.cumsum(lens).tolist()])
        feeds.append(f)
    return loss, feeds, ["fc_0.w_0@GRAD", "fc_1.b_0@GRAD"]


def misc_ops(rng):
    x = fluid.data("x", [None, 6], "float32")
    z = fluid.data("z", [None, 6], "float32")
    label = fluid.data("label", [None, 1], "int64")
    w = fluid.layers.create_parameter([6, 6], "float32", name="w")
    a = fluid.layers.tanh(fluid.layers.matmul(x, w, transpose_y=True))
    a = fluid.layers.elementwise_mul(a, fluid.layers.sigmoid(z))
    a = fluid.layers.elementwise_sub(a, fluid.layers.scale(z, scale=0.5, bias=0.1))
    r = fluid.layers.transpose(fluid.layers.reshape(a, [-1, 2, 3]), [0, 2, 1])
    r = fluid.layers.reshape(r, [-1, 6])
    logits = fluid.layers.fc(fluid.layers.concat([r, a], axis=1), 4)
    ce = fluid.layers.softmax_with_cross_entropy(logits, label)
    extra = fluid.layers.reduce_sum(fluid.layers.square(a), dim=1, keep_dim=True)
    loss = fluid.layers.reduce_mean(ce + fluid.layers.softmax(logits)[:, :1] * 0 + 0.01 * extra)
    fluid.optimizer.Adam(0.02).minimize(loss)
    feeds = [{"x": rng.randn(BATCH, 6).astype("float32"), "z": rng.randn(BATCH, 6).astype("float32"),
              "label": rng.randint(0, 4, (BATCH, 1)).astype("int64")} for _ in range(STEPS)]
    return loss, feeds, ["w@GRAD", "fc_0.w_0@GRAD"]


def grad_forms(rng):
    """Ops whose backward Paddle writes as ordinary op types (split -> concat and fill_zeros_like, sum/scale ->
    scale, cast -> cast, assign -> assign) besides more *_grad types (gather, exp, layer_norm, div)."""
    x = fluid.data("x", [None, 6], "float32")
    idx = fluid.data("idx", [None], "int64")
    label = fluid.data("label", [None, 1], "int64")
    w = fluid.layers.create_parameter([6, 8], "float32", name="w")
    h = fluid.layers.matmul(x, w)
    a, b = fluid.layers.split(h, 2, dim=1)
    c = fluid.layers.sums([a, b])
    d = fluid.layers.scale(c, scale=2.0)
    e = fluid.layers.cast(fluid.layers.cast(d, "float64"), "float32")
    f = fluid.layers.assign(e)
    u1, u2 = fluid.layers.unstack(fluid.layers.stack([f, a], axis=1), axis=1)
    g = fluid.layers.elementwise_div(u1, fluid.layers.exp(u2 * 0.1) + 1.0)
    g = fluid.layers.layer_norm(fluid.layers.gather(g, idx))
    logits = fluid.layers.fc(g, 3)
    loss = fluid.layers.mean(fluid.layers.softmax_with_cross_entropy(logits, label))
    # an output of split without a gradient: Paddle fills it with fill_zeros_like for split's concat
    loss = loss + 0.1 * fluid.layers.reduce_mean(fluid.layers.split(h, [3, 5], dim=1)[0])
    fluid.optimizer.SGD(0.1).minimize(loss)
    feeds = [{"x": rng.randn(BATCH, 6).astype("float32"), "idx": rng.randint(0, BATCH, BATCH).astype("int64"),
              "label": rng.randint(0, 3, (BATCH, 1)).astype("int64")} for _ in range(STEPS)]
    return loss, feeds, ["w@GRAD", "layer_norm_0.w_0@GRAD"]


def control_flow(rng):
    """Backward through control flow: a cond (conditional_block_grad) and a StaticRNN (recurrent_grad)."""
    x = fluid.data("x", [None, 4], "float32")
    seq = fluid.data("seq", [3, None, 4], "float32")     # time-major for StaticRNN
    seq.stop_gradient = False    # 1.8.5's recurrent_grad refuses an input without a gradient
    flag = fluid.data("flag", [1], "float32")
    w = fluid.layers.create_parameter([4, 4], "float32", name="w")
    h = fluid.layers.matmul(x, w)
    zero = fluid.layers.fill_constant([1], "float32", 0.0)
    h = fluid.layers.cond(fluid.layers.less_than(zero, flag), lambda: fluid.layers.tanh(h),
                          lambda: fluid.layers.scale(h, 0.5))
    rnn = fluid.layers.StaticRNN()
    with rnn.step():
        xt = rnn.step_input(seq)
        prev = rnn.memory(init=h)
        cur = fluid.layers.fc([xt, prev], 4, act="tanh")
        rnn.update_memory(prev, cur)
        rnn.step_output(cur)
    out = rnn()
    loss = fluid.layers.reduce_mean(fluid.layers.square(out))
    fluid.optimizer.SGD(0.2).minimize(loss)
    feeds = [{"x": rng.randn(BATCH, 4).astype("float32"), "seq": rng.randn(3, BATCH, 4).astype("float32"),
              "flag": np.array([1.0 if s % 2 else -1.0], "float32")} for s in range(STEPS)]
    return loss, feeds, ["w@GRAD"]


def while_rnn(rng):
    """Backward through a While loop: a DynamicRNN over LoD sequences (while_grad, tensor arrays)."""
    words = fluid.data("words", [None, 1], "int64", lod_level=1)
    label = fluid.data("label", [None, 1], "int64")
    emb = fluid.layers.embedding(words, [20, 6])
    drnn = fluid.layers.DynamicRNN()
    with drnn.block():
        xt = drnn.step_input(emb)
        prev = drnn.memory(shape=[6], value=0.0)
        cur = fluid.layers.fc([xt, prev], 6, act="tanh")
        drnn.update_memory(prev, cur)
        drnn.output(cur)
    last = fluid.layers.sequence_last_step(drnn())
    pred = fluid.layers.fc(last, 2, act="softmax")
    loss = fluid.layers.mean(fluid.layers.cross_entropy(pred, label))
    fluid.optimizer.Adam(0.05).minimize(loss)
    feeds = []
    for _ in range(STEPS):
        lens = rng.randint(1, 5, BATCH)
        feeds.append({"words": (rng.randint(0, 20, (int(lens.sum()), 1)).astype("int64"),
                                [[0] + np.cumsum(lens).tolist()]),
                      "label": rng.randint(0, 2, (BATCH, 1)).astype("int64")})
    return loss, feeds, ["fc_1.w_0@GRAD", "embedding_0.w_0@GRAD"]


def grad_penalty(rng):
    """A gradient penalty (as in WGAN-GP): fluid.gradients of the output with respect to the input, squared into
    the loss; minimize then differentiates those grad ops, and Paddle writes their *_grad_grad ops."""
    x = fluid.data("x", [None, 4], "float32")
    x.stop_gradient = False
    y = fluid.data("y", [None, 1], "float32")
    h = fluid.layers.fc(x, 6, act="relu")
    h = fluid.layers.leaky_relu(fluid.layers.fc(h, 5), alpha=0.2)
    h = fluid.layers.elementwise_mul(h, fluid.layers.square(h))
    out = fluid.layers.fc(fluid.layers.elu(h, alpha=0.5), 1)
    dx, = fluid.gradients(out, x)
    penalty = fluid.layers.reduce_mean(fluid.layers.square(dx))
    loss = fluid.layers.mean(fluid.layers.square_error_cost(out, y)) + 0.5 * penalty
    fluid.optimizer.SGD(0.05).minimize(loss)
    feeds = [{"x": rng.randn(BATCH, 4).astype("float32"), "y": rng.randn(BATCH, 1).astype("float32")}
             for _ in range(STEPS)]
    return loss, feeds, ["fc_0.w_0@GRAD", "fc_1.w_0@GRAD", "fc_2.w_0@GRAD", "fc_0.b_0@GRAD"]


def grad_penalty_conv(rng):
    """The other double-grad ops of 1.8.5 (conv2d, instance_norm, reshape2, sqrt, elementwise_div and _sub
    *_grad_grad) from a gradient penalty on an image input."""
    img = fluid.data("img", [None, 2, 5, 5], "float32")
    img.stop_gradient = False
    y = fluid.data("y", [None, 1], "float32")
    c = fluid.layers.conv2d(img, num_filters=3, filter_size=3, padding=1)
    c = fluid.layers.instance_norm(c)
    r = fluid.layers.reshape(c, [-1, 75])
    s = fluid.layers.sqrt(fluid.layers.scale(fluid.layers.square(r), bias=1.0))
    d = fluid.layers.elementwise_sub(fluid.layers.elementwise_div(r, s), fluid.layers.scale(r, 0.1))
    out = fluid.layers.fc(d, 1)
    dimg, = fluid.gradients(out, img)
    penalty = fluid.layers.reduce_mean(fluid.layers.square(dimg))
    loss = fluid.layers.mean(fluid.layers.square_error_cost(out, y)) + 0.5 * penalty
    fluid.optimizer.SGD(0.05).minimize(loss)
    feeds = [{"img": rng.randn(BATCH, 2, 5, 5).astype("float32"), "y": rng.randn(BATCH, 1).astype("float32")}
             for _ in range(STEPS)]
    return loss, feeds, ["conv2d_0.w_0@GRAD", "instance_norm_0.w_0@GRAD", "fc_0.w_0@GRAD"]


MODELS = [fit_a_line, digits_mlp, conv_net, word2vec, ctr_sparse, misc_ops, grad_forms, control_flow, while_rnn,
          grad_penalty, grad_penalty_conv]


def _feed_value(v):
    if isinstance(v, tuple):
        t = fluid.LoDTensor()
        t.set(v[0], fluid.CPUPlace())
        t.set_recursive_sequence_lengths([np.diff(v[1][0]).tolist()])
        return t
    return v


def record(build, seed):
    rng = np.random.RandomState(seed)
    main, startup = fluid.Program(), fluid.Program()
    main.random_seed = startup.random_seed = 7
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        loss, feeds, grads = build(rng)
    d = os.path.join(OUT, build.__name__)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    with open(os.path.join(d, "main.pdmodel"), "wb") as f:
        f.write(main.desc.serialize_to_string())
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exp, data = {}, {}
    with fluid.scope_guard(scope):
        exe.run(startup)
        fluid.io.save_persistables(exe, os.path.join(d, "params"), main)
        for step, feed in enumerate(feeds):
            for k, v in feed.items():
                if isinstance(v, tuple):
                    data["%s__%d" % (k, step)] = v[0]
                    data["%s__%d__lod" % (k, step)] = np.array(v[1][0], "int64")
                else:
                    data["%s__%d" % (k, step)] = v
            out = exe.run(main, feed={k: _feed_value(v) for k, v in feed.items()}, fetch_list=[loss.name] + grads)
            exp["loss__%d" % step] = np.array(out[0])
            for g, a in zip(grads, out[1:]):
                exp["grad__%s__%d" % (g, step)] = np.array(a)
        persist = sorted(v.name for v in main.list_vars() if v.persistable and v.name not in ("feed", "fetch"))
        for n in persist:
            a = np.array(scope.find_var(n).get_tensor())
            if a.dtype == np.float32:
                exp["final__" + n] = a
    np.savez_compressed(os.path.join(d, "data.npz"), **data)
    np.savez_compressed(os.path.join(d, "expected.npz"), **exp)
    meta = {"paddle_version": paddle.__version__, "made_by": "tests/data/paddle18/make_written_programs.py",
            "feeds": sorted(feeds[0]), "lod_feeds": sorted(k for k, v in feeds[0].items() if isinstance(v, tuple)),
            "loss": loss.name, "grads": grads, "steps": STEPS,
            "op_types": sorted(set(op.type for op in main.global_block().ops))}
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
    print(build.__name__, [float(exp["loss__%d" % s]) for s in range(STEPS)])
    return meta["op_types"]


def gather_overwrite():
    """gather's gradient with a repeated index: overwrite=True (the default) keeps the last occurrence's row."""
    rec = {"x": np.zeros((3, 2)).tolist(), "index": [0, 2, 0, 1, 0], "w": np.arange(10.0).reshape(5, 2).tolist()}
    for ow in (True, False):
        main, startup = fluid.Program(), fluid.Program()
        with fluid.program_guard(main, startup), fluid.unique_name.guard():
            x = fluid.data("x", [3, 2], "float32")
            x.stop_gradient = False
            i = fluid.data("i", [5], "int64")
            w = fluid.data("w", [5, 2], "float32")
            y = fluid.layers.gather(x, i, overwrite=ow)
            g = fluid.gradients(fluid.layers.reduce_sum(y * w), x)[0]
        out = fluid.Executor(fluid.CPUPlace()).run(
            main, feed={"x": np.array(rec["x"], "float32"), "i": np.array(rec["index"], "int64"),
                        "w": np.array(rec["w"], "float32")}, fetch_list=[g])
        rec["x_grad_overwrite_%s" % ow] = np.array(out[0]).tolist()
    with open(os.path.join(OUT, "gather_overwrite.json"), "w") as f:
        json.dump(rec, f, indent=1, sort_keys=True)


DATA_PARALLEL = ["digits_mlp", "conv_net", "ctr_sparse"]


def _run_data_parallel(d, meta, data):
    with open(os.path.join(d, "main.pdmodel"), "rb") as f:
        prog = fluid.Program.parse_from_string(f.read())
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exp = {}
    with fluid.scope_guard(scope):
        fluid.io.load_persistables(exe, os.path.join(d, "params"), prog)
        compiled = fluid.CompiledProgram(prog).with_data_parallel(loss_name=meta["loss"],
                                                                  places=[fluid.CPUPlace()] * 2)
        for step in range(meta["steps"]):
            feed = {}
            for k in meta["feeds"]:
                a = data["%s__%d" % (k, step)]
                if k in meta["lod_feeds"]:
                    a = _feed_value((a, [data["%s__%d__lod" % (k, step)].tolist()]))
                feed[k] = a
            exp["loss__%d" % step] = np.array(exe.run(compiled, feed=feed, fetch_list=[meta["loss"]])[0])
        for v in prog.list_vars():
            if v.persistable and v.name not in ("feed", "fetch"):
                a = np.array(scope.find_var(v.name).get_tensor())
                if a.dtype == np.float32:
                    exp["final__" + v.name] = a
    return exp


def record_data_parallel(model, runs=7):
    """The written program as a user would run it again: parsed, its persistables loaded, on 2 places.
    1.8.5's ParallelExecutor updates a row-sparse gradient on 2 CPU places with a race (ctr_sparse: runs
    differ from step 2 on, by about 1e-4): the outcome most runs reach is recorded, with how many did."""
    d = os.path.join(OUT, model)
    with open(os.path.join(d, "meta.json")) as f:
        meta = json.load(f)
    data = np.load(os.path.join(d, "data.npz"))
    outcomes = {}
    for _ in range(runs):
        exp = _run_data_parallel(d, meta, data)
        key = b"".join(exp[k].tobytes() for k in sorted(exp))
        outcomes.setdefault(key, [exp, 0])[1] += 1
    exp, agreeing = max(outcomes.values(), key=lambda e: e[1])
    exp["runs"], exp["runs_agreeing"] = np.array(runs), np.array(agreeing)
    np.savez_compressed(os.path.join(d, "expected_dp2.npz"), **exp)
    print(model, "2 places: %d of %d runs agree" % (agreeing, runs),
          [exp["loss__%d" % s].ravel().tolist() for s in range(meta["steps"])])


def main():
    only = sys.argv[1:]      # model names: record those only (the others' files stay as they are)
    if not only:
        gather_overwrite()
    types = set()
    for i, build in enumerate(MODELS):
        if not only or build.__name__ in only:
            types.update(record(build, 100 + i))
    for model in DATA_PARALLEL:
        if not only or model in only:
            record_data_parallel(model)
    print("op types:", sorted(types))


if __name__ == "__main__":
    main()
