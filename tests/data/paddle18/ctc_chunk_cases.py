"""chunk_eval, warpctc and ctc_greedy_decoder cases, shared by the recording script (make_ctc_chunk.py, run
with Paddle 1.8.5) and the test (tests/unit/test_ctc_chunk_paddle18.py). Python 3.7 compatible.

Each case: feeds {name: (array, lod lengths or None)}, build(fluid, vars) -> [fetched outputs], and the
names of float inputs whose gradient of sum(first output * w) is recorded (w: linspace)."""

import numpy as np


def _tags(r, lens, num_types, tags_per_type):
    """Random tag ids in [0, num_types * tags_per_type] (the last is the 'other' tag), biased to make chunks."""
    other = num_types * tags_per_type
    n = sum(lens)
    t = r.randint(0, other + 1, size=(n, 1))
    t[r.uniform(size=(n, 1)) < 0.25] = other
    return t.astype("int64")


def cases():
    r = np.random.RandomState(17)
    out = {}

    def chunk(name, scheme, types, ntag, lens, excluded=None, padded=False, noise=0.3):
        lab = _tags(r, lens, types, ntag)
        inf = lab.copy()
        flip = r.uniform(size=inf.shape) < noise
        inf[flip] = _tags(r, [int(flip.sum())], types, ntag)[:, 0]
        if padded:
            lmax = max(lens)
            pi, pl = np.zeros((len(lens), lmax), "int64"), np.zeros((len(lens), lmax), "int64")
            off = np.cumsum([0] + lens)
            for i, n in enumerate(lens):
                pi[i, :n], pl[i, :n] = inf[off[i]:off[i + 1], 0], lab[off[i]:off[i + 1], 0]
            feeds = {"inf": (pi, None), "lab": (pl, None), "len": (np.array(lens, "int64"), None)}
        else:
            feeds = {"inf": (inf, lens), "lab": (lab, lens)}

        def build(fluid, v):
            return list(fluid.layers.chunk_eval(v["inf"], v["lab"], chunk_scheme=scheme, num_chunk_types=types,
                                                excluded_chunk_types=excluded, seq_length=v.get("len")))
        out[name] = dict(feeds=feeds, build=build, grads=[])

    chunk("chunk_iob", "IOB", 3, 2, [7, 12, 1, 9])
    chunk("chunk_ioe", "IOE", 2, 2, [10, 6, 8])
    chunk("chunk_iobes", "IOBES", 3, 4, [15, 4, 11, 9])
    chunk("chunk_plain", "plain", 4, 1, [9, 9, 3])
    chunk("chunk_iob_excluded", "IOB", 4, 2, [12, 7, 10], excluded=[1, 3])
    chunk("chunk_iobes_padded", "IOBES", 2, 4, [6, 9, 2], padded=True)
    chunk("chunk_iob_exact", "IOB", 2, 2, [8, 5], noise=0.0)

    def ctc(name, lens, lab_lens, classes, blank, norm, padded=False):
        logits = r.uniform(-2, 2, (sum(lens), classes + 1)).astype("float32")
        choices = [c for c in range(classes + 1) if c != blank]
        label = np.array(r.choice(choices, sum(lab_lens)), "int32").reshape(-1, 1)
        if padded:
            tmax, lmax = max(lens), max(lab_lens)
            pl = np.zeros((tmax, len(lens), classes + 1), "float32")
            plab = np.zeros((len(lens), lmax), "int32")
            o, q = np.cumsum([0] + lens), np.cumsum([0] + lab_lens)
            for i in range(len(lens)):
                pl[:lens[i], i] = logits[o[i]:o[i + 1]]
                plab[i, :lab_lens[i]] = label[q[i]:q[i + 1], 0]
            feeds = {"x": (pl, None), "y": (plab, None), "xl": (np.array(lens, "int64"), None),
                     "yl": (np.array(lab_lens, "int64"), None)}
        else:
            feeds = {"x": (logits, lens), "y": (label, lab_lens)}

        def build(fluid, v):
            return [fluid.layers.warpctc(v["x"], v["y"], blank=blank, norm_by_times=norm,
                                         input_length=v.get("xl"), label_length=v.get("yl"))]
        out[name] = dict(feeds=feeds, build=build, grads=["x"])

    ctc("ctc_blank0", [6, 9, 4], [2, 4, 1], 5, 0, False)
    ctc("ctc_blank_last_norm", [7, 5, 8], [3, 2, 3], 4, 4, True)
    ctc("ctc_repeats", [10, 6], [5, 3], 2, 0, False)
    ctc("ctc_padded_norm", [6, 9, 4], [2, 4, 1], 5, 0, True, padded=True)

    def greedy(name, lens, classes, blank, padded=False, all_blank=False):
        x = r.uniform(0, 1, (sum(lens), classes)).astype("float32")
        if all_blank:
            x[:, blank] = 5.0
        else:     # make repeats likely
            top = r.randint(0, classes, sum(lens))
            top[1::3] = top[0::3][:len(top[1::3])]
            x[np.arange(sum(lens)), top] += 2.0
        if padded:
            tmax = max(lens)
            px = np.zeros((len(lens), tmax, classes), "float32")
            o = np.cumsum([0] + lens)
            for i in range(len(lens)):
                px[i, :lens[i]] = x[o[i]:o[i + 1]]
            feeds = {"x": (px, None), "xl": (np.array(lens, "int64").reshape(-1, 1), None)}
        else:
            feeds = {"x": (x, lens)}

        def build(fluid, v):
            res = fluid.layers.ctc_greedy_decoder(v["x"], blank=blank, input_length=v.get("xl"), padding_value=-7)
            return list(res) if isinstance(res, tuple) else [res]
        out[name] = dict(feeds=feeds, build=build, grads=[])

    greedy("greedy_lod", [7, 3, 10], 4, 0)
    greedy("greedy_lod_blank_last", [5, 8], 5, 4)
    greedy("greedy_padded", [7, 3, 10], 4, 0, padded=True)
    greedy("greedy_all_blank", [4, 3], 3, 0, all_blank=True)
    return out


