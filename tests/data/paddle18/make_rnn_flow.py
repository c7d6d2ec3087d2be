"""Records DynamicRNN / StaticRNN / IfElse / lstm_unit / rnn(LSTMCell, GRUCell) /
dynamic_lstmp / contrib basic_gru, basic_lstm numbers from real PaddlePaddle 1.8.5 (run outside CI):

    cd /tmp && GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python \
        <repo>/tests/data/paddle18/make_rnn_flow.py

Writes rnn_flow.npz beside this script. The programs are built by the functions below, which take the fluid
module: tests/unit/test_rnn_flow_paddle18.py builds the very same programs with paddle_compat. Each case
records the op types of every block, and fetches its outputs and the gradients of sum(square(out)) (over all
outputs) w.r.t. every fed float input and every parameter (parameters are set to fixed values through the
scope after the startup program).
"""

import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
LENS = [3, 1, 4, 2]
N, T, D, H = len(LENS), sum(LENS), 3, 4


def vals(shape, seed, lo=-0.8, hi=0.8):
    return np.random.RandomState(seed).uniform(lo, hi, size=shape).astype("float32")


def _lod_data(fluid, name, width):
    v = fluid.layers.data(name, shape=[width], dtype="float32", lod_level=1)
    v.stop_gradient = False
    return v


def _dense(fluid, name, shape):
    v = fluid.layers.data(name, shape=list(shape), dtype="float32", append_batch_size=False)
    v.stop_gradient = False
    return v


def dynamic_rnn_basic(fluid):
    """fc step over a LoD input, memory from a reordered h0, a static input, two outputs."""
    L = fluid.layers
    x, h0, s = _lod_data(fluid, "x", D), _dense(fluid, "h0", [N, H]), _dense(fluid, "s", [N, 2])
    drnn = L.DynamicRNN()
    with drnn.block():
        xt = drnn.step_input(x)
        st = drnn.static_input(s)
        h = drnn.memory(init=h0, need_reorder=True)
        nh = L.fc([xt, h, st], size=H, act="tanh")
        drnn.update_memory(h, nh)
        drnn.output(nh, L.fc(nh, size=2))
    return drnn()


def dynamic_rnn_lstm(fluid):
    """An LSTM step written with fc (the book's rnn_encoder_decoder style), memories from shape/value."""
    L = fluid.layers
    x = _lod_data(fluid, "x", D)
    drnn = L.DynamicRNN()
    with drnn.block():
        xt = drnn.step_input(x)
        h = drnn.memory(shape=[H], value=0.0)
        c = drnn.memory(shape=[H], value=0.25)

        def gate(act):
            return L.fc([xt, h], size=H, act=act)
        f, i, o, cand = gate("sigmoid"), gate("sigmoid"), gate("sigmoid"), gate("tanh")
        nc = L.sums([L.elementwise_mul(f, c), L.elementwise_mul(i, cand)])
        nh = L.elementwise_mul(o, L.tanh(nc))
        drnn.update_memory(c, nc)
        drnn.update_memory(h, nh)
        drnn.output(nh)
    return [L.sequence_pool(drnn(), "sum")]


def static_rnn(fluid):
    """StaticRNN over a time-major [4, N, D] input: one memory from h0, one from batch_ref, two outputs."""
    L = fluid.layers
    x, h0 = _dense(fluid, "xs", [4, N, D]), _dense(fluid, "h0", [N, H])
    rnn = L.StaticRNN()
    with rnn.step():
        xt = rnn.step_input(x)
        h = rnn.memory(init=h0)
        acc = rnn.memory(shape=[-1, 2], batch_ref=xt, init_value=1.0, ref_batch_dim_idx=0)
        nh = L.fc([xt, h], size=H, act="tanh")
        nacc = L.elementwise_add(acc, L.fc(nh, size=2))
        rnn.update_memory(h, nh)
        rnn.update_memory(acc, nacc)
        rnn.step_output(nh)
        rnn.step_output(nacc)
    return rnn()


def ifelse(fluid):
    """Rows with x[:, 0] < 0.1 through fc+tanh, the others through a scaled fc."""
    L = fluid.layers
    x = _dense(fluid, "xd", [6, D])
    lim = L.fill_constant([6, 1], "float32", 0.1)
    cond = L.less_than(L.slice(x, axes=[1], starts=[0], ends=[1]), lim)
    ie = L.IfElse(cond)
    with ie.true_block():
        ie.output(L.fc(ie.input(x), size=2, act="tanh"))
    with ie.false_block():
        ie.output(L.scale(L.fc(ie.input(x), size=2), 0.5))
    return ie()


def lstm_unit(fluid):
    L = fluid.layers
    x, h, c = _dense(fluid, "xd", [6, D]), _dense(fluid, "hp", [6, H]), _dense(fluid, "cp", [6, H])
    return list(L.lstm_unit(x, h, c, forget_bias=0.5))


def rnn_lstm_cell(fluid):
    """rnn(LSTMCell) over batch-major [N, 5, D] with sequence lengths, zero initial states."""
    L = fluid.layers
    x = _dense(fluid, "xb", [N, 5, D])
    lens = fluid.layers.data("lens", shape=[N], dtype="int64", append_batch_size=False)
    out, (h, c) = L.rnn(L.LSTMCell(H), x, sequence_length=lens)
    return [out, h, c]


def rnn_gru_cell_reverse(fluid):
    """rnn(GRUCell) time-major, reversed, from a fed initial state."""
    L = fluid.layers
    x, h0 = _dense(fluid, "xs", [4, N, D]), _dense(fluid, "h0", [N, H])
    out, h = L.rnn(L.GRUCell(H), x, initial_states=h0, time_major=True, is_reverse=True)
    return [out, h]


