"""Records beam_search, beam_search_decode, lod_reset / lod_append and the machine_translation book decode
(tests/book_mt_decode.py) from real PaddlePaddle 1.8.5 (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_beam_search.py

Writes beam_search.json beside this script. The case code below takes the fluid module as an argument;
tests/unit/test_beam_search_paddle18.py runs the same functions on paddle_compat.
"""

import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

# ---- beam_search: one step on fed 2-level LoD candidates --------------------------------------------------
# lod (lengths), pre_ids, pre_scores, ids (None: column index), scores, beam_size, end_id, is_accumulated
BEAM_CASES = [
    # first step: one prefix per source
    dict(lod=[[1, 1], [1, 1]], pre_ids=[0, 0], pre_scores=[0.0, 0.0],
         ids=[[4, 2, 7, 3], [5, 1, 6, 8]], scores=[[-0.1, -0.5, -0.7, -1.2], [-0.2, -0.3, -0.9, -1.0]],
         beam_size=3, end_id=1),
    # two sources of 3 and 2 prefixes; prefix 1 has ended (pre_id == end_id) and offers itself only
    dict(lod=[[3, 2], [1, 1, 1, 1, 1]], pre_ids=[4, 1, 7, 5, 6], pre_scores=[-0.5, -0.4, -0.9, -0.3, -0.6],
         ids=[[2, 9, 1], [3, 4, 5], [8, 1, 2], [1, 6, 7], [9, 2, 3]],
         scores=[[-0.7, -0.8, -1.5], [-0.6, -0.9, -2.0], [-1.0, -1.1, -1.9], [-0.35, -0.8, -1.2],
                 [-0.65, -0.7, -0.9]],
         beam_size=3, end_id=1),
    # source 1: every prefix ended and keeps end_id -> pruned; source 0 goes on
    dict(lod=[[2, 2], [1, 1, 1, 1]], pre_ids=[3, 1, 1, 1], pre_scores=[-0.5, -0.2, -0.7, -0.9],
         ids=[[1, 4], [5, 6], [2, 3], [4, 5]], scores=[[-0.6, -0.9], [-0.3, -0.4], [-0.8, -0.85], [-1.0, -1.1]],
         beam_size=2, end_id=1),
    # probabilities (is_accumulated=False): score = pre_score + log(p)
    dict(lod=[[2, 1], [1, 1, 1]], pre_ids=[3, 4, 5], pre_scores=[-0.2, -0.6, -0.1],
         ids=[[6, 7, 8], [2, 9, 1], [3, 1, 4]], scores=[[0.5, 0.3, 0.2], [0.7, 0.2, 0.1], [0.4, 0.35, 0.25]],
         beam_size=2, end_id=1, is_accumulated=False),
    # exact ties within one prefix at the beam's edge (Paddle's insertion order decides), in three sources
    dict(lod=[[1, 1, 2], [1, 1, 1, 1]], pre_ids=[3, 3, 3, 4], pre_scores=[0.0, 0.0, 0.0, 0.0], ids=None,
         scores=[[-0.5, -0.5, -0.5, -0.5, -0.5], [-0.5, -0.5, -0.5, -0.2, -0.5], [-0.9, -0.1, -0.4, -0.4, -0.4],
                 [-0.4, -0.4, -0.3, -0.4, -0.9]],
         beam_size=2, end_id=0),
    dict(lod=[[1, 1], [1, 1]], pre_ids=[3, 3], pre_scores=[0.0, 0.0], ids=None,
         scores=[[-0.5, -0.5, -0.5, -0.5, -0.2], [-0.2, -0.5, -0.5, -0.5, -0.5]], beam_size=3, end_id=0),
    # no ids: the column is the id; ties across prefixes go to the later prefix
    dict(lod=[[3], [1, 1, 1]], pre_ids=[2, 3, 4], pre_scores=[-0.1, -0.1, -0.1],
         ids=None, scores=[[-0.5, -0.25, -0.75, -2.0], [-0.25, -0.5, -1.0, -3.0], [-0.5, -0.25, -0.9, -2.5]],
         beam_size=4, end_id=0),
]


