"""One process of a pserver-mode job whose embedding is a distributed lookup table, for the inference-export
dist test (tests/dist/test_table_export.py). Environment as ps_node.py:

    TRAINING_ROLE=PSERVER|TRAINER  PADDLE_PSERVERS_IP_PORT_LIST=ip:port,...  PADDLE_TRAINERS_NUM=2
    PADDLE_TRAINER_ID=0 (trainers)  PADDLE_CURRENT_ENDPOINT=ip:port (pservers)
    python table_export_node.py '<json spec>'

Spec keys: out (directory), steps, sync, chunk_rows (FLAGS for the export's rows per RPC). After training,
trainer 0 predicts a fixed batch with two test programs (cloned from the trainer program, and from the main
program before the optimizer and the transpiler), exports the model with save_inference_model (one file per
parameter into <out>/model, combined into <out>/model_combined, and from the early test program into
<out>/model_from_test), asks the pservers to checkpoint their shards
into <out>/ckpt, and writes its predictions to <out>/trainer_predictions.npz; then both trainers close.
"""

import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(HERE))))

import paddle_compat as fluid  # noqa: E402

HEIGHT, DIM, SLOTS = 1003, 8, 2      # a height that does not split evenly over 2 pservers


def build():
    """Two LoD id slots through one distributed table, a dense input, two fc layers. Returns feeds, the
    prediction, the loss and the test program cloned before the optimizer."""
    slots = [fluid.layers.data(name="s%d" % i, shape=[1], dtype="int64", lod_level=1) for i in range(SLOTS)]
    dense = fluid.layers.data(name="dense", shape=[3], dtype="float32")
    label = fluid.layers.data(name="label", shape=[1], dtype="int64")
    init = np.random.RandomState(7).uniform(-0.5, 0.5, (HEIGHT, DIM)).astype(np.float32)
    pooled = []
    for s in slots:
        e = fluid.layers.embedding(s, size=[HEIGHT, DIM], is_sparse=True, is_distributed=True,
                                   param_attr=fluid.ParamAttr(
                                       name="table", initializer=fluid.initializer.NumpyArrayInitializer(init)))
        pooled.append(fluid.layers.sequence_pool(e, "sum"))
    h = fluid.layers.fc(input=fluid.layers.concat(pooled + [dense], axis=1), size=16, act="relu",
                        param_attr=fluid.ParamAttr(initializer=fluid.initializer.Uniform(-0.3, 0.3, seed=3)))
    predict = fluid.layers.fc(input=h, size=2, act="softmax",
                              param_attr=fluid.ParamAttr(initializer=fluid.initializer.Uniform(-0.3, 0.3, seed=4)))
    loss = fluid.layers.mean(fluid.layers.cross_entropy(predict, label))
    test = fluid.default_main_program().clone(for_test=True)
    return ["s0", "s1", "dense"], predict, loss, test


def batch(seed, n=16):
    rng = np.random.RandomState(seed)
    out = {}
    for i in range(SLOTS):
        lens = rng.randint(1, 4, n)
        ids = rng.randint(0, HEIGHT, (int(lens.sum()), 1)).astype("int64")
        out["s%d" % i] = (ids, lens.tolist())
    out["dense"] = rng.rand(n, 3).astype("float32")
    out["label"] = (out["dense"][:, :1] > 0.5).astype("int64")
    return out


def as_feed(b, names=None):
    return {k: (fluid.create_lod_tensor(v[0], [v[1]], fluid.CPUPlace()) if isinstance(v, tuple) else v)
            for k, v in b.items() if names is None or k in names}


def main():
    spec = json.loads(sys.argv[1])
    role = (os.environ.get("TRAINING_ROLE") or os.environ.get("PADDLE_TRAINING_ROLE") or "").upper()
    eps = os.environ["PADDLE_PSERVERS_IP_PORT_LIST"].split(",")
    trainers = int(os.environ["PADDLE_TRAINERS_NUM"])
    tid = int(os.environ.get("PADDLE_TRAINER_ID", "0"))
    main_prog, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main_prog, startup), fluid.unique_name.guard():
        feeds, predict, loss, test_before = build()
        fluid.optimizer.SGD(learning_rate=0.5).minimize(loss)
    t = fluid.DistributeTranspiler()
    t.transpile(tid, program=main_prog, startup_program=startup, pservers=",".join(eps), trainers=trainers,
                sync_mode=spec.get("sync", True))
    exe = fluid.Executor(fluid.CPUPlace())
    if role == "PSERVER":
        prog, pstart = t.get_pserver_programs(os.environ["PADDLE_CURRENT_ENDPOINT"])
        exe.run(pstart)
        exe.run(prog)
        print("SERVED", flush=True)
        return
    prog = t.get_trainer_program()
    test_after = prog.clone(for_test=True)
    exe.run(startup)
    losses = []
    for s in range(spec.get("steps", 6)):
        out = exe.run(prog, feed=as_feed(batch(100 + s * trainers + tid)), fetch_list=[loss])
        losses.append(float(np.asarray(out[0]).reshape(-1)[0]))
    if tid == 0:
        ev = batch(999, n=12)
        got = {}
        got["after"], = exe.run(test_after, feed=as_feed(ev), fetch_list=[predict.name])
        got["before"], = exe.run(test_before, feed=as_feed(ev), fetch_list=[predict.name])
        out = spec["out"]
        fluid.io.save_inference_model(os.path.join(out, "model"), feeds, [predict], exe, main_program=prog)
        fluid.io.save_inference_model(os.path.join(out, "model_combined"), feeds, [predict], exe,
                                      main_program=prog, params_filename="params")
        # a program that looks the table up itself (cloned before transpile) exports the same way
        fluid.io.save_inference_model(os.path.join(out, "model_from_test"), feeds, [predict], exe,
                                      main_program=test_before)
        fluid.io.save_persistables(exe, os.path.join(out, "ckpt"), prog)
        # the trainer's program is unchanged by the export: it still trains
        after = exe.run(prog, feed=as_feed(batch(5000)), fetch_list=[loss])
        losses.append(float(np.asarray(after[0]).reshape(-1)[0]))
        arrays = {"pred_" + k: v for k, v in got.items()}
        for k, v in ev.items():
            if isinstance(v, tuple):
                arrays["in_" + k], arrays["lod_" + k] = v[0], np.array(v[1])
            else:
                arrays["in_" + k] = v
        np.savez(os.path.join(out, "trainer_predictions.npz"), **arrays)
    else:
        exe.run(prog, feed=as_feed(batch(5001)), fetch_list=[loss])   # the step trainer 0 takes after export
    exe.close()
    print("RESULT " + json.dumps({"job": 0, "trainer": tid, "losses": losses}), flush=True)


if __name__ == "__main__":
    import torch
    torch.set_num_threads(1)
    main()
