"""Record Paddle 1.8.5's inference predictor on the committed inference fixtures (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 /path/to/paddle18/bin/python tests/data/paddle18/make_predictor.py

For each model of tests/data/paddle18/inference/ (one file per parameter, and combined), runs
AnalysisConfig + create_paddle_predictor with PaddlePredictor.run([PaddleTensor]) and with the zero-copy
calls, a NativeConfig predictor, and CompiledProgram._with_inference_optimize through Executor.run, on the
inputs of <name>_io.npz. Writes tests/data/paddle18/predictor.json (input/output names, output names,
shapes, LoDs, dtypes) and predictor.npz (the outputs)."""

import json
import os

import numpy as np
import paddle.fluid as fluid
from paddle.fluid import core

HERE = os.path.dirname(os.path.abspath(__file__))
INF = os.path.join(HERE, "inference")


def _inputs(name):
    io = np.load(os.path.join(INF, name + "_io.npz"))
    feeds = json.load(open(os.path.join(INF, name + "_names.json")))["feeds"]
    out = []
    for n in feeds:
        lod = []
        if "lod_" + n in io:
            lod = [[0] + [int(x) for x in np.cumsum(io["lod_" + n])]]
        out.append((n, np.ascontiguousarray(io["in_" + n]), lod))
    return out


def _tensor(n, a, lod):
    # set field by field, as Paddle's book tests do (the constructor may convert int64 to int32)
    t = core.PaddleTensor()
    t.name, t.shape, t.lod = n, list(a.shape), lod
    t.data = core.PaddleBuf(a)
    t.dtype = {"float32": core.PaddleDType.FLOAT32, "int64": core.PaddleDType.INT64,
               "int32": core.PaddleDType.INT32}[a.dtype.name]
    return t


def _config(sub, params, analysis=True):
    d = os.path.join(INF, sub)
    if analysis:
        c = core.AnalysisConfig(d) if params is None else core.AnalysisConfig(os.path.join(d, "__model__"),
                                                                               os.path.join(d, params))
        c.disable_gpu()
        c.disable_glog_info()
        return c
    c = core.NativeConfig()
    if params is None:
        c.model_dir = d
    else:
        c.prog_file, c.param_file = os.path.join(d, "__model__"), os.path.join(d, params)
    return c


def record():
    meta, arrays = {}, {}
    for name in ("mlp", "conv", "ctr", "seq"):
        ins = _inputs(name)
        for sub, params in ((name, None), (name + "_combined", "params")):
            key = sub
            # run([PaddleTensor])
            p = core.create_paddle_predictor(_config(sub, params))
            outs = p.run([_tensor(*x) for x in ins])
            m = {"inputs": p.get_input_names(), "outputs": p.get_output_names(),
                 "run": [{"name": o.name, "shape": list(o.shape), "lod": [list(l) for l in o.lod],
                          "dtype": str(o.dtype)} for o in outs]}
            for i, o in enumerate(outs):
                arrays["%s_run_%d" % (key, i)] = o.as_ndarray()
            # zero copy
            c = _config(sub, params)
            c.switch_use_feed_fetch_ops(False)
            p = core.create_paddle_predictor(c)
            for n, a, lod in ins:
                t = p.get_input_tensor(n)
                t.reshape(list(a.shape))
                t.copy_from_cpu(a)
                if lod:
                    t.set_lod(lod)
            p.zero_copy_run()
            m["zero_copy"] = []
            for i, n in enumerate(p.get_output_names()):
                t = p.get_output_tensor(n)
                arrays["%s_zc_%d" % (key, i)] = t.copy_to_cpu()
                m["zero_copy"].append({"name": n, "shape": t.shape(), "lod": t.lod()})
            # NativeConfig
            p = core.create_paddle_predictor(_config(sub, params, analysis=False))
            for i, o in enumerate(p.run([_tensor(*x) for x in ins])):
                arrays["%s_native_%d" % (key, i)] = o.as_ndarray()
            meta[key] = m
    json.dump(meta, open(os.path.join(HERE, "predictor.json"), "w"), indent=1, sort_keys=True)
    np.savez(os.path.join(HERE, "predictor.npz"), **arrays)


if __name__ == "__main__":
    record()