def dynamic_lstmp(fluid):
    """Peepholes, fed initial projection and cell, both clips; and a reversed run without peepholes."""
    L = fluid.layers
    x = _lod_data(fluid, "xl", 4 * H)
    h0, c0 = L.data("r0", shape=[2], dtype="float32"), L.data("c0", shape=[H], dtype="float32")
    h0.stop_gradient = c0.stop_gradient = False   # [-1, P] and [-1, H]: Paddle compares with the input's batch
    p, c = L.dynamic_lstmp(x, 4 * H, 2, h_0=h0, c_0=c0, cell_clip=0.6, proj_clip=0.5)
    p2, c2 = L.dynamic_lstmp(x, 4 * H, 3, use_peepholes=False, is_reverse=True, proj_activation="identity")
    return [p, c, p2, c2]


def basic_gru(fluid):
    """contrib basic_gru: 2 layers, bidirectional, fed initial hidden, sequence lengths."""
    x = _dense(fluid, "xb", [N, 5, D])
    h0 = _dense(fluid, "g0", [4, N, H])
    lens = fluid.layers.data("lens", shape=[N], dtype="int64", append_batch_size=False)
    out, last = fluid.contrib.layers.basic_gru(x, h0, H, num_layers=2, sequence_length=lens, bidirectional=True)
    return [out, last]


def basic_lstm(fluid):
    """contrib basic_lstm: 2 layers, bidirectional, zero initial states, time-major."""
    x = _dense(fluid, "xs", [4, N, D])
    out, h, c = fluid.contrib.layers.basic_lstm(x, None, None, H, num_layers=2, bidirectional=True,
                                                batch_first=False, forget_bias=0.5)
    return [out, h, c]


def feeds(fluid):
    x = vals([T, D], 1)
    return {"x": fluid.create_lod_tensor(x, [LENS], fluid.CPUPlace()), "h0": vals([N, H], 2), "s": vals([N, 2], 3),
            "xs": vals([4, N, D], 4), "xd": vals([6, D], 5),
            "hp": vals([6, H], 6), "cp": vals([6, H], 7), "xb": vals([N, 5, D], 8),
            "lens": np.array([5, 2, 4, 1], "int64"), "r0": vals([N, 2], 9), "c0": vals([N, H], 11),
            "g0": vals([4, N, H], 12),
            "xl": fluid.create_lod_tensor(vals([T, 4 * H], 10), [LENS], fluid.CPUPlace())}


CASES = {"dynamic_rnn_basic": dynamic_rnn_basic, "dynamic_rnn_lstm": dynamic_rnn_lstm, "static_rnn": static_rnn,
         "ifelse": ifelse, "lstm_unit": lstm_unit, "rnn_lstm_cell": rnn_lstm_cell,
         "rnn_gru_cell_reverse": rnn_gru_cell_reverse, "dynamic_lstmp": dynamic_lstmp,
         "basic_gru": basic_gru, "basic_lstm": basic_lstm}


def run_case(fluid, name, params=None, cases=None, feeds_fn=None):
    """{out/i, grad/<input>, grad/param<i>, param/<i>} for one case (params: recorded values to use; cases and
    feeds_fn: another script's builders and feeds, default this one's)."""
    cases, feeds_fn = cases or CASES, feeds_fn or feeds
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        outs = cases[name](fluid)
        outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
        block = main.global_block()
        ins = [v for v in block.vars.values() if getattr(v, "is_data", False) and not v.stop_gradient]
        ins = sorted(ins, key=lambda v: v.name)
        ps = list(block.all_parameters())
        loss = None
        for o in outs:
            t = fluid.layers.reduce_sum(fluid.layers.square(o))
            loss = t if loss is None else loss + t
        grads = fluid.gradients([loss], ins + ps)
    structure = ";".join("%d:%s" % (b.idx, ",".join(op.type for op in b.ops)) for b in main.blocks)
    names = ["grad/" + v.name for v in ins] + ["grad/param%d" % i for i in range(len(ps))]
    pairs = [(n, g) for n, g in zip(names, grads) if g is not None]
    res = {"ops": np.array(structure)}
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        exe = fluid.Executor(fluid.CPUPlace())
        exe.run(startup)
        for i, p in enumerate(ps):
            t = scope.find_var(p.name).get_tensor()
            v = params["param/%d" % i] if params is not None else vals(np.array(t).shape, 100 + i, -0.5, 0.5)
            t.set(np.asarray(v, "float32"), fluid.CPUPlace())
            res["param/%d" % i] = np.asarray(v, "float32")
        feed = {k: v for k, v in feeds_fn(fluid).items() if block.has_var(k)}
        got = exe.run(main, feed=feed, fetch_list=outs + [g for _, g in pairs], return_numpy=False)
    got = [np.array(g) for g in got]
    for i, o in enumerate(got[:len(outs)]):
        res["out/%d" % i] = o
    for (n, _), g in zip(pairs, got[len(outs):]):
        res[n] = g
    return res


def main():
    import paddle.fluid as fluid
    data = {}
    for name in CASES:
        for k, v in run_case(fluid, name).items():
            data[name + "|" + k] = v
    np.savez_compressed(os.path.join(HERE, "rnn_flow.npz"), **data)
    print("wrote %d cases, %d arrays" % (len(CASES), len(data)))


if __name__ == "__main__":
    main()
