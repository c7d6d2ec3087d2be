"""One node of a Fleet pserver job on a small CTR-like model (a sparse embedding of click ids, dense
features, two fc layers), trained with train_from_dataset over MultiSlot files.
Env: TRAINING_ROLE, PADDLE_PSERVERS_IP_PORT_LIST, PADDLE_TRAINERS_NUM, PADDLE_TRAINER_ID,
PADDLE_CURRENT_ENDPOINT, DATA_DIR, THREADS, STRATEGY ("half_async" or "async"), EPOCHS, and the
FLAGS_communicator_* settings. A trainer prints `RESULT {...}`: its losses, and for half-async the
communicator's rounds and its sends / merged gradients per gradient block."""

import io
import json
import os
import re
import sys
import time

import numpy as np

import paddle_compat as fluid
from paddle_compat.fluid.incubate.fleet.base import role_maker
from paddle_compat.fluid.incubate.fleet.parameter_server.distribute_transpiler import StrategyFactory, fleet
from paddle_compat.backends.ps.records import trainer_plan
from paddle_compat.backends.ps import connections

# a fetched loss as train_from_dataset prints it (Paddle 1.8's tensor dump): its value
LOSS_DUMP = re.compile(r"loss\t[^\t]*\t\tlod: [^\n]*\n\tdim: [^\n]*\n\tlayout: NCHW\n\tdtype: [^\n]*\n"
                       r"\tdata: \[([-0-9.e+]+)\]")

VOCAB, DENSE, BATCH, PER_FILE, FILES = 60, 6, 8, 64, 4


def write_files(d, trainer_id):
    rng = np.random.RandomState(100 + trainer_id)
    w = np.random.RandomState(3).uniform(-1, 1, DENSE)   # the same task on every trainer
    paths = []
    for f in range(FILES):
        lines = []
        for _ in range(PER_FILE):
            ids = rng.randint(0, VOCAB, size=rng.randint(1, 4))
            dense = rng.uniform(-1, 1, DENSE)
            label = int(dense @ w + np.mean(ids < VOCAB // 2) - 0.5 > 0)
            lines.append("%d %s %d %s 1 %d\n" % (len(ids), " ".join(map(str, ids)), DENSE,
                                                  " ".join("%.4f" % x for x in dense), label))
        p = os.path.join(d, "t%d-part-%d" % (trainer_id, f))
        with open(p, "w") as fh:
            fh.write("".join(lines))
        paths.append(p)
    return paths


def role():
    env = os.environ
    servers = env["PADDLE_PSERVERS_IP_PORT_LIST"].split(",")
    n = int(env["PADDLE_TRAINERS_NUM"])
    if env["TRAINING_ROLE"] == "PSERVER":
        return role_maker.UserDefinedRoleMaker(current_id=servers.index(env["PADDLE_CURRENT_ENDPOINT"]),
                                               role=role_maker.Role.SERVER, worker_num=n, server_endpoints=servers)
    return role_maker.UserDefinedRoleMaker(current_id=int(env["PADDLE_TRAINER_ID"]), role=role_maker.Role.WORKER,
                                           worker_num=n, server_endpoints=servers)


def main():
    fleet.init(role())
    strategy = StrategyFactory.create_half_async_strategy() if os.environ["STRATEGY"] == "half_async" \
        else StrategyFactory.create_async_strategy()
    main_p, startup = fluid.default_main_program(), fluid.default_startup_program()
    startup.random_seed = main_p.random_seed = 5
    ids = fluid.data("ids", shape=[None, 1], dtype="int64", lod_level=1)
    dense = fluid.data("dense", shape=[None, DENSE], dtype="float32")
    label = fluid.data("label", shape=[None, 1], dtype="int64")
    emb = fluid.layers.sequence_pool(fluid.layers.embedding(ids, size=[VOCAB, 8], is_sparse=True), "sum")
    h = fluid.layers.fc(fluid.layers.concat([emb, dense], axis=1), 16, act="relu")
    predict = fluid.layers.fc(h, 2, act="softmax")
    loss = fluid.layers.mean(fluid.layers.cross_entropy(predict, label))
    fleet.distributed_optimizer(fluid.optimizer.SGD(0.2), strategy).minimize(loss)
    if fleet.is_server():
        fleet.init_server()
        fleet.run_server()
        print("SERVED", flush=True)
        return
    tid = fleet.worker_index()
    fleet.init_worker()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(fleet.startup_program)
    ds = fluid.DatasetFactory().create_dataset("QueueDataset")
    ds.set_use_var([ids, dense, label])
    ds.set_batch_size(BATCH)
    ds.set_filelist(write_files(os.environ["DATA_DIR"], tid))
    buf, old = io.StringIO(), sys.stdout
    sys.stdout = buf
    t0 = time.monotonic()
    try:
        for _ in range(int(os.environ.get("EPOCHS", 5))):
            exe.train_from_dataset(fleet.main_program, ds, thread=int(os.environ.get("THREADS", 2)),
                                   fetch_list=[loss], fetch_info=["loss"], print_period=1)
    finally:
        sys.stdout = old
    seconds = time.monotonic() - t0
    comm = connections.joined()._comm
    fleet.stop_worker()          # sends what a round left queued, then tells the pservers it is done
    losses = [float(x) for x in LOSS_DUMP.findall(buf.getvalue())]
    out = {"trainer": tid, "losses": losses, "per_epoch": FILES * PER_FILE // BATCH, "seconds": seconds,
           "flags": dict(trainer_plan(fleet.main_program).communicator_flags)}
    if comm is not None:
        out.update(rounds=comm.stats["rounds"], sends=dict(comm.stats["sends"]),
                   merged=dict(comm.stats["merged"]), early_sends=comm.stats["early_sends"])
    print("RESULT " + json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
