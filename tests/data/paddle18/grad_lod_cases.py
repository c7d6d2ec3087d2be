"""Cases for the LoD of fetched gradients, shared by make_grad_lod.py (real Paddle 1.8.5) and the unit test.

Paddle 1.8.5 gives a gradient the LoD of its forward input only where the grad op's InferShape shares it
(ShareLoD), op by op; a fetch with return_numpy=True raises on a tensor holding a LoD, so the set must match
exactly. Each case builds a program with `fluid` (Paddle's or ours) from LoD inputs, appends the backward
of a mean loss and names the gradients to fetch (return_numpy=False). Kept Python 3.7 compatible.
"""

import numpy as np

LENS = [[2, 3]]          # 5 rows in two sequences


def _lod_data(fluid, name, dim, dtype="float32", grad=True):
    v = fluid.layers.data(name=name, shape=[dim], dtype=dtype, lod_level=1)
    v.stop_gradient = not grad
    return v


def _feed(fluid, place, name, dim, lens=LENS, dtype="float32", seed=0, high=None):
    rows = sum(lens[-1])
    rng = np.random.RandomState(seed)
    if high is not None:
        arr = rng.randint(0, high, size=(rows, dim)).astype(dtype)
    else:
        arr = rng.uniform(0.1, 1.0, size=(rows, dim)).astype(dtype)
    return fluid.create_lod_tensor(arr, lens, place)


_CHAIN = [False]


def _pool(fluid, y):
    """A LoD-free scalar loss of a LoD value (sequence_pool sum, then fc, then mean). In a chained run a
    softmax comes first: its grad op gives no LoD, so an op sharing its output gradient's LoD (rather than
    its input's) gives none either."""
    if _CHAIN[0]:
        y = fluid.layers.softmax(y)
    return fluid.layers.mean(fluid.layers.fc(fluid.layers.sequence_pool(y, "sum"), 2))


def _unary(layer_fn):
    def build(fluid, place):
        x = _lod_data(fluid, "x", 3)
        return _pool(fluid, layer_fn(fluid, x)), {"x": _feed(fluid, place, "x", 3)}, ["x"]
    return build


def _binary(layer_fn):
    def build(fluid, place):
        x, y = _lod_data(fluid, "x", 3), _lod_data(fluid, "y", 3)
        feed = {"x": _feed(fluid, place, "x", 3), "y": _feed(fluid, place, "y", 3, seed=1)}
        return _pool(fluid, layer_fn(fluid, x, y)), feed, ["x", "y"]
    return build


def _seq_pool(kind):
    def build(fluid, place):
        x = _lod_data(fluid, "x", 3)
        loss = fluid.layers.mean(fluid.layers.fc(fluid.layers.sequence_pool(x, kind), 2))
        return loss, {"x": _feed(fluid, place, "x", 3)}, ["x"]
    return build


def _fc(fluid, place):
    x = _lod_data(fluid, "x", 3)
    h = fluid.layers.fc(x, 4)
    return _pool(fluid, h), {"x": _feed(fluid, place, "x", 3)}, ["x"]


def _matmul(fluid, place):
    x = _lod_data(fluid, "x", 3)
    w = fluid.layers.create_parameter([3, 4], "float32", name="mw")
    return _pool(fluid, fluid.layers.matmul(x, w)), {"x": _feed(fluid, place, "x", 3)}, ["x"]


def _elementwise_param(fn):
    def build(fluid, place):
        x = _lod_data(fluid, "x", 3)
        b = fluid.layers.create_parameter([3], "float32", name="eb")
        return _pool(fluid, fn(fluid, x, b)), {"x": _feed(fluid, place, "x", 3)}, ["x"]
    return build


def _seq_conv(fluid, place):
    x = _lod_data(fluid, "x", 3)
    return _pool(fluid, fluid.layers.sequence_conv(x, 4, filter_size=3)), {"x": _feed(fluid, place, "x", 3)}, ["x"]