def run(fluid, case):
    """-> [(array, lod lengths or None) per fetched output] + [gradient arrays]."""
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        v = {}
        for k, (a, lens) in case["feeds"].items():
            if lens is not None:
                v[k] = fluid.layers.data(k, shape=list(a.shape[1:]), dtype=str(a.dtype), lod_level=1)
            else:
                v[k] = fluid.layers.data(k, shape=list(a.shape), dtype=str(a.dtype), append_batch_size=False)
            v[k].stop_gradient = k not in case["grads"]
        outs = case["build"](fluid, v)
        gvars = []
        if case["grads"]:
            w = fluid.layers.data("w__", shape=[-1, 1], dtype="float32", append_batch_size=False)
            loss = fluid.layers.reduce_sum(outs[0] * w)
            gvars = fluid.gradients([loss], [v[k] for k in case["grads"]])
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    feed = {}
    for k, (a, lens) in case["feeds"].items():
        feed[k] = fluid.create_lod_tensor(a, [lens], fluid.CPUPlace()) if lens is not None else a
    if case["grads"]:
        n = len(case["feeds"]["xl"][0]) if "xl" in case["feeds"] else len(case["feeds"]["x"][1])
        feed["w__"] = np.linspace(-1.0, 1.5, n).astype("float32").reshape(-1, 1)
    res = exe.run(main, feed=feed, fetch_list=outs + gvars, return_numpy=False)
    got = []
    for t in res[:len(outs)]:
        lod = t.recursive_sequence_lengths() if hasattr(t, "recursive_sequence_lengths") else []
        got.append((np.array(t), lod[0] if lod else None))
    return got + [np.array(t) for t in res[len(outs):]]
