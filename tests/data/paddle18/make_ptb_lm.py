"""A recurrent language model built by hand the way the Fluid 1.x PTB model is (an LSTM cell from concat, matmul,
elementwise_add, split and sigmoid/tanh at each of the unrolled time steps, in-place reshapes, a softmax
projection; loss = reduce_sum of the per-step reduce_mean of softmax_with_cross_entropy), trained with a global
norm gradient clip (set_gradient_clip), the learning rate fed each step, SGD and a data-parallel CompiledProgram.
Paddle 1.8.5's losses of STEPS steps from fixed weights and data. Record (outside CI) with

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_ptb_lm.py

run(fluid) runs unchanged on paddle_compat in tests/unit/test_ptb_lm_paddle18.py. The clip is active at every
step (its norm sums ~60k squares), so its sum order (Paddle's Eigen order) decides whether the runs agree.
"""

import json
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
VOCAB, HIDDEN, LAYERS, T, BATCH, STEPS, CLIP, INIT = 5000, 128, 2, 12, 16, 14, 5.0, 0.1


def _params():
    """Parameter values by name, drawn from one RandomState in a fixed order."""
    rs = np.random.RandomState(7)
    u = lambda *shape: rs.uniform(-INIT, INIT, shape).astype("float32")  # noqa: E731
    p = {"embedding_para": u(VOCAB, HIDDEN)}
    for k in range(LAYERS):
        p["lstm_w_%d" % k] = u(2 * HIDDEN, 4 * HIDDEN)
        p["lstm_b_%d" % k] = np.zeros(4 * HIDDEN, "float32")
    p["softmax_weight"] = u(HIDDEN, VOCAB)
    p["softmax_bias"] = u(VOCAB)
    return p


def _batches():
    rs = np.random.RandomState(11)
    words = np.minimum((rs.pareto(1.1, BATCH * (T * STEPS + 1)) * 20).astype("int64"), VOCAB - 1)
    data = words.reshape(BATCH, -1)
    for s in range(STEPS):
        yield data[:, s * T:(s + 1) * T], data[:, s * T + 1:(s + 1) * T + 1]


def build(fluid):
    L = fluid.layers
    x = fluid.data("x", [None, T, 1], "int64")
    y = fluid.data("y", [None, 1], "int64")
    h0 = fluid.data("init_hidden", [None, LAYERS, HIDDEN], "float32")
    c0 = fluid.data("init_cell", [None, LAYERS, HIDDEN], "float32")
    h0 = L.reshape(L.transpose(h0, [1, 0, 2]), [LAYERS, -1, HIDDEN])
    c0 = L.reshape(L.transpose(c0, [1, 0, 2]), [LAYERS, -1, HIDDEN])
    emb = L.embedding(x, [VOCAB, HIDDEN], param_attr=fluid.ParamAttr(name="embedding_para"))
    emb = L.reshape(emb, [-1, T, HIDDEN], inplace=True)
    ws, bs, hs, cs = [], [], [], []
    for k in range(LAYERS):
        ws.append(L.create_parameter([2 * HIDDEN, 4 * HIDDEN], "float32", name="lstm_w_%d" % k))
        bs.append(L.create_parameter([4 * HIDDEN], "float32", name="lstm_b_%d" % k))
        hs.append(L.reshape(L.slice(h0, axes=[0], starts=[k], ends=[k + 1]), [-1, HIDDEN], inplace=True))
        cs.append(L.reshape(L.slice(c0, axes=[0], starts=[k], ends=[k + 1]), [-1, HIDDEN], inplace=True))
    outs = []
    for step_in in L.split(emb, num_or_sections=T, dim=1):
        h = L.reshape(step_in, [-1, HIDDEN], inplace=True)
        for k in range(LAYERS):
            gates = L.elementwise_add(L.matmul(L.concat([h, hs[k]], 1), ws[k]), bs[k])
            gi, gj, gf, go = L.split(gates, num_or_sections=4, dim=-1)
            cs[k] = cs[k] * L.sigmoid(gf) + L.sigmoid(gi) * L.tanh(gj)
            hs[k] = h = L.tanh(cs[k]) * L.sigmoid(go)
        outs.append(h)
    last_h = L.transpose(L.reshape(L.concat(hs, 1), [-1, LAYERS, HIDDEN], inplace=True), [1, 0, 2])
    last_c = L.transpose(L.reshape(L.concat(cs, 1), [-1, LAYERS, HIDDEN]), [1, 0, 2])
    seq = L.transpose(L.reshape(L.concat(outs, 0), [T, -1, HIDDEN], inplace=True), [1, 0, 2])
    seq = L.reshape(seq, [-1, T, HIDDEN], inplace=True)
    sw = L.create_parameter([HIDDEN, VOCAB], "float32", name="softmax_weight")
    sb = L.create_parameter([VOCAB], "float32", name="softmax_bias")
    logits = L.reshape(L.elementwise_add(L.matmul(seq, sw), sb), [-1, VOCAB], inplace=True)
    loss = L.reshape(L.softmax_with_cross_entropy(logits, y), [-1, T], inplace=True)
    loss = L.reduce_sum(L.reduce_mean(loss, dim=[0]))
    last_h = L.transpose(last_h, [1, 0, 2])
    last_c = L.transpose(last_c, [1, 0, 2])
    return loss, last_h, last_c


def run(fluid, steps=STEPS):
    """-> (losses, global norms of the clip) of `steps` training steps."""
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        loss, last_h, last_c = build(fluid)
        fluid.clip.set_gradient_clip(clip=fluid.clip.GradientClipByGlobalNorm(clip_norm=CLIP))
        lr = fluid.layers.create_global_var(name="learning_rate", shape=[1], value=1.0, dtype="float32",
                                            persistable=True)
        fluid.optimizer.SGD(learning_rate=lr).minimize(loss)
    norm = [op for op in main.global_block().ops if op.type == "sqrt"][-1].output("Out")[0]
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    losses, norms = [], []
    with fluid.scope_guard(scope):
        exe.run(startup)
        for name, value in _params().items():
            scope.find_var(name).get_tensor().set(value, fluid.CPUPlace())
        prog = fluid.compiler.CompiledProgram(main).with_data_parallel(loss_name=loss.name)
        h = np.zeros((BATCH, LAYERS, HIDDEN), "float32")
        c = np.zeros((BATCH, LAYERS, HIDDEN), "float32")
        for s, (bx, by) in enumerate(_batches()):
            if s == steps:
                break
            feed = {"x": bx.reshape(-1, T, 1), "y": by.reshape(-1, 1), "init_hidden": h, "init_cell": c,
                    "learning_rate": np.array([1.0 if s < 8 else 0.5], "float32")}
            out = exe.run(prog, feed=feed, fetch_list=[loss.name, last_h.name, last_c.name, norm])
            losses.append(float(np.array(out[0]).ravel()[0]))
            h, c = np.array(out[1]), np.array(out[2])
            norms.append(float(np.array(out[3]).ravel()[0]))
    return losses, norms


if __name__ == "__main__":
    import paddle.fluid as fluid
    losses, norms = run(fluid)
    with open(os.path.join(HERE, "ptb_lm.json"), "w") as fh:
        json.dump({"losses": losses, "norms": norms}, fh, indent=0)
    print("losses", ["%.6g" % v for v in losses])
    print("norms", ["%.6g" % v for v in norms])
