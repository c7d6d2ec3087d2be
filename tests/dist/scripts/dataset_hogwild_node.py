"""One node of an async pserver job trained with train_from_dataset(thread=2): each trainer runs two Hogwild
threads over its own MultiSlot files, each thread sending its gradients and receiving parameters per step.
Env: TRAINING_ROLE, PADDLE_PSERVERS_IP_PORT_LIST, PADDLE_TRAINERS_NUM, PADDLE_TRAINER_ID,
PADDLE_CURRENT_ENDPOINT, DATA_DIR, THREADS."""

import io
import json
import os
import re
import sys

import numpy as np

import paddle_compat as fluid

# a fetched loss as train_from_dataset prints it (Paddle 1.8's tensor dump): its value
LOSS_DUMP = re.compile(r"loss\t[^\t]*\t\tlod: [^\n]*\n\tdim: [^\n]*\n\tlayout: NCHW\n\tdtype: [^\n]*\n"
                       r"\tdata: \[([-0-9.e+]+)\]")

VOCAB, DENSE, BATCH, PER_FILE, FILES, EPOCHS = 40, 6, 8, 48, 4, 5


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


def main():
    role = os.environ["TRAINING_ROLE"]
    eps = os.environ["PADDLE_PSERVERS_IP_PORT_LIST"]
    trainers = int(os.environ["PADDLE_TRAINERS_NUM"])
    tid = int(os.environ.get("PADDLE_TRAINER_ID", 0))
    main_p, startup = fluid.Program(), fluid.Program()
    startup.random_seed = main_p.random_seed = 5
    with fluid.program_guard(main_p, startup):
        ids = fluid.data("ids", shape=[None, 1], dtype="int64", lod_level=1)
        dense = fluid.data("dense", shape=[None, DENSE], dtype="float32")
        label = fluid.data("label", shape=[None, 1], dtype="int64")
        emb = fluid.layers.sequence_pool(fluid.layers.embedding(ids, size=[VOCAB, 8], is_sparse=True), "sum")
        h = fluid.layers.fc(fluid.layers.concat([emb, dense], axis=1), 16, act="relu")
        predict = fluid.layers.fc(h, 2, act="softmax")
        loss = fluid.layers.mean(fluid.layers.cross_entropy(predict, label))
        fluid.optimizer.SGD(0.1).minimize(loss)
    t = fluid.DistributeTranspiler()
    t.transpile(tid, program=main_p, startup_program=startup, pservers=eps, trainers=trainers, sync_mode=False)
    exe = fluid.Executor(fluid.CPUPlace())
    if role == "PSERVER":
        ep = os.environ["PADDLE_CURRENT_ENDPOINT"]
        prog = t.get_pserver_program(ep)
        exe.run(t.get_startup_program(ep, prog))
        exe.run(prog)
        print("SERVED", flush=True)
        return
    ds = fluid.DatasetFactory().create_dataset("QueueDataset")
    ds.set_use_var([ids, dense, label])
    ds.set_batch_size(BATCH)
    ds.set_filelist(write_files(os.environ["DATA_DIR"], tid))
    exe.run(startup)
    buf, old = io.StringIO(), sys.stdout
    sys.stdout = buf
    try:
        for _ in range(EPOCHS):
            exe.train_from_dataset(t.get_trainer_program(), ds, thread=int(os.environ.get("THREADS", 2)),
                                   fetch_list=[loss], fetch_info=["loss"], print_period=1)
    finally:
        sys.stdout = old
    workers = sorted(set(k[-1] for k in exe._cache if k[-1] is not None))
    exe.close()
    losses = [float(x) for x in LOSS_DUMP.findall(buf.getvalue())]
    print("RESULT " + json.dumps({"losses": losses, "per_epoch": FILES * PER_FILE // BATCH,
                                  "workers": workers}), flush=True)


if __name__ == "__main__":
    main()