def beam_step(fluid, c):
    """-> dict with selected ids/scores, parent_idx, the output LoD, and a per-prefix state gathered by
    parent_idx (how decoders without LoD states follow their beams)."""
    main, startup = fluid.Program(), fluid.Program()
    place = fluid.CPUPlace()
    with fluid.program_guard(main, startup):
        width = len(c["scores"][0])
        pre_ids = fluid.layers.data("pre_ids", shape=[1], dtype="int64", lod_level=2)
        pre_scores = fluid.layers.data("pre_scores", shape=[1], dtype="float32", lod_level=2)
        ids = fluid.layers.data("ids", shape=[width], dtype="int64", lod_level=2) if c["ids"] is not None else None
        scores = fluid.layers.data("scores", shape=[width], dtype="float32", lod_level=2)
        sel_ids, sel_scores, parent = fluid.layers.beam_search(
            pre_ids, pre_scores, ids, scores, c["beam_size"], c["end_id"],
            is_accumulated=c.get("is_accumulated", True), return_parent_idx=True)
        state = fluid.layers.data("state", shape=[2], dtype="float32")
        followed = fluid.layers.gather(state, parent)
    lt = lambda a, dt: fluid.create_lod_tensor(np.array(a, dt).reshape(len(a), -1), c["lod"], place)
    feed = {"pre_ids": lt(c["pre_ids"], "int64"), "pre_scores": lt(c["pre_scores"], "float32"),
            "scores": lt(c["scores"], "float32")}
    if c["ids"] is not None:
        feed["ids"] = lt(c["ids"], "int64")
    feed["state"] = np.arange(2 * len(c["pre_ids"]), dtype="float32").reshape(-1, 2)
    exe = fluid.Executor(place)
    with fluid.scope_guard(fluid.Scope()):
        r = exe.run(main, feed=feed, fetch_list=[sel_ids, sel_scores, parent, followed], return_numpy=False)
    return {"ids": np.array(r[0]).ravel().tolist(), "scores": np.array(r[1]).ravel().tolist(),
            "parent_idx": np.array(r[2]).ravel().tolist(), "followed": np.array(r[3]).tolist(),
            "lod": [list(map(int, l)) for l in r[0].lod()],
            "score_lod": [list(map(int, l)) for l in r[1].lod()]}


# ---- beam_search_decode on arrays of fed steps (each source ends with beam_size candidates) -----------------
DECODE_CASES = [
    dict(beam_size=2, end_id=1, steps=[
        ([0, 0], [0.0, 0.0], [[1, 1], [1, 1]]),
        ([5, 6, 7, 1], [-0.5, -0.9, -0.3, -0.4], [[1, 1], [2, 2]]),
        ([8, 1, 9, 1], [-1.0, -1.2, -0.8, -0.4], [[2, 2], [1, 1, 1, 1]]),
        ([1, 1], [-1.5, -1.2], [[2, 2], [1, 1, 0, 0]]),
    ]),
    # the same, with the empty step a While loop writes when every source has finished
    dict(beam_size=2, end_id=1, steps=[
        ([0, 0], [0.0, 0.0], [[1, 1], [1, 1]]),
        ([5, 6, 7, 1], [-0.5, -0.9, -0.3, -0.4], [[1, 1], [2, 2]]),
        ([8, 1, 9, 1], [-1.0, -1.2, -0.8, -0.4], [[2, 2], [1, 1, 1, 1]]),
        ([1, 1], [-1.5, -1.2], [[2, 2], [1, 1, 0, 0]]),
        ([], [], [[2, 0], [0, 0]]),
    ]),
    dict(beam_size=3, end_id=2, steps=[
        ([0, 0, 0], [0.0, 0.0, 0.0], [[1, 1, 1], [1, 1, 1]]),
        ([4, 5, 6, 7, 8, 9, 3, 4, 2], [-0.1, -0.2, -0.3, -0.4, -0.5, -0.6, -0.15, -0.25, -0.35],
         [[1, 1, 1], [3, 3, 3]]),
        ([3, 4, 5, 6, 7, 8, 9, 2, 2], [-0.3, -0.4, -0.5, -0.6, -0.7, -0.8, -0.3, -0.35, -0.35],
         [[3, 3, 3], [2, 1, 0, 1, 0, 2, 1, 1, 1]]),
    ]),
]


def decode_arrays(fluid, c):
    main, startup = fluid.Program(), fluid.Program()
    place = fluid.CPUPlace()
    feed = {}
    with fluid.program_guard(main, startup):
        ids_arr = fluid.layers.create_array("int64")
        sc_arr = fluid.layers.create_array("float32")
        for t, (ids, scores, lod) in enumerate(c["steps"]):
            i = fluid.layers.fill_constant([1], "int64", t)
            a = fluid.layers.data("ids%d" % t, shape=[1], dtype="int64", lod_level=2)
            b = fluid.layers.data("scores%d" % t, shape=[1], dtype="float32", lod_level=2)
            fluid.layers.array_write(a, i, ids_arr)
            fluid.layers.array_write(b, i, sc_arr)
            feed["ids%d" % t] = fluid.create_lod_tensor(np.array(ids, "int64").reshape(-1, 1), lod, place)
            feed["scores%d" % t] = fluid.create_lod_tensor(np.array(scores, "float32").reshape(-1, 1), lod, place)
        out_ids, out_scores = fluid.layers.beam_search_decode(ids_arr, sc_arr, c["beam_size"], c["end_id"])
    exe = fluid.Executor(place)
    with fluid.scope_guard(fluid.Scope()):
        r = exe.run(main, feed=feed, fetch_list=[out_ids, out_scores], return_numpy=False)
    return {"ids": np.array(r[0]).ravel().tolist(), "scores": np.array(r[1]).ravel().tolist(),
            "lod": [list(map(int, l)) for l in r[0].lod()], "score_lod": [list(map(int, l)) for l in r[1].lod()]}


