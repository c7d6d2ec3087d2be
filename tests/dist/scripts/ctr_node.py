"""One process of a pserver-mode CTR job (pserver or trainer, by TRAINING_ROLE), for the distributed-table
dist tests. Same environment contract as ps_node.py:

    TRAINING_ROLE=PSERVER|TRAINER  PADDLE_PSERVERS_IP_PORT_LIST=ip:port,...  PADDLE_TRAINERS_NUM=2
    PADDLE_TRAINER_ID=0 (trainers)  PADDLE_CURRENT_ENDPOINT=ip:port (pservers)
    python ctr_node.py '<json list of job specs>'

Spec keys: model (ref: the Paddle CTR reference model and data of tests/ctr_reference.py; synth: the
26-slot model on examples/ctr_data.SyntheticCTR), dist (embedding is_distributed), sparse (is_sparse),
opt (sgd|adagrad), lr, sync, tables (2: a second distributed table on slot C1's ids), steps, start (first
step), save_dir + save_at (trainer 0 saves after that many steps), load_dir (pservers load before
serving), height / emb_dim / slots / batch (synth), rss (report the trainer's peak RSS), auc (report
[auc, batch_auc] per step). Trainers print `RESULT {...}` per job: job, trainer, losses, stats (what the
client sent), and rss_kb / auc when asked; pservers print `SERVED job <i> rss_kb <n>`.
"""

import json
import os
import resource
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, TESTS)
sys.path.insert(0, os.path.join(os.path.dirname(TESTS), "examples"))

import numpy as np  # noqa: E402

import paddle_compat as fluid  # noqa: E402
from paddle_compat.backends.ps import connections  # noqa: E402
import ctr_reference as R  # noqa: E402
from ctr_model import build_ctr_model  # noqa: E402

_REF = {}


def ref_data():
    if not _REF:
        _REF["data"], _REF["init"] = R.make_data(), R.make_init()
    return _REF["data"], _REF["init"]


def _synth(spec, trainers):
    from ctr_data import SyntheticCTR
    key = ("synth", spec.get("height"), spec.get("slots", 26), trainers, spec.get("steps"), spec.get("batch", 64))
    if key not in _REF:
        n = spec.get("batch", 64) * trainers * spec.get("steps", 5)
        _REF[key] = SyntheticCTR(num_samples=n, num_slots=spec.get("slots", 26), table_height=spec["height"], seed=1)
    return _REF[key]


def build_model(spec, towers=1, table_learning_rate=1.0):
    """The spec's model. towers=2: two copies sharing the parameters, loss = mean of the towers' losses
    (the local reference of two sync trainers; table_learning_rate=2 turns the table's averaged gradient
    into the sum a pserver applies). Returns the CTRModel of each tower."""
    models = []
    for t in range(towers):
        sfx = "" if towers == 1 else "_%d" % t
        if spec.get("model", "ref") == "ref":
            _, init = ref_data()
            m = build_ctr_model(fluid, R.SLOTS, emb_dim=R.EMB_DIM, table_height=R.VOCAB,
                                is_sparse=spec.get("sparse", True),
                                is_distributed=spec.get("dist", True), hidden=R.HIDDEN, init=init,
                                with_metrics=towers == 1, suffix=sfx, table_learning_rate=table_learning_rate)
        else:
            m = build_ctr_model(fluid, spec.get("slots", 26), emb_dim=spec.get("emb_dim", 16),
                                table_height=spec["height"], is_sparse=spec.get("sparse", True),
                                is_distributed=spec.get("dist", True), hidden=(64, 32), with_metrics=towers == 1,
                                suffix=sfx, table_learning_rate=table_learning_rate)
        if spec.get("tables", 1) == 2:   # a second distributed table, on slot C1's ids
            value = np.random.RandomState(5).uniform(-0.5, 0.5, (R.VOCAB, 4)).astype(np.float32)
            e = fluid.layers.embedding(m.slots[0], size=[R.VOCAB, 4], is_sparse=True,
                                       is_distributed=spec.get("dist", True),
                                       param_attr=fluid.ParamAttr(
                                           name="emb2", initializer=fluid.initializer.NumpyArrayInitializer(value)))
            extra = fluid.layers.mean(fluid.layers.sequence_pool(e, "sum"))
            m = m._replace(loss=fluid.layers.elementwise_add(m.loss, extra))
        models.append(m)
    losses = [m.loss for m in models]
    total = losses[0] if towers == 1 else fluid.layers.scale(fluid.layers.sums(losses), scale=1.0 / towers)
    lr = spec.get("lr", 0.05)
    if spec.get("opt", "sgd") == "adagrad":
        fluid.optimizer.Adagrad(learning_rate=lr, epsilon=1e-6).minimize(total)
    else:
        fluid.optimizer.SGD(learning_rate=lr).minimize(total)
    return models


