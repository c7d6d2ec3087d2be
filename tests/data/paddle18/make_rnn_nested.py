"""Records nested DynamicRNNs (a step input with a 2-level LoD: each outer step sees one sub-sequence per
sequence, as a 1-level LoD tensor) and a DynamicRNN static_input that carries a LoD, from real PaddlePaddle
1.8.5 (run outside CI):

    cd /tmp && GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python \
        <repo>/tests/data/paddle18/make_rnn_nested.py

Writes rnn_nested.npz beside this script, with make_rnn_flow.run_case (outputs, and gradients of
sum(square(out)) w.r.t. fed inputs and parameters); tests/unit/test_rnn_nested_paddle18.py builds the same
programs with paddle_compat.
"""

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_rnn_flow as MRF  # noqa: E402

# 3 sequences of 2, 1, 3 sub-sequences (distinct counts: Paddle's rank table sort is not stable)
OUTER, INNER = [2, 1, 3], [2, 3, 1, 2, 1, 4]
# DynamicRNN input (4 sequences) and a static input with its own LoD, one sequence per input sequence
LENS, SLENS = [3, 1, 4, 2], [2, 3, 1, 2]
D, H = 3, 4


def nested_dynamic_rnn(fluid):
    """Outer DynamicRNN over sub-sequences, an inner DynamicRNN over the rows of each; the output is the
    outer memory after each sub-sequence (1-level LoD)."""
    L = fluid.layers
    x = L.data("xn", shape=[D], dtype="float32", lod_level=2)
    x.stop_gradient = False
    outer = L.DynamicRNN()
    with outer.block():
        sub = outer.step_input(x)
        o0 = L.fc(sub, size=H, act="tanh")
        h0 = L.sequence_pool(o0, "max")
        inner = L.DynamicRNN()
        with inner.block():
            xt = inner.step_input(o0)
            # (memory(shape=...) reads the input array a second time, which Paddle's backward of a nested
            # DynamicRNN rejects: "Not all inputs are tensor array")
            h = inner.memory(init=h0, need_reorder=True)
            nh = L.fc([xt, h], size=H, act="tanh")
            inner.update_memory(h, nh)
            inner.output(nh)
        r = inner()
        last = L.sequence_last_step(r)
        m = outer.memory(shape=[H])
        nm = L.fc([last, m], size=H, act="tanh")
        outer.update_memory(m, nm)
        outer.output(nm)
    return outer()


def static_lod_input(fluid):
    """A static input with a LoD: reordered by the rank table, shrunk to the live sequences each step and
    pooled per sequence."""
    L = fluid.layers
    x = L.data("x", shape=[D], dtype="float32", lod_level=1)
    s = L.data("sl", shape=[2], dtype="float32", lod_level=1)
    x.stop_gradient = False
    s.stop_gradient = False
    drnn = L.DynamicRNN()
    with drnn.block():
        xt = drnn.step_input(x)
        st = drnn.static_input(s)
        h = drnn.memory(shape=[H])
        pooled = L.sequence_pool(L.fc(st, size=H), "average")
        nh = L.fc([xt, h, pooled], size=H, act="tanh")
        drnn.update_memory(h, nh)
        drnn.output(nh, L.sequence_pool(st, "sum"))
    return drnn()


def feeds(fluid):
    place = fluid.CPUPlace()
    return {"xn": fluid.create_lod_tensor(MRF.vals([sum(INNER), D], 21), [OUTER, INNER], place),
            "x": fluid.create_lod_tensor(MRF.vals([sum(LENS), D], 22), [LENS], place),
            "sl": fluid.create_lod_tensor(MRF.vals([sum(SLENS), 2], 23), [SLENS], place)}


CASES = {"nested_dynamic_rnn": nested_dynamic_rnn, "static_lod_input": static_lod_input}


def run_case(fluid, name, params=None):
    return MRF.run_case(fluid, name, params, CASES, feeds)


def main():
    import paddle.fluid as fluid
    data = {}
    for name in CASES:
        res = run_case(fluid, name)
        for k, v in res.items():
            data[name + "|" + k] = v
        print(name, sorted((k, getattr(v, "shape", None)) for k, v in res.items()))
    np.savez_compressed(os.path.join(HERE, "rnn_nested.npz"), **data)
    print("wrote %d cases, %d arrays" % (len(CASES), len(data)))


if __name__ == "__main__":
    main()
