"""One process of a pserver-mode job (pserver or trainer, by TRAINING_ROLE), shared by the dist tests.

    TRAINING_ROLE=PSERVER|TRAINER  PADDLE_PSERVERS_IP_PORT_LIST=ip:port,...  PADDLE_TRAINERS_NUM=2
    PADDLE_TRAINER_ID=0 (trainers)  PADDLE_CURRENT_ENDPOINT=ip:port (pservers)
    python ps_node.py '<json list of job specs>'

Each spec is one training job run in turn by every process of the cluster (process start-up is the slow
part of a dist test, so one launch runs several configurations). Spec keys: model (mlp|fit_a_line|emb: an is_sparse embedding),
opt (sgd|adam|ftrl), slice (bool), split (rr|hash), sync (bool), lr_decay (bool), steps, start (first step),
save_dir + save_at (trainer 0 saves after that many steps; a list: after each), load_dir (pservers load before serving),
die_at (trainer 1 kills itself at that step), stall_at + stall (trainer 1 sleeps that long at that step),
steps_by_trainer ({"1": 3}: trainer 1 stops early and closes), sleep (seconds per trainer step), dc_asgd,
runtime_split (async with config.runtime_split_send_recv), geo (Geo-SGD pushing every N steps), raise_at (trainer 1 raises at that step),
no_close (trainers end without Executor.close(); must be the last job),
startup_exe (trainers run the startup program on an Executor of its own, closed after the first training step:
the training Executor shares its connection and the trainer goes on),
nan_at (trainer nan_trainer, default 0, feeds NaN at that step: the pserver refuses the push; the trainer prints
REFUSED and goes on), skip_at (a step the trainers skip),
trainer_cuda / pserver_cuda (that role runs on CUDAPlace(0): the GPU tests),
via ("desc" | "json": each process writes its transpiled programs to files, Paddle's ProgramDesc bytes or program
JSON, and runs the programs read back from them: the programs carry the whole job).
Trainers print one line `RESULT {"job": i, "trainer": t, "losses": [...]}` per job.
"""

import json
import os
import signal
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))   # tests/ (reference_data)

import numpy as np  # noqa: E402

import paddle_compat as fluid  # noqa: E402
import reference_data as R  # noqa: E402
from paddle_compat.backends.ps.records import pserver_plan, trainer_plan  # noqa: E402

_DATA = None
EMB_ROWS = 20000     # 160000 elements: cut into 2 blocks


def data():
    global _DATA
    if _DATA is None:
        _DATA = R.make_data(), R.make_init()
    return _DATA


def build_model(spec, towers=1, minimize=None):
    """The spec's model; with towers=2 two copies share the parameters and the loss is the mean of the
    two towers' losses (the local reference of two trainers' averaged gradients). Returns the tower losses.
    minimize(optimizer, loss) replaces optimizer.minimize(loss) (Fleet wraps the optimizer)."""
    (fit_x, fit_y, mnist_x, mnist_y), (fit_init, mlp_init) = data()
    opt = spec.get("opt", "sgd")
    lr = spec.get("lr", 0.1 if opt == "sgd" and spec.get("model", "mlp") == "mlp" else
                  (0.001 if opt == "adam" or spec.get("model") == "fit_a_line" else 0.1))
    if spec.get("lr_decay"):
        lr = fluid.layers.exponential_decay(lr, decay_steps=2, decay_rate=0.7)
    losses = []
    for t in range(towers):
        sfx = "" if towers == 1 else "_%d" % t
        if spec.get("model") == "emb":
            ids = fluid.layers.data(name="ids" + sfx, shape=[1], dtype="int64")
            y = fluid.layers.data(name="y" + sfx, shape=[1], dtype="float32")
            table = np.random.RandomState(3).uniform(-0.1, 0.1, (EMB_ROWS, 8)).astype(np.float32)
            e = fluid.layers.embedding(ids, size=[EMB_ROWS, 8], is_sparse=True, param_attr=_attr("emb_w", table))
            pred = fluid.layers.fc(input=e, size=1, param_attr=_attr("fc_0.w_0", np.full((8, 1), 0.1, np.float32)),
                                   bias_attr=_attr("fc_0.b_0", np.zeros(1, np.float32)))
            losses.append(fluid.layers.mean(fluid.layers.square_error_cost(input=pred, label=y)))
        elif spec.get("model", "mlp") == "fit_a_line":
            w, b = fit_init
            x = fluid.layers.data(name="x" + sfx, shape=[13], dtype="float32")
            y = fluid.layers.data(name="y" + sfx, shape=[1], dtype="float32")
            pred = fluid.layers.fc(input=x, size=1, param_attr=_attr("fc_0.w_0", w), bias_attr=_attr("fc_0.b_0", b))
            losses.append(fluid.layers.mean(fluid.layers.square_error_cost(input=pred, label=y)))
        else:
            img = fluid.layers.data(name="img" + sfx, shape=[784], dtype="float32")
            label = fluid.layers.data(name="label" + sfx, shape=[1], dtype="int64")
            h = img
            for i, ((w, b), act) in enumerate(zip(mlp_init, ["relu", "relu", "softmax"])):
                h = fluid.layers.fc(input=h, size=w.shape[1], act=act, param_attr=_attr("fc_%d.w_0" % i, w),
                                    bias_attr=_attr("fc_%d.b_0" % i, b))
            losses.append(fluid.layers.mean(fluid.layers.cross_entropy(input=h, label=label)))
    total = losses[0] if towers == 1 else fluid.layers.scale(fluid.layers.sums(losses), scale=1.0 / towers)
    optimizer = R.make_optimizer(fluid, opt, lr)
    if minimize is None:
        optimizer.minimize(total)
    else:
        minimize(optimizer, total)
    return losses


