"""One process (pserver or trainer, by TRAINING_ROLE) of a 2-pserver + 2-trainer sync job training a model
whose parameters are used inside sub-blocks: the rnn_encoder_decoder book model (tests/book_seq2seq.py, a
DynamicRNN decoder), the While/cond model or the Switch learning-rate model (tests/subblock_models.py):
    python subblock_node.py '[{"model": "rnn_encoder_decoder"|"while_cond"|"switch_lr", "steps": N}]'.
With "mode": "collective" the trainers alone run (grad_allreduce over PADDLE_TRAINER_ENDPOINTS, gloo).
Both sides set the same initial weights through the scope; trainer t feeds batch step * trainers + t and
prints `RESULT {"job": 0, "trainer": t, "losses": [...]}`."""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))   # tests/

import numpy as np  # noqa: E402

import paddle_compat as fluid  # noqa: E402
import subblock_models as M  # noqa: E402


def setup(model, steps, trainers):
    """(main, startup, cost, params, initial values, batches, feed) of `model`, as the test's reference uses."""
    if model in ("while_cond", "switch_lr"):
        main, startup, cost = M.build(fluid, model)
        params = main.global_block().all_parameters()
        return (main, startup, cost, params, M.init_values([p.shape for p in params]),
                M.batches(steps * trainers), M.feed)
    import book_seq2seq as S
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        cost = S.MODELS[model](fluid)
    params = main.global_block().all_parameters()
    return (main, startup, cost, params, S.init_values([p.shape for p in params]),
            S.batches(steps * trainers, seed=11), lambda b: S.feed(fluid, model, b))


def main():
    spec = json.loads(sys.argv[1])[0]
    role = (os.environ.get("TRAINING_ROLE") or os.environ.get("PADDLE_TRAINING_ROLE") or "").upper()
    eps = os.environ["PADDLE_PSERVERS_IP_PORT_LIST"].split(",")
    trainers = int(os.environ["PADDLE_TRAINERS_NUM"])
    tid = int(os.environ.get("PADDLE_TRAINER_ID", "0"))
    current = os.environ.get("PADDLE_CURRENT_ENDPOINT", eps[0])
    main_prog, startup, cost, params, inits, data, feed = setup(spec["model"], spec["steps"], trainers)
    if spec.get("mode") == "collective":
        teps = os.environ["PADDLE_TRAINER_ENDPOINTS"].split(",")
        cfg = fluid.DistributeTranspilerConfig()
        cfg.mode, cfg.collective_mode = "collective", "grad_allreduce"
        fluid.DistributeTranspiler(config=cfg).transpile(tid, program=main_prog, startup_program=startup,
                                                         trainers=",".join(teps), current_endpoint=teps[tid])
        prog = main_prog
        role = "TRAINER"
        t = None
    else:
        t = _transpile_pserver(main_prog, startup, eps, trainers, tid)
    scope, exe = fluid.Scope(), fluid.Executor(fluid.CPUPlace())
    inits = dict(zip([p.name for p in params], inits))
    with fluid.scope_guard(scope):
        if role == "PSERVER":
            prog = t.get_pserver_program(current)
            exe.run(t.get_startup_program(current, prog))
            for name, v in inits.items():
                if scope.find_var(name) is not None:
                    scope.find_var(name).get_tensor().set(v, fluid.CPUPlace())
            exe.run(prog)
            return
        if t is not None:
            prog = t.get_trainer_program()
        exe.run(startup)
        for name, v in inits.items():
            scope.find_var(name).get_tensor().set(v, fluid.CPUPlace())
        losses = []
        for s in range(spec["steps"]):
            out = exe.run(prog, feed=feed(data[s * trainers + tid]), fetch_list=[cost])
            losses.append(float(np.asarray(out[0]).reshape(-1)[0]))
        exe.close()
    print("RESULT " + json.dumps({"job": 0, "trainer": tid, "losses": losses}), flush=True)


def _transpile_pserver(main_prog, startup, eps, trainers, tid):
    cfg = fluid.DistributeTranspilerConfig()
    cfg.slice_var_up = False        # whole parameters on the pservers, so both sides set them by name
    t = fluid.DistributeTranspiler(config=cfg)
    t.transpile(tid, program=main_prog, startup_program=startup, pservers=",".join(eps), trainers=trainers)
    return t


if __name__ == "__main__":
    import torch
    torch.set_num_threads(1)
    main()