def _seq_softmax(fluid, place):
    x = _lod_data(fluid, "x", 1)
    y = fluid.layers.sequence_softmax(x)
    return _pool(fluid, y), {"x": _feed(fluid, place, "x", 1)}, ["x"]


def _seq_expand(fluid, place):
    x = _lod_data(fluid, "x", 3)
    y = _lod_data(fluid, "y", 1, grad=False)
    feed = {"x": _feed(fluid, place, "x", 3, lens=[[1, 1, 1, 1, 1]]),
            "y": _feed(fluid, place, "y", 1, lens=[[1, 2, 1, 1, 1]])}
    out = fluid.layers.sequence_expand(x, y, ref_level=0)
    return _pool(fluid, out), feed, ["x"]


def _seq_expand_as(fluid, place):
    x = fluid.layers.data(name="x", shape=[3], dtype="float32")
    x.stop_gradient = False
    y = _lod_data(fluid, "y", 1, grad=False)
    feed = {"x": np.random.RandomState(0).uniform(size=(2, 3)).astype("float32"),
            "y": _feed(fluid, place, "y", 1)}
    return _pool(fluid, fluid.layers.sequence_expand_as(x, y)), feed, ["x"]


def _lod_reset(fluid, place):
    x = _lod_data(fluid, "x", 3)
    y = fluid.layers.lod_reset(x, target_lod=[0, 1, 5])
    return _pool(fluid, y), {"x": _feed(fluid, place, "x", 3)}, ["x"]


def _reorder(fluid, place):
    x = _lod_data(fluid, "x", 3)
    r = _lod_data(fluid, "r", 1, grad=False)
    table = fluid.layers.control_flow.lod_rank_table(r)
    y = fluid.layers.reorder_lod_tensor_by_rank(x, table)
    feed = {"x": _feed(fluid, place, "x", 3), "r": _feed(fluid, place, "r", 1, lens=[[1, 2]])}
    return _pool(fluid, y), feed, ["x"]


def _seq_reshape(fluid, place):
    x = _lod_data(fluid, "x", 2)
    y = fluid.layers.sequence_reshape(x, 4)
    return _pool(fluid, y), {"x": _feed(fluid, place, "x", 2, lens=[[2, 4]])}, ["x"]


def _seq_concat(fluid, place):
    x, y = _lod_data(fluid, "x", 3), _lod_data(fluid, "y", 3)
    feed = {"x": _feed(fluid, place, "x", 3), "y": _feed(fluid, place, "y", 3, lens=[[1, 2]], seed=1)}
    return _pool(fluid, fluid.layers.sequence_concat([x, y])), feed, ["x", "y"]


def _seq_reverse(fluid, place):
    x = _lod_data(fluid, "x", 3)
    return _pool(fluid, fluid.layers.sequence_reverse(x)), {"x": _feed(fluid, place, "x", 3)}, ["x"]


def _seq_pad(fluid, place):
    x = _lod_data(fluid, "x", 3)
    pad = fluid.layers.assign(np.zeros([1], "float32"))
    out, _ = fluid.layers.sequence_pad(x, pad)
    return fluid.layers.mean(out), {"x": _feed(fluid, place, "x", 3)}, ["x"]


def _seq_slice(fluid, place):
    x = _lod_data(fluid, "x", 3)
    off = fluid.layers.assign(np.array([[0], [1]], "int64"))
    ln = fluid.layers.assign(np.array([[2], [1]], "int64"))
    return _pool(fluid, fluid.layers.sequence_slice(x, off, ln)), {"x": _feed(fluid, place, "x", 3)}, ["x"]


def _embedding(fluid, place):
    ids = fluid.layers.data(name="ids", shape=[1], dtype="int64", lod_level=1)
    emb = fluid.layers.embedding(ids, size=[10, 3], param_attr="emb_w")
    loss = _pool(fluid, fluid.layers.tanh(emb))
    return loss, {"ids": _feed(fluid, place, "ids", 1, dtype="int64", high=10)}, [emb.name, "emb_w"]