# ---- lod_reset / lod_append: output LoD, a sum-pool over it, and the gradient to x ---------------------------
LOD_CASES = [
    dict(kind="reset_target", x_lod=[[2, 4]], target=[0, 1, 6]),
    dict(kind="reset_y_lod", x_lod=[[2, 4]], y_lod=[[1, 2], [2, 1, 3]]),
    dict(kind="reset_y_data", x_lod=[[2, 4]], y_data=[0, 3, 5, 6]),
    dict(kind="reset_no_x_lod", x_lod=None, target=[0, 2, 3, 6]),
    dict(kind="append_list", x_lod=None, target=[0, 1, 3, 6]),
    dict(kind="append_list", x_lod=[[2, 4]], target=[0, 1, 2, 3, 4, 5, 6]),
    dict(kind="append_var", x_lod=[[4, 2]], y_data=[0, 1, 2, 3, 4, 5, 6]),
    dict(kind="append_var_lod", x_lod=[[4, 2]], y_lod=[[2, 1], [1, 2, 3]]),
]


def lod_case(fluid, c):
    main, startup = fluid.Program(), fluid.Program()
    place = fluid.CPUPlace()
    xv = np.random.RandomState(3).uniform(-1, 1, (6, 3)).astype("float32")
    with fluid.program_guard(main, startup):
        x = fluid.layers.data("x", shape=[3], dtype="float32", lod_level=1 if c["x_lod"] else 0)
        x.stop_gradient = False
        feed = {"x": fluid.create_lod_tensor(xv, c["x_lod"], place) if c["x_lod"] else xv}
        kind = c["kind"]
        if kind in ("reset_target", "reset_no_x_lod"):
            out = fluid.layers.lod_reset(x, target_lod=c["target"])
        elif kind == "append_var_lod":   # y with a LoD: Paddle takes y's LoD whole, append or not
            y = fluid.layers.data("y", shape=[1], dtype="float32", lod_level=2)
            feed["y"] = fluid.create_lod_tensor(np.zeros((6, 1), "float32"), c["y_lod"], place)
            out = fluid.layers.lod_append(x, y)
        elif kind == "reset_y_lod":
            y = fluid.layers.data("y", shape=[1], dtype="float32", lod_level=2)
            feed["y"] = fluid.create_lod_tensor(np.zeros((6, 1), "float32"), c["y_lod"], place)
            out = fluid.layers.lod_reset(x, y=y)
        elif kind == "reset_y_data":
            y = fluid.layers.data("y", shape=[len(c["y_data"])], dtype="int32", append_batch_size=False)
            feed["y"] = np.array(c["y_data"], "int32")
            out = fluid.layers.lod_reset(x, y=y)
        elif kind == "append_list":
            out = fluid.layers.lod_append(x, c["target"])
        else:
            y = fluid.layers.data("y", shape=[len(c["y_data"])], dtype="int32", append_batch_size=False)
            feed["y"] = np.array(c["y_data"], "int32")
            out = fluid.layers.lod_append(x, y)
        pooled = fluid.layers.sequence_pool(out * out, "sum")
        loss = fluid.layers.reduce_sum(pooled * fluid.layers.assign(
            np.arange(1, 7, dtype="float32").reshape(6, 1)[:1]))
        grad = fluid.gradients([loss + fluid.layers.reduce_sum(pooled * pooled)], [x])[0]
    exe = fluid.Executor(place)
    with fluid.scope_guard(fluid.Scope()):
        r = exe.run(main, feed=feed, fetch_list=[out, pooled, grad], return_numpy=False)
    return {"out_lod": [list(map(int, l)) for l in r[0].lod()], "pooled": np.array(r[1]).tolist(),
            "pooled_lod": [list(map(int, l)) for l in r[1].lod()], "grad": np.array(r[2]).tolist()}


