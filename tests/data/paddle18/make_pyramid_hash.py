"""Records search_pyramid_hash (the pyramid_hash op) from real PaddlePaddle 1.8.5 (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_pyramid_hash.py

Per case: the fed ids and LoD, W before the run, Out (and its LoD), DropPos (and its LoD) and W after one run
with loss = sum(Out * Out). Paddle's pyramid_hash_grad writes no gradient: it moves W in place by
-lr * dOut (W has stop_gradient=True); it only runs when the ids are not stop_gradient, so x.stop_gradient is
cleared here. The filter_* cases use bloom-filter white/black lists (written with paddle_compat's
bloom_filter.py, read by Paddle's own hash). Writes pyramid_hash.npz beside this script.
"""

import os

import numpy as np
import paddle.fluid as fluid

HERE = os.path.dirname(os.path.abspath(__file__))

CASES = [
    # name, lens, num_emb, space_len, pyramid_layer, rand_len, drop, is_training, seed, lr
    ("train", [3, 1, 5, 2, 6], 8, 50, 3, 4, 0.3, True, 5, 0.5),
    ("train_deep", [7, 2, 9, 4], 12, 97, 6, 3, 0.5, True, 11, 0.25),
    ("test_mode", [4, 6, 1, 3], 8, 64, 5, 2, 0.2, False, 3, 0.1),
    ("all_dropped", [3, 2], 4, 20, 3, 4, 1.0, True, 1, 0.5),
    ("wide_ids", [4, 3, 5], 8, 50, 3, 4, 0.3, True, 9, 0.5, 3),     # X [T, 3]: Paddle hashes X.flatten()[:T]
]


def run(name, lens, num_emb, space_len, layers, rand_len, drop, training, seed, lr, width=1):
    r = np.random.RandomState(len(name) * 7 + sum(lens))
    ids = r.randint(0, 1000, size=(sum(lens), width)).astype("int32")
    w0 = r.uniform(-1, 1, size=(space_len + rand_len, 1)).astype("float32")
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data(name="x", shape=[-1, width], dtype="int32", lod_level=1)
        x.stop_gradient = False
        out = fluid.contrib.layers.search_pyramid_hash(
            input=x, num_emb=num_emb, space_len=space_len, pyramid_layer=layers, rand_len=rand_len,
            drop_out_percent=drop, is_training=training, use_filter=False, white_list_len=1, black_list_len=0,
            seed=seed, lr=lr, param_attr=fluid.ParamAttr(name="W"))
        loss = fluid.layers.reduce_sum(out * out)
        fluid.backward.append_backward(loss)
    drop_pos = [op for op in main.global_block().ops if op.type == "pyramid_hash"][0].output("DropPos")[0]
    exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
    with fluid.scope_guard(scope):
        exe.run(startup)
        scope.find_var("W").get_tensor().set(w0, fluid.CPUPlace())
        o, dp = exe.run(main, feed={"x": fluid.create_lod_tensor(ids, [lens], fluid.CPUPlace())},
                        fetch_list=[out, drop_pos], return_numpy=False)
        w1 = np.array(scope.find_var("W").get_tensor())
    p = name + "/"
    return {p + "ids": ids, p + "lens": np.array(lens, "int64"), p + "w0": w0, p + "w1": w1,
            p + "out": np.array(o), p + "out_lod": np.array(o.lod()[0], "int64"),
            p + "drop_pos": np.array(dp), p + "drop_pos_lod": np.array(dp.lod()[0], "int64"),
            p + "attrs": np.array([num_emb, space_len, layers, rand_len, drop, float(training), seed, lr],
                                  "float64")}


def _bloom():
    """paddle_compat's bloom_filter.py (NumPy only), loaded by path: it writes the filters Paddle then reads, so
    Paddle's own MurmurHash3 decides which terms they hold."""
    import importlib.util
    path = os.path.join(HERE, "..", "..", "..", "paddle_compat", "ops", "defs", "bloom_filter.py")
    spec = importlib.util.spec_from_file_location("bloom_filter", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def run_filtered(name, training):
    """use_filter: a white list holding some of the input's n-grams and a black list holding a few of those."""
    bloom = _bloom()
    lens = [5, 3, 6, 1, 4]
    r = np.random.RandomState(99)
    ids = r.randint(0, 50, size=(sum(lens), 1)).astype("int32")
    terms, off = [], 0
    for n_len in lens:
        seq = ids[off:off + n_len, 0]
        for n in range(2, 4):
            for s in range(n_len - n + 1):
                terms.append(seq[s:s + n].astype("float32").tobytes())
        off += n_len
    white_terms = terms[::2] + terms[1:4]
    black_terms = terms[2:8:3]
    white = bloom.build(white_terms, m=4096, k=3)
    black = bloom.build(black_terms, m=2048, k=2)
    num_emb, space_len, layers, rand_len, drop, seed, lr = 8, 64, 3, 4, 0.25, 7, 0.5
    w0 = r.uniform(-1, 1, size=(space_len + rand_len, 1)).astype("float32")
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data(name="x", shape=[-1, 1], dtype="int32", lod_level=1)
        out = fluid.contrib.layers.search_pyramid_hash(
            input=x, num_emb=num_emb, space_len=space_len, pyramid_layer=layers, rand_len=rand_len,
            drop_out_percent=drop, is_training=training, use_filter=True, white_list_len=white.shape[0],
            black_list_len=black.shape[0], seed=seed, lr=lr, param_attr=fluid.ParamAttr(name="W"),
            param_attr_wl=fluid.ParamAttr(name="WL"), param_attr_bl=fluid.ParamAttr(name="BL"))
    drop_pos = [op for op in main.global_block().ops if op.type == "pyramid_hash"][0].output("DropPos")[0]
    exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
    with fluid.scope_guard(scope):
        exe.run(startup)
        for n, v in (("W", w0), ("WL", white), ("BL", black)):
            scope.find_var(n).get_tensor().set(v, fluid.CPUPlace())
        o, dp = exe.run(main, feed={"x": fluid.create_lod_tensor(ids, [lens], fluid.CPUPlace())},
                        fetch_list=[out, drop_pos], return_numpy=False)
    p = name + "/"
    return {p + "ids": ids, p + "lens": np.array(lens, "int64"), p + "w0": w0, p + "white": white, p + "black": black,
            p + "out": np.array(o), p + "out_lod": np.array(o.lod()[0], "int64"), p + "drop_pos": np.array(dp),
            p + "drop_pos_lod": np.array(dp.lod()[0], "int64"),
            p + "attrs": np.array([num_emb, space_len, layers, rand_len, drop, float(training), seed, lr], "float64")}


def main():
    data = {}
    for c in CASES:
        data.update(run(*c))
    data.update(run_filtered("filter_train", True))
    data.update(run_filtered("filter_test", False))
    np.savez(os.path.join(HERE, "pyramid_hash.npz"), **data)
    print(sorted(data))


if __name__ == "__main__":
    main()
