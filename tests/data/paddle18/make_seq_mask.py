"""Records sequence_mask outputs from real PaddlePaddle 1.8.5 (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_seq_mask.py
"""

import json
import os

import numpy as np
import paddle.fluid as fluid

HERE = os.path.dirname(os.path.abspath(__file__))
LENS = np.array([[3, 0], [5, 1], [2, 4]], "int64")


def case(maxlen, dtype):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data("x", shape=[3, 2], dtype="int64", append_batch_size=False)
        y = fluid.layers.sequence_mask(x, maxlen=maxlen, dtype=dtype)
    out, = fluid.Executor(fluid.CPUPlace()).run(main, feed={"x": LENS}, fetch_list=[y])
    return {"maxlen": maxlen, "dtype": dtype, "out": out.tolist(), "out_dtype": str(out.dtype)}


cases = [case(None, "int64"), case(6, "float32"), case(4, "int32")]
with open(os.path.join(HERE, "seq_mask.json"), "w") as f:
    json.dump({"x": LENS.tolist(), "cases": cases}, f)
print("wrote", len(cases))
