"""Run with Paddle 1.8.5's Python: load an inference model with fluid.io.load_inference_model and write
its predictions for the inputs in an .npz (lod_<name>: sequence lengths of LoD input <name>).   paddle18_predict.py MODEL_DIR PARAMS_FILENAME|- IN.npz OUT.npz"""

import sys

import numpy as np
import paddle.fluid as fluid


def main():
    d, params, inp, out = sys.argv[1:5]
    exe = fluid.Executor(fluid.CPUPlace())
    prog, feeds, fetches = fluid.io.load_inference_model(d, exe, params_filename=None if params == "-" else params)
    data = np.load(inp)
    feed = {}
    for n in feeds:     # lod_<name>: sequence lengths of a LoD input
        lod = "lod_" + n
        feed[n] = (fluid.create_lod_tensor(data[n], [data[lod].tolist()], fluid.CPUPlace()) if lod in data
                   else data[n])
    res = exe.run(prog, feed=feed, fetch_list=fetches)
    np.savez(out, feeds=np.array(feeds), **{"out_%d" % i: r for i, r in enumerate(res)})


if __name__ == "__main__":
    main()