def _attr(name, value):
    return fluid.ParamAttr(name=name, initializer=fluid.initializer.NumpyArrayInitializer(value))


def feed(spec, trainer_id, step, trainers, sfx=""):
    """Trainer `trainer_id`'s own batch of global step `step`."""
    (fit_x, fit_y, mnist_x, mnist_y), _ = data()
    k = step * trainers + trainer_id
    if spec.get("model") == "emb":
        ids = (np.abs(R.batch(fit_x, k)[:, :1]) * EMB_ROWS).astype(np.int64) % EMB_ROWS
        return {"ids" + sfx: ids, "y" + sfx: R.batch(fit_y, k)}
    if spec.get("model", "mlp") == "fit_a_line":
        return {"x" + sfx: R.batch(fit_x, k), "y" + sfx: R.batch(fit_y, k)}
    return {"img" + sfx: R.batch(mnist_x, k), "label" + sfx: R.batch(mnist_y, k)}


def run_job(i, spec, role, eps, trainers, tid, current):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        loss = build_model(spec)[0]
    cfg = fluid.DistributeTranspilerConfig()
    cfg.slice_var_up = spec.get("slice", True)
    cfg.split_method = fluid.transpiler.HashName if spec.get("split") == "hash" else fluid.transpiler.RoundRobin
    if spec.get("dc_asgd"):
        cfg.enable_dc_asgd = True
    if spec.get("runtime_split"):
        cfg.sync_mode = False
        cfg.runtime_split_send_recv = True
    if spec.get("geo"):                  # Geo-SGD, pushing deltas every spec["geo"] steps
        cfg.sync_mode = False
        cfg.geo_sgd_mode = True
        cfg.geo_sgd_need_push_nums = spec["geo"]
    t = fluid.DistributeTranspiler(config=cfg)
    t.transpile(tid, program=main, startup_program=startup, pservers=",".join(eps), trainers=trainers,
                sync_mode=spec.get("sync", True))
    via = spec.get("via")
    scope = fluid.Scope()
    on_gpu = spec.get("pserver_cuda" if role == "PSERVER" else "trainer_cuda")
    exe = fluid.Executor(fluid.CUDAPlace(0) if on_gpu else fluid.CPUPlace())
    with fluid.scope_guard(scope):
        if role == "PSERVER":
            prog = t.get_pserver_program(current)
            pstartup = t.get_startup_program(current, prog)
            if via:
                prog, pstartup = (reload(p, via, "pserver%d_%s" % (eps.index(current), w))
                                  for p, w in ((prog, "main"), (pstartup, "startup")))
            print("DIGEST %s" % (pserver_plan(prog) or trainer_plan(prog)).plan_digest, flush=True)
            exe.run(pstartup)
            if spec.get("load_dir"):
                fluid.io.load_persistables(exe, spec["load_dir"], prog)
            exe.run(prog)
            print("SERVED job %d" % i, flush=True)
            return
        prog = t.get_trainer_program()
        if via:
            prog, startup = (reload(p, via, "trainer%d_%s" % (tid, w))
                             for p, w in ((prog, "main"), (startup, "startup")))
            loss = prog.global_block().var(loss.name)
        startup_exe = fluid.Executor(exe.place) if spec.get("startup_exe") else exe
        startup_exe.run(startup)
        losses = []
        steps = spec.get("steps_by_trainer", {}).get(str(tid), spec.get("steps", 5))
        for s in range(spec.get("start", 0), steps):
            if spec.get("die_at") == s and tid == 1:
                os.kill(os.getpid(), signal.SIGKILL)
            if spec.get("stall_at") == s and tid == 1:
                time.sleep(spec["stall"])
            if spec.get("raise_at") == s and tid == 1:
                raise RuntimeError("trainer 1 breaks down on purpose at step %d" % s)
            if spec.get("skip_at") == s:
                continue
            batch = feed(spec, tid, s, trainers)
            if spec.get("nan_at") == s and tid == spec.get("nan_trainer", 0):
                batch = {k: v * np.float32("nan") if v.dtype == np.float32 else v for k, v in batch.items()}
                try:
                    exe.run(prog, feed=batch, fetch_list=[loss])
                except Exception as e:      # the pserver refused the NaN gradient: say so and go on
                    print("REFUSED %s" % str(e).replace("\n", " "), flush=True)
                    continue
                raise AssertionError("a NaN gradient was accepted")
            out = exe.run(prog, feed=batch, fetch_list=[loss])
            if startup_exe is not exe:
                startup_exe.close()     # the training Executor holds the trainer's connection too: no "done" yet
            losses.append(float(np.asarray(out[0]).reshape(-1)[0]))
            print("step %d loss %.6f" % (s, losses[-1]), flush=True)
            save_at = spec.get("save_at")
            if tid == 0 and (s + 1 in save_at if isinstance(save_at, list) else save_at == s + 1):
                fluid.io.save_persistables(exe, spec["save_dir"], prog)
            if spec.get("sleep"):
                time.sleep(spec["sleep"])
        if spec.get("no_close"):   # the process just ends: the pservers still finish (no Executor.close())
            print("RESULT " + json.dumps({"job": i, "trainer": tid, "losses": losses}), flush=True)
            return
        exe.close()
    print("RESULT " + json.dumps({"job": i, "trainer": tid, "losses": losses}), flush=True)


