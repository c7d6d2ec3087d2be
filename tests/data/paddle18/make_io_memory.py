"""Records Paddle 1.8.5's save to memory (save_persistables(exe, None, program): the bytes of a combined
params file) and its inference model bytes, from real PaddlePaddle 1.8.5 (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_io_memory.py

Writes io_memory.json: params (base64 of the bytes), model (base64 of save_inference_model's 'model' file),
the parameter values by name, and the prediction for FEED."""

import base64
import json
import os
import tempfile

import numpy as np
import paddle.fluid as fluid

HERE = os.path.dirname(os.path.abspath(__file__))
W = [[0.5, -1.0], [0.25, 2.0]]
B = [0.125, -0.5]
FEED = [[1.0, 2.0], [3.0, -4.0]]


def build(fluid):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data(name="x", shape=[2], dtype="float32")
        y = fluid.layers.fc(x, size=2, param_attr=fluid.ParamAttr(
            name="w", initializer=fluid.initializer.NumpyArrayInitializer(np.array(W, "float32"))),
            bias_attr=fluid.ParamAttr(name="b", initializer=fluid.initializer.NumpyArrayInitializer(
                np.array(B, "float32"))))
    return main, startup, y


def main():
    prog, startup, y = build(fluid)
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    params = fluid.io.save_persistables(exe, None, prog)
    d = tempfile.mkdtemp()
    fluid.io.save_inference_model(d, ["x"], [y], exe, prog, "model", "params")
    with open(os.path.join(d, "model"), "rb") as f:
        model = f.read()
    pred = exe.run(prog, feed={"x": np.array(FEED, "float32")}, fetch_list=[y])[0]
    out = {"params": base64.b64encode(params).decode(), "model": base64.b64encode(model).decode(),
           "values": {"w": W, "b": B}, "feed": FEED, "pred": pred.tolist()}
    with open(os.path.join(HERE, "io_memory.json"), "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