def _dynamic_lstm(fluid, place):
    x = _lod_data(fluid, "x", 8)
    h, _ = fluid.layers.dynamic_lstm(x, size=8)
    return _pool(fluid, h), {"x": _feed(fluid, place, "x", 8)}, ["x"]


def _dynamic_gru(fluid, place):
    x = _lod_data(fluid, "x", 6)
    h = fluid.layers.dynamic_gru(x, size=2)
    return _pool(fluid, h), {"x": _feed(fluid, place, "x", 6)}, ["x"]


def _dynrnn_static(fluid, place):
    x = _lod_data(fluid, "x", 2)
    s = _lod_data(fluid, "s", 2)
    rnn = fluid.layers.DynamicRNN()
    with rnn.block():
        step_x = rnn.step_input(x)
        step_s = rnn.static_input(s)
        last = fluid.layers.sequence_pool(step_s, "last")
        rnn.output(fluid.layers.fc([step_x, last], 2))
    loss = fluid.layers.mean(fluid.layers.sequence_pool(rnn(), "last"))
    feed = {"x": _feed(fluid, place, "x", 2, lens=[[2, 1, 3]]),
            "s": _feed(fluid, place, "s", 2, lens=[[1, 2, 3]], seed=1)}
    return loss, feed, ["x", "s"]


def _two_users(fluid, place):
    """x read by two ops: its gradient is the sum of two parts (sum shares its first input's LoD)."""
    x = _lod_data(fluid, "x", 3)
    y = fluid.layers.elementwise_add(fluid.layers.relu(x), fluid.layers.tanh(x))
    return _pool(fluid, y), {"x": _feed(fluid, place, "x", 3)}, ["x"]


def _prroi(fluid, place):
    x = fluid.layers.data(name="x", shape=[2, 4, 4], dtype="float32")
    x.stop_gradient = False
    rois = fluid.layers.data(name="rois", shape=[4], dtype="float32", lod_level=1)
    rois.stop_gradient = False
    out = fluid.layers.prroi_pool(x, rois, 1.0, 2, 2)
    feed = {"x": np.random.RandomState(0).uniform(size=(1, 2, 4, 4)).astype("float32"),
            "rois": fluid.create_lod_tensor(np.array([[0, 0, 2, 2], [1, 1, 3, 3]], "float32"), [[2]], place)}
    return fluid.layers.mean(out), feed, ["x", "rois"]


CASES = {
    "relu": _unary(lambda f, x: f.layers.relu(x)),
    "tanh": _unary(lambda f, x: f.layers.tanh(x)),
    "sigmoid": _unary(lambda f, x: f.layers.sigmoid(x)),
    "softmax": _unary(lambda f, x: f.layers.softmax(x)),
    "scale": _unary(lambda f, x: f.layers.scale(x, 2.0)),
    "dropout": _unary(lambda f, x: f.layers.dropout(x, 0.0)),
    "elementwise_add": _binary(lambda f, x, y: f.layers.elementwise_add(x, y)),
    "elementwise_mul": _binary(lambda f, x, y: f.layers.elementwise_mul(x, y)),
    "elementwise_sub": _binary(lambda f, x, y: f.layers.elementwise_sub(x, y)),
    "elementwise_add_param": _elementwise_param(lambda f, x, b: f.layers.elementwise_add(x, b, axis=1)),
    "elementwise_mul_param": _elementwise_param(lambda f, x, b: f.layers.elementwise_mul(x, b, axis=1)),
    "sum": _binary(lambda f, x, y: f.layers.sums([x, y])),
    "concat": _binary(lambda f, x, y: f.layers.concat([x, y], axis=1)),
    "fc_mul": _fc,
    "matmul": _matmul,
    "sequence_pool_sum": _seq_pool("sum"),
    "sequence_pool_average": _seq_pool("average"),
    "sequence_pool_max": _seq_pool("max"),
    "sequence_pool_sqrt": _seq_pool("sqrt"),
    "sequence_pool_first": _seq_pool("first"),
    "sequence_pool_last": _seq_pool("last"),
    "sequence_conv": _seq_conv,
    "sequence_softmax": _seq_softmax,
    "sequence_expand": _seq_expand,
    "sequence_expand_as": _seq_expand_as,
    "lod_reset": _lod_reset,
    "reorder_lod_tensor_by_rank": _reorder,
    "sequence_reshape": _seq_reshape,
    "sequence_concat": _seq_concat,
    "sequence_reverse": _seq_reverse,
    "sequence_pad": _seq_pad,
    "sequence_slice": _seq_slice,
    "embedding": _embedding,
    "dynamic_lstm": _dynamic_lstm,
    "dynamic_gru": _dynamic_gru,
    "dynrnn_static_input": _dynrnn_static,
    "two_users": _two_users,
    "prroi_pool": _prroi,
}


