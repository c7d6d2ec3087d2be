"""Records lod_tensor_to_array / array_to_lod_tensor on deeper LoDs from real PaddlePaddle 1.8.5 (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_lod_array_nested.py

Writes lod_array_nested.json beside this script: for each case of CASES (an input's sequence lengths and the
rank table's level), each step of the array (values, recursive sequence lengths), the round trip's values and
LoD, and max_sequence_len; and a DynamicRNN (scale by 2) over a 3-level LoD step input. run() takes the fluid
module (tests/unit/test_lod_array_nested_paddle18.py runs it with paddle_compat). Python 3.7 compatible.
"""

import json
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = {
    "two_levels": ([[2, 3], [3, 6, 2, 6, 3]], 0),
    "two_levels_empty": ([[3, 2, 4, 2], [3, 4, 4, 0, 1, 5, 2, 2, 2, 7, 1]], 0),
    "three_levels": ([[2, 3, 1], [2, 3, 1, 4, 2, 1], [3, 4, 4, 6, 4, 1, 1, 4, 4, 8, 6, 1, 4]], 0),
    "three_levels_table_1": ([[2, 3, 1], [2, 3, 1, 4, 2, 1], [3, 4, 4, 6, 4, 1, 1, 4, 4, 8, 6, 1, 4]], 1),
    "two_levels_table_1": ([[2, 3], [3, 6, 2, 6, 3]], 1),
}


def run(fluid, lengths, level):
    rows = sum(lengths[-1])
    cf = fluid.layers.control_flow   # (not exported by fluid.layers in 1.8)
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        x = fluid.layers.data(name="x", shape=[1], dtype="float32", lod_level=len(lengths))
        table = cf.lod_rank_table(x, level=level)
        max_len = cf.max_sequence_len(table)
        arr = cf.lod_tensor_to_array(x, table)
        back = cf.array_to_lod_tensor(arr, table)
        for v in (max_len, arr, back):
            v.persistable = True
    t = fluid.create_lod_tensor(np.arange(rows, dtype="float32").reshape(rows, 1), lengths, fluid.CPUPlace())
    scope = fluid.Scope()
    fluid.Executor(fluid.CPUPlace()).run(main, feed={"x": t}, scope=scope)
    steps = scope.find_var(arr.name).get_lod_tensor_array()
    out = scope.find_var(back.name).get_tensor()
    return {"steps": [[np.array(s).ravel().tolist(), s.recursive_sequence_lengths()] for s in steps],
            "back": [np.array(out).ravel().tolist(), out.recursive_sequence_lengths()],
            "max_len": int(np.array(scope.find_var(max_len.name).get_tensor()).ravel()[0])}


def dynamic_rnn(fluid):
    L = fluid.layers
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = L.data("x", shape=[2], dtype="float32", lod_level=3)
        drnn = L.DynamicRNN()
        with drnn.block():
            drnn.output(L.scale(drnn.step_input(x), 2.0))
        out = drnn()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    t = fluid.create_lod_tensor(np.arange(12, dtype="float32").reshape(6, 2), [[1, 2], [1, 2, 1], [1, 1, 3, 1]],
                                fluid.CPUPlace())
    r = exe.run(main, feed={"x": t}, fetch_list=[out], return_numpy=False)[0]
    return [np.array(r).ravel().tolist(), r.recursive_sequence_lengths()]


def main():
    import paddle.fluid as fluid
    out = {name: run(fluid, lengths, level) for name, (lengths, level) in CASES.items()}
    out["dynamic_rnn_three_levels"] = dynamic_rnn(fluid)
    with open(os.path.join(HERE, "lod_array_nested.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
