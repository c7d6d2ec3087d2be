"""Sample orders of paddle.reader's decorators under Paddle 1.8.5 with Python's `random` seeded, and how many
draws each leaves behind (the next random.random() after the reader is spent), plus the numpy draws the
random_crop / shuffle_batch layers make at build time. Record (outside CI) with

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_reader_random.py

run_case(paddle, fluid, name) runs unchanged on paddle_compat in tests/unit/test_reader_random_paddle18.py.
"""

import json
import os
import random

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def _count(n, start=0):
    def reader():
        for i in range(start, start + n):
            yield i
    return reader


def _drawing(n):
    """A reader that draws from `random` for every sample it makes."""
    def reader():
        for i in range(n):
            yield (i, random.randint(0, 999))
    return reader


def _listed(v):
    if isinstance(v, (list, tuple)):
        return [_listed(x) for x in v]
    if isinstance(v, np.ndarray):
        return v.tolist()
    return v


# name -> (seed, build(paddle, fluid) -> reader)
CASES = {
    "shuffle_buf7": (0, lambda p, f: p.reader.shuffle(_count(30), 7)),
    "shuffle_buf30": (1, lambda p, f: p.reader.shuffle(_count(30), 30)),
    "shuffle_buf100": (2, lambda p, f: p.reader.shuffle(_count(30), 100)),
    "shuffle_buf1": (3, lambda p, f: p.reader.shuffle(_count(10), 1)),
    "io_shuffle": (4, lambda p, f: f.io.shuffle(_count(25), 6)),
    "batch_shuffle": (5, lambda p, f: p.batch(p.reader.shuffle(_count(23), 10), 4)),
    "batch_drop_last": (5, lambda p, f: f.io.batch(p.reader.shuffle(_count(23), 10), 4, drop_last=True)),
    "firstn_drawing": (6, lambda p, f: p.reader.firstn(_drawing(20), 5)),
    "firstn_zero": (6, lambda p, f: p.reader.firstn(_drawing(20), 0)),
    "firstn_longer": (6, lambda p, f: p.reader.firstn(_drawing(3), 5)),
    "chain_shuffles": (7, lambda p, f: p.reader.chain(p.reader.shuffle(_count(9), 4),
                                                     p.reader.shuffle(_count(9, 100), 5))),
    "compose_shuffles": (8, lambda p, f: p.reader.compose(p.reader.shuffle(_count(9), 4),
                                                         p.reader.shuffle(_count(9, 100), 9))),
    "compose_unaligned": (8, lambda p, f: p.reader.compose(p.reader.shuffle(_count(9), 4), _count(5),
                                                          check_alignment=False)),
    "map_drawing": (9, lambda p, f: p.reader.map_readers(lambda a, b: (a, b[1]), _count(4), _drawing(10))),
    "cache_shuffle": (10, lambda p, f: p.reader.cache(p.reader.shuffle(_count(12), 5))),
    "buffered_shuffle": (11, lambda p, f: p.reader.buffered(p.reader.shuffle(_count(40), 8), 3)),
    "xmap_ordered_1": (12, lambda p, f: p.reader.xmap_readers(lambda x: x * 10, p.reader.shuffle(_count(20), 6),
                                                               1, 4, order=True)),
    "xmap_ordered_3": (13, lambda p, f: p.reader.xmap_readers(lambda x: x + 1, p.reader.shuffle(_count(20), 6),
                                                               3, 4, order=True)),
    "multiprocess_pipe": (14, lambda p, f: p.reader.multiprocess_reader(
        [_count(4), _count(6, 100), _count(2, 200)])),
    "multiprocess_pipe_shuffled": (15, lambda p, f: p.reader.multiprocess_reader(
        [p.reader.shuffle(_count(5), 5), p.reader.shuffle(_count(5, 100), 5)])),
}
# Python reseeds `random` in a forked child, so readers that shuffle inside multiprocess_reader's processes give a
# new order each run, in Paddle too: compared are the samples as a multiset and which reader each came from
UNORDERED = {"multiprocess_pipe_shuffled"}


def run_case(paddle, fluid, name):
    seed, build = CASES[name]
    random.seed(seed)
    reader = build(paddle, fluid)
    out = [_listed(s) for s in reader()]
    after = random.random()   # the draws the reader left: equal only if it drew exactly as often
    again = [_listed(s) for s in reader()] if name in ("cache_shuffle", "shuffle_buf7") else None
    return {"samples": out, "after": after, "again": again}


def build_seeds(fluid):
    """The seeds random_crop and shuffle_batch draw (numpy's global RNG) when none is given."""
    out = {}
    for layer in ("random_crop", "shuffle_batch"):
        np.random.seed(21)
        random.seed(21)
        main, startup = fluid.Program(), fluid.Program()
        with fluid.program_guard(main, startup):
            x = fluid.layers.data("x", shape=[3, 8, 8], dtype="float32")
            if layer == "random_crop":
                fluid.layers.random_crop(x, shape=[3, 4, 4])
            else:
                fluid.contrib.layers.shuffle_batch(x)
        op = [o for o in main.global_block().ops if o.type == layer][0]
        out[layer] = {"startup_seed": op.attr("startup_seed"), "np_after": int(np.random.randint(1 << 30)),
                      "py_after": random.random()}
    return out


if __name__ == "__main__":
    import paddle
    import paddle.fluid as fluid
    rec = {name: run_case(paddle, fluid, name) for name in CASES}
    rec["build_seeds"] = build_seeds(fluid)
    with open(os.path.join(HERE, "reader_random.json"), "w") as fh:
        json.dump(rec, fh, indent=0, sort_keys=True)
    print("wrote", len(rec), "cases")