# ---- LoD across a While body: read a LoD variable from outside, write one the loop's caller reads --------------
def while_lod(fluid):
    main, startup = fluid.Program(), fluid.Program()
    place = fluid.CPUPlace()
    xv = np.random.RandomState(5).uniform(-1, 1, (6, 2)).astype("float32")
    with fluid.program_guard(main, startup):
        x = fluid.layers.data("x", shape=[2], dtype="float32", lod_level=1)
        i = fluid.layers.zeros(shape=[1], dtype="int64")
        n = fluid.layers.fill_constant(shape=[1], dtype="int64", value=3)
        acc = fluid.layers.sequence_pool(x * 0.0, "sum")
        regrouped = fluid.layers.lod_reset(x, target_lod=[0, 6])
        cond = fluid.layers.less_than(i, n)
        loop = fluid.layers.While(cond=cond)
        with loop.block():
            step = fluid.layers.cast(i, "float32") + 1.0
            fluid.layers.assign(acc + fluid.layers.sequence_pool(x, "max") * step, acc)
            fluid.layers.assign(fluid.layers.lod_reset(x * step, target_lod=[0, 1, 4, 6]), regrouped)
            fluid.layers.increment(i, in_place=True)
            fluid.layers.less_than(i, n, cond=cond)
        pooled = fluid.layers.sequence_pool(regrouped, "sum")
    exe = fluid.Executor(place)
    with fluid.scope_guard(fluid.Scope()):
        r = exe.run(main, feed={"x": fluid.create_lod_tensor(xv, [[2, 3, 1]], place)},
                    fetch_list=[acc, regrouped, pooled], return_numpy=False)
    return {"acc": np.array(r[0]).tolist(), "regrouped_lod": [list(map(int, l)) for l in r[1].lod()],
            "pooled": np.array(r[2]).tolist()}


def cond_lod(fluid, flag):
    """layers.cond on a fed flag; both branches read a LoD input and return differently regrouped rows."""
    main, startup = fluid.Program(), fluid.Program()
    place = fluid.CPUPlace()
    xv = np.random.RandomState(6).uniform(-1, 1, (6, 2)).astype("float32")
    with fluid.program_guard(main, startup):
        x = fluid.layers.data("x", shape=[2], dtype="float32", lod_level=1)
        x.stop_gradient = False
        f = fluid.layers.data("flag", shape=[1], dtype="bool", append_batch_size=False)
        def branch(y, target):   # Paddle's cond output has lod_level 0: pool inside the branch
            y = fluid.layers.lod_reset(y, target_lod=target)
            return y, fluid.layers.sequence_pool(y, "max")
        summed = lambda: fluid.layers.sequence_expand_as(fluid.layers.sequence_pool(x, "sum"), x)
        out, pooled = fluid.layers.cond(f, lambda: branch(summed(), [0, 2, 6]),
                                        lambda: branch(x * 2.0, [0, 1, 2, 3, 6]))
        grad = fluid.gradients([fluid.layers.reduce_sum(pooled * pooled)], [x])[0]
    exe = fluid.Executor(place)
    with fluid.scope_guard(fluid.Scope()):
        r = exe.run(main, feed={"x": fluid.create_lod_tensor(xv, [[2, 3, 1]], place),
                                "flag": np.array([flag])}, fetch_list=[out, pooled, grad], return_numpy=False)
    return {"lod": [list(map(int, l)) for l in r[0].lod()], "pooled": np.array(r[1]).tolist(),
            "grad": np.array(r[2]).tolist()}


# ---- the machine_translation book decode ------------------------------------------------------------------
MT_CASES = [dict(beam_size=2, seed=1, end_id=12), dict(beam_size=2, seed=1, end_id=20),
            dict(beam_size=3, seed=2, end_id=16), dict(beam_size=3, seed=2, end_id=22),
            dict(beam_size=3, seed=2, end_id=28), dict(beam_size=3, seed=2, end_id=1),
            dict(beam_size=2, seed=1, end_id=23)]   # every sentence ends before max_length


def mt_case(fluid, c, params=None):
    sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))   # tests/ (book_mt_decode)
    import book_mt_decode
    return book_mt_decode.run(fluid, c["beam_size"], c["seed"], c["end_id"], params)


if __name__ == "__main__":
    import paddle.fluid as fluid
    ref = {"beam": [beam_step(fluid, c) for c in BEAM_CASES],
           "decode": [decode_arrays(fluid, c) for c in DECODE_CASES],
           "lod": [lod_case(fluid, c) for c in LOD_CASES],
           "mt": [mt_case(fluid, c) for c in MT_CASES], "while_lod": while_lod(fluid),
           "cond_lod": [cond_lod(fluid, True), cond_lod(fluid, False)]}
    with open(os.path.join(HERE, "beam_search.json"), "w") as f:
        json.dump(ref, f)
    print("wrote", {k: len(v) for k, v in ref.items()})
