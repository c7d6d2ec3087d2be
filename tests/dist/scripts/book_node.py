"""One process (pserver or trainer, by TRAINING_ROLE) of a 2-pserver + 2-trainer sync job training a book model
of tests/book_sentiment.py, tests/book_srl.py or tests/book_more.py:
    python book_node.py '[{"model": "conv"|"stacked_lstm"|"srl"|"word2vec"|..."recommender", "steps": N}]'.
Both sides set the same initial weights through the scope; trainer t feeds batch step * trainers + t and
prints `RESULT {"job": 0, "trainer": t, "losses": [...]}`."""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))   # tests/ (book_sentiment)

import numpy as np  # noqa: E402

import book_more  # noqa: E402
import book_sentiment as B  # noqa: E402
import book_srl  # noqa: E402
import paddle_compat as fluid  # noqa: E402


def main():
    spec = json.loads(sys.argv[1])[0]
    role = (os.environ.get("TRAINING_ROLE") or os.environ.get("PADDLE_TRAINING_ROLE") or "").upper()
    eps = os.environ["PADDLE_PSERVERS_IP_PORT_LIST"].split(",")
    trainers = int(os.environ["PADDLE_TRAINERS_NUM"])
    tid = int(os.environ.get("PADDLE_TRAINER_ID", "0"))
    current = os.environ.get("PADDLE_CURRENT_ENDPOINT", eps[0])
    if spec["model"] == "srl":
        main_prog, startup, cost, _, params = book_srl.build(fluid)
        init_values, data = book_srl.init_values, book_srl.batches(spec["steps"] * trainers, seed=11)
        feed = lambda b: book_srl.feed(fluid, b)  # noqa: E731
    elif spec["model"] in book_more.MODELS:
        name = spec["model"]
        main_prog, startup, cost, params = book_more.build(fluid, name)
        init_values, data = book_more.init_values, book_more.batches(name, spec["steps"] * trainers, seed=11)
        feed = lambda b, name=name: book_more.feed(fluid, name, b)  # noqa: E731
    else:
        main_prog, startup, cost, params = B.build(spec["model"])
        init_values, data, feed = B.init_values, B.batches(spec["steps"] * trainers, seed=11), B.feed
    cfg = fluid.DistributeTranspilerConfig()
    cfg.slice_var_up = False        # whole parameters on the pservers, so both sides set them by name
    t = fluid.DistributeTranspiler(config=cfg)
    t.transpile(tid, program=main_prog, startup_program=startup, pservers=",".join(eps), trainers=trainers)
    scope, exe = fluid.Scope(), fluid.Executor(fluid.CPUPlace())
    inits = dict(zip([p.name for p in params], init_values([p.shape for p in params])))
    with fluid.scope_guard(scope):
        if role == "PSERVER":
            prog = t.get_pserver_program(current)
            exe.run(t.get_startup_program(current, prog))
            for name, v in inits.items():
                if scope.find_var(name) is not None:
                    scope.find_var(name).get_tensor().set(v, fluid.CPUPlace())
            exe.run(prog)
            return
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


if __name__ == "__main__":
    import torch
    torch.set_num_threads(1)
    main()