def feed(spec, trainer_id, step, trainers, sfx=""):
    """Trainer `trainer_id`'s own batch of global step `step`."""
    k = step * trainers + trainer_id
    if spec.get("model", "ref") == "ref":
        data, _ = ref_data()
        out = R.feeds(fluid, data, k)
    else:
        b = spec.get("batch", 64)
        fields = next(_synth(spec, trainers).batches(b, fluid.CPUPlace(), start=k * b, stop=(k + 1) * b))
        names = ["dense_input"] + ["C%d" % (i + 1) for i in range(spec.get("slots", 26))] + ["label"]
        out = dict(zip(names, fields))
    return {n + sfx: v for n, v in out.items()}


def peak_rss_kb():
    """This process's peak RSS (KiB). getrusage's ru_maxrss survives exec on Linux: a process started by a
    big parent (pytest) reports at least the parent's size at fork. /proc's VmHWM belongs to this image."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def run_job(i, spec, role, eps, trainers, tid, current):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        model = build_model(spec)[0]
    t = fluid.DistributeTranspiler()
    t.transpile(tid, program=main, startup_program=startup, pservers=",".join(eps), trainers=trainers,
                sync_mode=spec.get("sync", True))
    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(scope):
        if role == "PSERVER":
            prog, pstart = t.get_pserver_programs(current)
            exe.run(pstart)
            if spec.get("load_dir"):
                fluid.io.load_persistables(exe, spec["load_dir"], prog)
            exe.run(prog)
            print("SERVED job %d rss_kb %d" % (i, peak_rss_kb()), flush=True)
            return
        prog = t.get_trainer_program()
        exe.run(startup)
        losses, aucs = [], []
        fetch = [model.loss] + ([model.auc, model.batch_auc] if spec.get("auc") else [])
        for s in range(spec.get("start", 0), spec.get("steps", 5)):
            out = exe.run(prog, feed=feed(spec, tid, s, trainers), fetch_list=fetch)
            losses.append(float(np.asarray(out[0]).reshape(-1)[0]))
            if spec.get("auc"):
                aucs.append([float(np.asarray(v).reshape(-1)[0]) for v in out[1:]])
            if spec.get("save_at") == s + 1 and tid == 0:
                fluid.io.save_persistables(exe, spec["save_dir"], prog)
        stats = dict(connections.joined().stats)
        exe.close()
    res = {"job": i, "trainer": tid, "losses": losses, "stats": stats}
    if spec.get("auc"):
        res["auc"] = aucs
    if spec.get("rss"):
        res["rss_kb"] = peak_rss_kb()
        res["ru_maxrss_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print("RESULT " + json.dumps(res), flush=True)


def main():
    role = (os.environ.get("TRAINING_ROLE") or os.environ.get("PADDLE_TRAINING_ROLE") or "").upper()
    eps = os.environ["PADDLE_PSERVERS_IP_PORT_LIST"].split(",")
    trainers = int(os.environ["PADDLE_TRAINERS_NUM"])
    tid = int(os.environ.get("PADDLE_TRAINER_ID", "0"))
    current = os.environ.get("PADDLE_CURRENT_ENDPOINT", eps[0])
    for i, spec in enumerate(json.loads(sys.argv[1])):
        run_job(i, spec, role, eps, trainers, tid, current)


if __name__ == "__main__":
    import torch
    torch.set_num_threads(1)
    main()
