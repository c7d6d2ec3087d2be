"""Run with Paddle 1.8.5's Python: load an inference model with fluid.io.load_inference_model and write
its predictions (out_<i>), and those of Paddle's inference predictor (pred_<i>), for the inputs in an .npz
(lod_<name>: sequence lengths of LoD input <name>).   paddle18_predict.py MODEL_DIR PARAMS_FILENAME|- IN.npz OUT.npz"""

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
    # and Paddle's inference predictor (AnalysisConfig + create_paddle_predictor) on the same model
    core = fluid.core
    cfg = core.AnalysisConfig(d) if params == "-" else core.AnalysisConfig(d + "/__model__", d + "/" + params)
    cfg.disable_gpu()
    predictor = core.create_paddle_predictor(cfg)
    ins = []
    for n in feeds:
        t = core.PaddleTensor()
        a = np.ascontiguousarray(data[n])
        t.name, t.shape, t.data = n, list(a.shape), core.PaddleBuf(a)
        t.dtype = core.PaddleDType.INT64 if a.dtype == np.int64 else core.PaddleDType.FLOAT32
        if "lod_" + n in data:
            t.lod = [[0] + np.cumsum(data["lod_" + n]).tolist()]
        ins.append(t)
    pred = [o.as_ndarray() for o in predictor.run(ins)]
    np.savez(out, feeds=np.array(feeds), **{"out_%d" % i: r for i, r in enumerate(res)},
             **{"pred_%d" % i: r for i, r in enumerate(pred)})


if __name__ == "__main__":
    main()
