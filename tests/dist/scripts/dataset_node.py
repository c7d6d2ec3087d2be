"""One node of a pserver job trained with Executor.train_from_dataset: the model and the MultiSlot files of
tests/data/paddle18/dataset_train.json (two files, fixed weights, SGD), transpiled in sync mode.
Env: TRAINING_ROLE, PADDLE_PSERVERS_IP_PORT_LIST, PADDLE_TRAINERS_NUM, PADDLE_CURRENT_ENDPOINT, DATA_DIR."""

import json
import os
import re
import sys

import numpy as np

import paddle_compat as fluid

# a fetched loss as train_from_dataset prints it (Paddle 1.8's tensor dump): its value
LOSS_DUMP = re.compile(r"loss\t[^\t]*\t\tlod: [^\n]*\n\tdim: [^\n]*\n\tlayout: NCHW\n\tdtype: [^\n]*\n"
                       r"\tdata: \[([-0-9.e+]+)\]")

REF = json.load(open(os.path.join(os.path.dirname(__file__), "..", "..", "data", "paddle18", "dataset_train.json")))


def main():
    role = os.environ["TRAINING_ROLE"]
    eps = os.environ["PADDLE_PSERVERS_IP_PORT_LIST"]
    main_p, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main_p, startup):
        slots = [fluid.data("s%d" % i, [None, 1], "int64", lod_level=1) for i in range(2)]
        dense = fluid.data("dense", [None, 3], "float32")
        label = fluid.data("label", [None, 1], "int64")
        E, W = np.array(REF["E"], "float32"), np.array(REF["W"], "float32")
        pooled = [fluid.layers.sequence_pool(fluid.layers.embedding(
            x, [20, 4], is_sparse=True, param_attr=fluid.ParamAttr(
                name="emb", initializer=fluid.initializer.NumpyArrayInitializer(E))), "sum") for x in slots]
        pred = fluid.layers.fc(fluid.layers.concat(pooled + [dense], axis=1), 2, act="softmax",
                               param_attr=fluid.ParamAttr(name="fc_w",
                                                          initializer=fluid.initializer.NumpyArrayInitializer(W)),
                               bias_attr=fluid.ParamAttr(name="fc_b"))
        loss = fluid.layers.mean(fluid.layers.cross_entropy(pred, label))
        fluid.optimizer.SGD(0.5).minimize(loss)
    t = fluid.DistributeTranspiler()
    t.transpile(0, program=main_p, startup_program=startup, pservers=eps, trainers=1, sync_mode=True)
    exe = fluid.Executor(fluid.CPUPlace())
    if role == "PSERVER":
        ep = os.environ["PADDLE_CURRENT_ENDPOINT"]
        prog = t.get_pserver_program(ep)
        exe.run(t.get_startup_program(ep, prog))
        exe.run(prog)
        print("SERVED", flush=True)
        return
    d = os.environ["DATA_DIR"]
    files = [os.path.join(d, "a.txt"), os.path.join(d, "b.txt")]
    with open(files[0], "w") as f:
        f.writelines(REF["lines"][:REF["split"]])
    with open(files[1], "w") as f:
        f.writelines(REF["lines"][REF["split"]:])
    ds = fluid.DatasetFactory().create_dataset("QueueDataset")
    ds.set_use_var(slots + [dense, label])
    ds.set_batch_size(8)
    ds.set_filelist(files)
    exe.run(startup)
    import io
    buf, old = io.StringIO(), sys.stdout
    sys.stdout = buf
    try:
        for _ in range(2):
            exe.train_from_dataset(t.get_trainer_program(), ds, thread=1, fetch_list=[loss], fetch_info=["loss"],
                                   print_period=1)
    finally:
        sys.stdout = old
    exe.close()
    losses = [float(x) for x in LOSS_DUMP.findall(buf.getvalue())]
    print("RESULT " + json.dumps(losses), flush=True)


if __name__ == "__main__":
    main()