def reload(program, via, name):
    """`program` written to a file (ProgramDesc bytes or program JSON) and read back."""
    from paddle_compat.ir.serialization import parse_program, program_from_dict, program_to_dict
    path = os.path.join(os.environ.get("PS_NODE_TMP", "."), "%s_%d.%s" % (name, os.getpid(), via))
    if via == "desc":
        with open(path, "wb") as f:
            f.write(program.desc.serialize_to_string())
        with open(path, "rb") as f:
            return parse_program(f.read())
    with open(path, "w") as f:
        json.dump(program_to_dict(program), f)
    with open(path) as f:
        return program_from_dict(json.load(f))


def main():
    role = (os.environ.get("TRAINING_ROLE") or os.environ.get("PADDLE_TRAINING_ROLE") or "").upper()
    eps = os.environ["PADDLE_PSERVERS_IP_PORT_LIST"].split(",")
    trainers = int(os.environ["PADDLE_TRAINERS_NUM"])
    tid = int(os.environ.get("PADDLE_TRAINER_ID", "0"))
    current = os.environ.get("PADDLE_CURRENT_ENDPOINT", eps[0])
    specs = json.loads(sys.argv[1])
    for i, spec in enumerate(specs):
        run_job(i, spec, role, eps, trainers, tid, current)


if __name__ == "__main__":
    import torch
    torch.set_num_threads(1)
    main()
