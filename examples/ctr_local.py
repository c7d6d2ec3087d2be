"""Train the CTR-DNN locally (one process) on synthetic Criteo-like data; print losses, AUC and samples/s.

    python examples/ctr_local.py [--steps 300] [--batch 64] [--slots 26] [--optimizer sgd|adagrad|adam]
                                 [--reader batch|sample] [--dense-table]

The script is a plain Fluid 1.x program: `import paddle_compat as fluid` is the only change it would need
to run on PaddlePaddle 1.x (plus the two example modules next to it).
"""

import argparse
import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import paddle_compat as fluid  # noqa: E402
from ctr_data import SyntheticCTR  # noqa: E402
from ctr_model import build_ctr_model  # noqa: E402


def make_optimizer(name, lr):
    if name == "sgd":
        return fluid.optimizer.SGD(learning_rate=lr)
    if name == "adagrad":
        return fluid.optimizer.Adagrad(learning_rate=lr, epsilon=1e-6)
    if name == "adam":
        return fluid.optimizer.Adam(learning_rate=lr, lazy_mode=True)
    raise ValueError("unknown optimizer %r" % name)


def reset_auc(scope, model):
    """Zero the AUC statistics (to measure on held-out data from scratch)."""
    for v in model.auc_states:
        t = scope.find_var(v.name).get_tensor()
        t.set(np.zeros(t.shape(), dtype=np.int64), fluid.CPUPlace())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--slots", type=int, default=26)
    ap.add_argument("--emb-dim", type=int, default=10)
    ap.add_argument("--table-height", type=int, default=1000001)
    ap.add_argument("--hidden", default="400,400,400")
    ap.add_argument("--optimizer", default="sgd", choices=["sgd", "adagrad", "adam"])
    ap.add_argument("--lr", type=float, default=None)
    ap.add_argument("--reader", default="batch", choices=["batch", "sample"],
                    help="batch: numpy/LoDTensor minibatches; sample: per-sample lists through DataFeeder")
    ap.add_argument("--dense-table", action="store_true", help="embedding is_sparse=False (dense table grads)")
    ap.add_argument("--test-samples", type=int, default=4096)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--log-every", type=int, default=50)
    args = ap.parse_args(argv)
    try:
        import torch
        torch.set_num_threads(1)
    except ImportError:
        pass

    n_train = args.steps * args.batch
    data = SyntheticCTR(num_samples=n_train + args.test_samples, num_slots=args.slots,
                        table_height=args.table_height, seed=args.seed)
    place = fluid.CPUPlace()
    main_prog, startup = fluid.Program(), fluid.Program()
    main_prog.random_seed = startup.random_seed = args.seed
    with fluid.program_guard(main_prog, startup), fluid.unique_name.guard():
        model = build_ctr_model(fluid, args.slots, emb_dim=args.emb_dim, table_height=args.table_height,
                                is_sparse=not args.dense_table, hidden=[int(h) for h in args.hidden.split(",")])
        test_prog = main_prog.clone(for_test=True)
        lr = args.lr if args.lr is not None else {"sgd": 0.05, "adagrad": 0.05, "adam": 0.001}[args.optimizer]
        make_optimizer(args.optimizer, lr).minimize(model.loss)

    exe = fluid.Executor(place)
    scope = fluid.global_scope()
    exe.run(startup)

    loader = fluid.io.DataLoader.from_generator(feed_list=model.feed_list, capacity=64, iterable=True)
    if args.reader == "batch":
        loader.set_batch_generator(data.batch_reader(args.batch, place, 0, n_train), places=place)
    else:
        loader.set_sample_generator(data.sample_reader(0, n_train), batch_size=args.batch, places=place)

    print("CTR-DNN: %d slots, table %d x %d (%s), fc %s, %s, batch %d, %d steps"
          % (args.slots, args.table_height, args.emb_dim, "dense grads" if args.dense_table else "sparse grads",
             args.hidden, args.optimizer, args.batch, args.steps))
    t0, seen, first = time.perf_counter(), 0, None
    for step, feed in enumerate(loader()):
        loss, auc, batch_auc = exe.run(main_prog, feed=feed, fetch_list=[model.loss, model.auc, model.batch_auc])
        seen += args.batch
        if step == 0:
            first, t0, seen = float(loss[0]), time.perf_counter(), 0   # leave lowering out of the rate
        if step % args.log_every == 0 or step == args.steps - 1:
            print("step %4d  loss %.6f  auc %.4f  batch_auc %.4f" % (step, loss[0], auc[0], batch_auc[0]))
    elapsed = time.perf_counter() - t0
    rate = seen / elapsed if elapsed > 0 else float("nan")
    print("train: %.0f samples/s (%.2f ms/step, including data loading)" % (rate, 1e3 * elapsed / max(1, step)))

    reset_auc(scope, model)
    test_loader = fluid.io.DataLoader.from_generator(feed_list=model.feed_list, capacity=64, iterable=True)
    test_loader.set_batch_generator(data.batch_reader(512, place, n_train, n_train + args.test_samples), places=place)
    losses = []
    for feed in test_loader():
        loss, auc = exe.run(test_prog, feed=feed, fetch_list=[model.loss, model.auc])
        losses.append(float(loss[0]))
    print("test: loss %.6f  auc %.4f  (first train loss %.6f)" % (np.mean(losses), auc[0], first))
    return {"first_loss": first, "test_loss": float(np.mean(losses)), "test_auc": float(auc[0]),
            "samples_per_s": rate}


if __name__ == "__main__":
    main()
