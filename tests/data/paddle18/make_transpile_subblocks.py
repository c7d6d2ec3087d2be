"""Records how real PaddlePaddle 1.8.5's transpilers split programs with sub-blocks: op types per block (with
parent_idx) of the trainer and pserver programs of DistributeTranspiler (pserver mode, 2 pservers, 2 trainers)
and of the collective GradAllReduce main program, for the rnn_encoder_decoder book model (DynamicRNN decoder,
tests/book_seq2seq.py), the While/cond model and the Switch learning-rate model of tests/subblock_models.py.
Run outside CI, from a directory outside the checkout so that the real paddle is imported:

    cd /tmp && GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python \
        <repo>/tests/data/paddle18/make_transpile_subblocks.py

Writes transpile_subblocks.json: {model: {"origin"|"trainer0"|"pserver:<ep>"|"collective": [[idx, parent_idx,
[op types]], ...]}}.
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))

import book_seq2seq  # noqa: E402
import subblock_models  # noqa: E402

EPS = ["127.0.0.1:6174", "127.0.0.1:6175"]
TRAINER_EPS = ["127.0.0.1:6170", "127.0.0.1:6171"]


def blocks(prog):
    return [[b.idx, b.parent_idx, [op.type for op in b.ops]] for b in prog.blocks]


def build(fluid, model):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        if model in ("while_cond", "switch_lr"):
            subblock_models.build.__globals__[model + "_model"](fluid)
        else:
            book_seq2seq.MODELS[model](fluid)
    return main, startup


def record(fluid, model):
    from paddle.fluid.transpiler.collective import GradAllReduce
    out = {"origin": blocks(build(fluid, model)[0])}
    # a fresh transpiler per program: Paddle's get_trainer_program deletes the optimize ops from the program
    # that get_pserver_program still reads (as Paddle's own transpiler tests do)
    for role in ["trainer0"] + ["pserver:" + ep for ep in EPS]:
        main, startup = build(fluid, model)
        t = fluid.DistributeTranspiler()
        t.transpile(0, program=main, startup_program=startup, pservers=",".join(EPS), trainers=2)
        prog = t.get_trainer_program(wait_port=False) if role == "trainer0" else \
            t.get_pserver_program(role.split(":", 1)[1])
        out[role] = blocks(prog)
    main, startup = build(fluid, model)
    # the main-program half of GradAllReduce.transpile (the startup half needs c_gen_nccl_id, which a CPU
    # build of Paddle 1.8.5 does not register)
    g = GradAllReduce(1)
    g.startup_program, g.main_program, g.nranks, g.rank = startup, main, 2, 0
    g.endpoints, g.current_endpoint, g.wait_port = TRAINER_EPS, TRAINER_EPS[0], False
    g._transpile_main_program()
    out["collective"] = blocks(main)
    return out


def main():
    import paddle.fluid as fluid
    res = {m: record(fluid, m) for m in ("rnn_encoder_decoder", "while_cond", "switch_lr")}
    for m, r in res.items():
        for k, bl in r.items():
            for idx, parent, ops in bl:
                print(m, k, idx, parent, " ".join(ops))
    with open(os.path.join(HERE, "transpile_subblocks.json"), "w") as f:
        json.dump(res, f, indent=0)


if __name__ == "__main__":
    main()