def run_case(fluid, name, chained=False):
    """{fetched forward name: recursive sequence lengths of its gradient} ([] when it has no LoD)."""
    _CHAIN[0] = chained
    place = fluid.CPUPlace()
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        loss, feed, wrt = CASES[name](fluid, place)
        fluid.backward.append_backward(loss)
    _CHAIN[0] = False
    exe = fluid.Executor(place)
    scope = fluid.core.Scope()
    with fluid.scope_guard(scope):
        exe.run(startup)
        outs = exe.run(main, feed=feed, fetch_list=[n + "@GRAD" for n in wrt], return_numpy=False)
    return {n: [list(l) for l in o.recursive_sequence_lengths()] for n, o in zip(wrt, outs)}


# the parity harness's case files (parity_harness.Case lists); their cases fed a LoD input are recorded too
HARNESS_MODULES = ("make_contrib_more", "make_io_more", "make_layers_more", "make_loss_more", "make_math_more",
                   "make_nn_more", "make_shape_more", "make_random_misc")


def harness_cases():
    """{"module:case": Case} for every harness case with a LoD input and gradients."""
    import importlib
    out = {}
    for m in HARNESS_MODULES:
        for c in importlib.import_module(m).CASES:
            if c.grad and any(len(inp) > 2 for inp in c.inputs):
                out["%s:%s" % (m[len("make_"):], c.name)] = c
    return out


def run_harness_case(fluid, case):
    """The case's program as parity_harness.run builds it (gradients of sum(square(out)) w.r.t. its float
    inputs), its input gradients fetched with return_numpy=False: {input name: sequence lengths}."""
    main, startup = fluid.Program(), fluid.Program()
    main.random_seed = startup.random_seed = 1
    with fluid.program_guard(main, startup):
        vs = []
        for inp in case.inputs:
            name, arr = inp[0], inp[1]
            v = fluid.layers.data(name, shape=list(arr.shape), dtype=str(arr.dtype), append_batch_size=False,
                                  lod_level=1 if len(inp) > 2 else 0)
            v.stop_gradient = not (arr.dtype.kind == "f" and name not in case.no_grad)
            vs.append(v)
        outs = case.fn(fluid, *vs)
        outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
        wrt = [(inp[0], v) for inp, v in zip(case.inputs, vs) if not v.stop_gradient]
        loss = None
        for i in case.grad_outs:
            term = fluid.layers.reduce_sum(fluid.layers.square(outs[i]))
            loss = term if loss is None else loss + term
        grads = fluid.gradients([loss], [v for _, v in wrt])
        pairs = [(n, g) for (n, _), g in zip(wrt, grads) if g is not None]
    place = fluid.CPUPlace()
    exe = fluid.Executor(place)
    scope = fluid.core.Scope()
    with fluid.scope_guard(scope):
        exe.run(startup)
        feed = {inp[0]: (fluid.create_lod_tensor(inp[1], inp[2], place) if len(inp) > 2 else inp[1])
                for inp in case.inputs}
        got = exe.run(main, feed=feed, fetch_list=[g for _, g in pairs], return_numpy=False)
    return {n: [list(l) for l in t.recursive_sequence_lengths()] for (n, _), t in zip(pairs, got)}
