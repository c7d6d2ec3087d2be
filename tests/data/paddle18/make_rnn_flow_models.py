"""Saves inference models holding a DynamicRNN, a StaticRNN and an IfElse with real Paddle 1.8.5 (run outside
CI, from a directory outside the checkout):

    cd /tmp && GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python \
        <repo>/tests/data/paddle18/make_rnn_flow_models.py

The programs are make_rnn_flow.py's cases (startup-initialised weights), written with save_inference_model
(params_filename="params") under tests/data/paddle18/inference/rnn_flow_<case>/, with Paddle's outputs on
make_rnn_flow.feeds in rnn_flow_models.npz. tests/unit/test_rnn_flow_paddle18.py loads and runs them."""

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import make_rnn_flow as MK  # noqa: E402

NAMES = ["dynamic_rnn_basic", "static_rnn", "ifelse"]


def main():
    import paddle.fluid as fluid
    out = {}
    for name in NAMES:
        main_prog, startup = fluid.Program(), fluid.Program()
        main_prog.random_seed = startup.random_seed = 1
        with fluid.program_guard(main_prog, startup):
            outs = MK.CASES[name](fluid)
        outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
        exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
        with fluid.scope_guard(scope):
            exe.run(startup)
            feeds = sorted(v.name for v in main_prog.global_block().vars.values() if getattr(v, "is_data", False))
            fluid.io.save_inference_model(os.path.join(HERE, "inference", "rnn_flow_" + name), feeds, outs, exe,
                                          main_program=main_prog, params_filename="params")
            res = exe.run(main_prog, feed={k: v for k, v in MK.feeds(fluid).items() if k in feeds},
                          fetch_list=outs, return_numpy=False)
        for i, r in enumerate(res):
            out["%s|out/%d" % (name, i)] = np.array(r)
    np.savez_compressed(os.path.join(HERE, "rnn_flow_models.npz"), **out)
    print("wrote", sorted(out))


if __name__ == "__main__":
    main()
