"""Records the programs RecomputeOptimizer builds in real PaddlePaddle 1.8.5 (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_recompute.py

For each case (the model and checkpoints of recompute_cases.py), the global block's ops after minimize:
type, inputs and outputs by slot (the recomputed forward ops carry `.subprog_N` names, dropout gets a seed
op). Writes recompute.json beside this script. Numbers are not recorded: with recompute the gradients are
plain backward's, which tests/unit/test_recompute_paddle18.py checks against our own plain backward."""

import json
import os
import sys

import paddle.fluid as fluid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import recompute_cases as C  # noqa: E402


def ops_of(program):
    return [[op.type, {s: op.input(s) for s in sorted(op.input_names) if op.input(s)},
             {s: op.output(s) for s in sorted(op.output_names) if op.output(s)}]
            for op in program.global_block().ops]


def main():
    out = {}
    for name in C.CASES:
        main_p, start = fluid.Program(), fluid.Program()
        with fluid.program_guard(main_p, start), fluid.unique_name.guard():
            C.build(fluid, name)
        out[name] = ops_of(main_p)
    with open(os.path.join(HERE, "recompute.json"), "w") as f:
        json.dump(out, f, indent=0, sort_keys=True)


if __name__ == "__main__":
    main()
