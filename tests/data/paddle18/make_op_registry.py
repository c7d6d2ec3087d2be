"""Records what Paddle 1.8.5's C++ op registry answers about kernels and gradient makers (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_op_registry.py

Writes paddle_compat/ops/op_registry.json: {"kernels": {op type: [data type, ...]} (core._get_all_register_op_kernels
of the CPU build: every kernel is data_layout ANY_LAYOUT, CPUPlace, library PLAIN unless listed in "other_kernels"),
"other_kernels": {op type: [kernel key string, ...]}, "grad_op_maker": [op types core.has_grad_op_maker answers
True for], "infer_inplace": [op types core.has_infer_inplace answers True for]}. Data only (names).
paddle_compat.fluid.core_registry reads it to answer the same queries (Paddle's OpTest harness asks them).
"""

import json
import os
import re

from paddle.fluid import core
from paddle.fluid.framework import OpProtoHolder

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
OUT = os.path.join(ROOT, "paddle_compat", "ops", "op_registry.json")
PLAIN = re.compile(r"^data_type\[(\w+)\]:data_layout\[ANY_LAYOUT\]:place\[CPUPlace\]:library_type\[PLAIN\]$")


def main():
    kernels, other = {}, {}
    for op_type, keys in sorted(core._get_all_register_op_kernels().items()):
        for k in keys:
            m = PLAIN.match(k)
            if m:
                kernels.setdefault(op_type, []).append(m.group(1))
            else:
                other.setdefault(op_type, []).append(k)
    types = sorted(set(kernels) | set(other) | set(OpProtoHolder.instance().op_proto_map))
    out = {"kernels": kernels, "other_kernels": other,
           "grad_op_maker": [t for t in types if core.has_grad_op_maker(t)],
           "infer_inplace": [t for t in types if core.has_infer_inplace(t)]}
    with open(OUT, "w") as f:
        json.dump(out, f, indent=0, sort_keys=True)
    print("wrote %s: %d kernel types, %d grad makers, %d inplace" % (
        OUT, len(kernels) + len(other), len(out["grad_op_maker"]), len(out["infer_inplace"])))


if __name__ == "__main__":
    main()
