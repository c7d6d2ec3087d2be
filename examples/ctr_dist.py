"""CTR at parameter-server scale: the CTR-DNN (13 dense features + 26 id slots sharing one embedding table, sum
pooling per slot, an fc tower, softmax, AUC) trained by 2 pservers + 2 trainers on 127.0.0.1, with the
embedding table living only on the pservers (embedding is_distributed=True: each pserver holds ceil(H/2)
contiguous rows; trainers prefetch the rows of each batch's ids and push back their gradients).

    python examples/ctr_dist.py                      sync, 400 steps per trainer, table 1000001 x 10
    python examples/ctr_dist.py --async --steps 300  async mode
    python examples/ctr_dist.py --table-height 10000001 --emb-dim 16    a 640 MB table (2 x 320 MB on the pservers)

Run without a role, it picks free ports, starts the four processes itself (this same script with
TRAINING_ROLE / PADDLE_TRAINER_ID set, as a cluster launcher would), prints their losses, AUC and
samples/s, cleans them up by pid and exits non-zero if any failed. Each process is a plain Fluid 1.x
script: `import paddle_compat as fluid` is its only change from PaddlePaddle 1.x.
"""

import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))


def node(args):
    import torch
    torch.set_num_threads(1)
    import numpy as np
    import paddle_compat as fluid
    from ctr_data import SyntheticCTR
    from ctr_model import build_ctr_model
    from paddle_compat.backends.ps import connections

    role = os.getenv("PADDLE_TRAINING_ROLE") or os.getenv("TRAINING_ROLE")
    pserver_endpoints = os.getenv("PADDLE_PSERVERS_IP_PORT_LIST")
    trainers = int(os.getenv("PADDLE_TRAINERS_NUM"))
    trainer_id = int(os.getenv("PADDLE_TRAINER_ID", "0"))
    current_endpoint = os.getenv("PADDLE_CURRENT_ENDPOINT")

    model = build_ctr_model(fluid, args.slots, emb_dim=args.emb_dim, table_height=args.table_height,
                            is_sparse=True, is_distributed=True, hidden=[int(h) for h in args.hidden.split(",")])
    if args.optimizer == "adagrad":
        fluid.optimizer.Adagrad(learning_rate=args.lr, epsilon=1e-6).minimize(model.loss)
    else:
        fluid.optimizer.SGD(learning_rate=args.lr).minimize(model.loss)

    t = fluid.DistributeTranspiler()
    t.transpile(trainer_id, pservers=pserver_endpoints, trainers=trainers, sync_mode=not args.async_mode)
    exe = fluid.Executor(fluid.CPUPlace())
    if role == "PSERVER":
        prog, startup = t.get_pserver_programs(current_endpoint)
        t0 = time.perf_counter()
        exe.run(startup)
        print("pserver %s: table shard ready in %.2fs" % (current_endpoint, time.perf_counter() - t0), flush=True)
        exe.run(prog)          # returns once every trainer has called exe.close()
        print("pserver %s: all trainers done" % current_endpoint, flush=True)
        return
    trainer_prog = t.get_trainer_program()
    exe.run(fluid.default_startup_program())
    # --pool bounds the generated data (long runs cycle through it instead of holding every batch)
    pool_batches = args.steps * trainers if not args.pool else max(trainers, args.pool // args.batch)
    data = SyntheticCTR(num_samples=pool_batches * args.batch, num_slots=args.slots,
                        table_height=args.table_height, seed=args.seed)
    place = fluid.CPUPlace()
    fetch = [model.loss, model.auc, model.batch_auc]
    losses, t0, seen = [], None, 0
    for step in range(args.steps):
        k = (step * trainers + trainer_id) % pool_batches       # each trainer its own batches
        feed = next(data.batches(args.batch, place, start=k * args.batch, stop=(k + 1) * args.batch))
        loss, auc, batch_auc = exe.run(trainer_prog, feed=dict(zip([v.name for v in model.feed_list], feed)),
                                       fetch_list=fetch)
        losses.append(float(np.asarray(loss).reshape(-1)[0]))
        if step == args.warmup:
            t0, seen = time.perf_counter(), 0       # leave start-up and lowering out of the rate
        seen += args.batch
        if step % args.log_every == 0 or step == args.steps - 1:
            print("step %4d  loss %.6f  auc %.4f  batch_auc %.4f"
                  % (step, losses[-1], float(np.asarray(auc).reshape(-1)[0]),
                     float(np.asarray(batch_auc).reshape(-1)[0])), flush=True)
    rate = (seen - args.batch) / (time.perf_counter() - t0) if t0 is not None and seen > args.batch else float("nan")
    stats = dict(connections.joined().stats)     # what went over this trainer's connection
    exe.close()                # tells the pservers this trainer is done
    print("RESULT " + json.dumps({"trainer": trainer_id, "samples_per_s": rate, "first_loss": losses[0],
                                  "last_losses": float(np.mean(losses[-20:])),
                                  "auc": float(np.asarray(auc).reshape(-1)[0]),
                                  "stats": stats}), flush=True)


def launch(args):
    from cluster_demo import run_job
    argv = [sys.executable, os.path.abspath(__file__)] + sys.argv[1:]
    title = "%s mode, CTR-DNN %d slots, table %d x %d on the pservers, %s, batch %d, %d steps per trainer" % (
        "async" if args.async_mode else "sync", args.slots, args.table_height, args.emb_dim, args.optimizer,
        args.batch, args.steps)
    failed, lines, took = run_job(argv, args.pservers, args.trainers, args.timeout, title)
    if failed:
        return 1
    results = [json.loads(line[len("RESULT "):]) for _, line in lines if line.startswith("RESULT ")]
    total = 0.0
    for r in sorted(results, key=lambda r: r["trainer"]):
        total += r["samples_per_s"]
        print("trainer %d: loss %.4f -> %.4f (mean of the last 20 steps), AUC %.4f, %.0f samples/s, %d prefetch "
              "calls, %d rows prefetched, %d rows pushed" % (r["trainer"], r["first_loss"], r["last_losses"], r["auc"],
                                                            r["samples_per_s"], r["stats"].get("prefetch_calls", 0),
                                                            r["stats"].get("prefetch_rows", 0),
                                                            r["stats"].get("sparse_rows", 0)))
    print("OK: %d pservers + %d trainers finished in %.1fs; job throughput %.0f samples/s"
          % (args.pservers, args.trainers, took, total), flush=True)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--async", dest="async_mode", action="store_true", help="async mode (no barriers)")
    ap.add_argument("--steps", type=int, default=400, help="steps per trainer")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--slots", type=int, default=26)
    ap.add_argument("--emb-dim", type=int, default=10)
    ap.add_argument("--table-height", type=int, default=1000001)
    ap.add_argument("--hidden", default="400,400,400")
    ap.add_argument("--optimizer", default="sgd", choices=["sgd", "adagrad"])
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--pool", type=int, default=0, help="samples generated per job (0: one batch per step)")
    ap.add_argument("--warmup", type=int, default=10, help="steps left out of samples/s")
    ap.add_argument("--log-every", type=int, default=50)
    ap.add_argument("--pservers", type=int, default=2)
    ap.add_argument("--trainers", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=300, help="seconds before the launcher gives up")
    args = ap.parse_args()
    if os.getenv("PADDLE_TRAINING_ROLE") or os.getenv("TRAINING_ROLE"):
        node(args)
        return 0
    return launch(args)


if __name__ == "__main__":
    sys.exit(main())
