"""One process of a hand-built RPC job (layers.io ListenAndServ / Send / Recv).

    python rpc_layers_node.py server <endpoint> <fan_in>
        serves: each round out = 10 * (X_0 + ... + X_{fan_in-1}) + r + 1 (`rounds`, a persistable the
        block increments: state kept across rounds) + 0.25 (`bias`, filled by the main program), then prints `SERVED <rounds>` when its clients are done (or SIGINT)
    PADDLE_TRAINER_ID=t PADDLE_TRAINERS_NUM=n python rpc_layers_node.py client <endpoint> <rounds>
        round r sends X_t = t + r + 0.5 (a 4x3 block) and fetches out; prints `RESULT {"trainer": t,
        "outs": [mean of out per round]}`, then closes its Executor
"""

import json
import os
import sys

import numpy as np

import paddle_compat as fluid
from paddle_compat.fluid import layers
from paddle_compat.fluid.layers import ops
from paddle_compat.fluid.layers.io import ListenAndServ, Recv, Send

SHAPE = [4, 3]


def server(endpoint, fan_in):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        gb = main.global_block()
        xs = ["X_%d" % t for t in range(fan_in)]
        counter = layers.create_global_var([1], 0.0, "float32", persistable=True, name="rounds")
        bias = gb.create_var(name="bias", shape=[1], dtype="float32")    # filled by the main program
        fluid.initializer.Constant(0.25)(bias, gb)
        serv = ListenAndServ(endpoint, xs, fan_in=fan_in, optimizer_mode=False)
        with serv.do():
            out = gb.create_var(name="out", dtype="float32", shape=SHAPE)
            total = None
            for n in xs:
                x = layers.data(name=n, shape=SHAPE, dtype="float32", append_batch_size=False)
                total = x if total is None else layers.elementwise_add(total, x)
            layers.increment(counter, 1.0, in_place=True)
            ops._scale(x=layers.elementwise_add(layers.elementwise_add(layers.scale(total, 10.0), counter), bias),
                       scale=1.0, out=out)
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    exe.run(main)
    rounds = np.array(fluid.global_scope().find_var("rounds").get_tensor())
    print("SERVED %d" % int(rounds.reshape(-1)[0]), flush=True)


def client(endpoint, rounds):
    tid = int(os.environ.get("PADDLE_TRAINER_ID", "0"))
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        x = layers.data(name="X_%d" % tid, shape=SHAPE, dtype="float32", append_batch_size=False)
        out = main.global_block().create_var(name="out", dtype="float32", shape=SHAPE)
        Send(endpoint, [x])
        Recv(endpoint, [out])
    exe = fluid.Executor(fluid.CPUPlace())
    outs = []
    for r in range(rounds):
        got, = exe.run(main, feed={x.name: np.full(SHAPE, tid + r + 0.5, "float32")}, fetch_list=[out])
        outs.append(float(np.mean(got)))
    exe.close()
    print("RESULT " + json.dumps({"trainer": tid, "outs": outs}), flush=True)


if __name__ == "__main__":
    role, endpoint, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    server(endpoint, n) if role == "server" else client(endpoint, n)
