"""CTR-DNN in the PaddleRec 1.x style: 26 sparse id slots + 13 dense features, a MultiSlotDataGenerator pipe
script, train_from_dataset, Fleet parameter servers. The same file runs locally, as any role of a pserver
job, and unchanged under real PaddlePaddle 1.8.5:

    cd examples/ctr_dnn
    python make_data.py        # synthetic Criteo-like files (known signal) in data/ beside the scripts
    python train.py            # local
    python -m paddle_compat.distributed.launch_ps --server_num 2 --worker_num 2 train.py
    python -m paddle.distributed.launch_ps --server_num 2 --worker_num 2 train.py      # real Paddle 1.8.5

Without TRAINING_ROLE in the environment (or with --local) it trains locally. Each trainer reads its
share of data_dir/train (round-robin by trainer id) through criteo_reader.py with `--thread` threads.
After every epoch the model is evaluated on data_dir/test (mean loss and global AUC, the auc states reset
first): locally in place; in a job trainer 0 saves it (fleet.save_persistables) and evaluates the saved
parameters. Every trainer prints one `RESULT {json}` line.
"""

import argparse
import glob
import json
import math
import os
import sys
import tempfile
import time

import numpy as np
import paddle.fluid as fluid
from paddle.fluid.incubate.fleet.base import role_maker
from paddle.fluid.incubate.fleet.parameter_server.distribute_transpiler import fleet
from paddle.fluid.incubate.fleet.parameter_server.distribute_transpiler.distributed_strategy import \
    StrategyFactory

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from criteo_reader import CriteoDataset, SPARSE_FEATURE_DIM  # noqa: E402


def ctr_dnn(embedding_size, layer_sizes):
    dense_input = fluid.layers.data(name="dense_input", shape=[13], dtype="float32")
    sparse_inputs = [fluid.layers.data(name="C%d" % i, shape=[1], lod_level=1, dtype="int64")
                     for i in range(1, 27)]
    label = fluid.layers.data(name="label", shape=[1], dtype="int64")

    def embedding_layer(ids):
        emb = fluid.layers.embedding(
            input=ids, is_sparse=True, size=[SPARSE_FEATURE_DIM, embedding_size],
            param_attr=fluid.ParamAttr(name="SparseFeatFactors",
                                       initializer=fluid.initializer.Uniform(-0.01, 0.01)))
        return fluid.layers.sequence_pool(input=emb, pool_type="sum")

    h = fluid.layers.concat([embedding_layer(ids) for ids in sparse_inputs] + [dense_input], axis=1)
    for size in layer_sizes:
        h = fluid.layers.fc(input=h, size=size, act="relu", param_attr=fluid.ParamAttr(
            initializer=fluid.initializer.Normal(scale=1.0 / math.sqrt(h.shape[1]))))
    predict = fluid.layers.fc(input=h, size=2, act="softmax", param_attr=fluid.ParamAttr(
        initializer=fluid.initializer.Normal(scale=1.0 / math.sqrt(h.shape[1]))))
    avg_cost = fluid.layers.mean(fluid.layers.cross_entropy(input=predict, label=label))
    auc_var, _, auc_states = fluid.layers.auc(input=predict, label=label, num_thresholds=2 ** 12 - 1,
                                              slide_steps=20)
    return [dense_input] + sparse_inputs + [label], avg_cost, auc_var, auc_states


def reset_auc_states(auc_states, place):
    scope = fluid.global_scope()
    for var in auc_states:
        t = scope.find_var(var.name).get_tensor()
        t.set(np.zeros(np.array(t).shape, dtype=np.int64), place)


def test_samples(path):
    gen = CriteoDataset()
    with open(path) as f:
        for line in f:
            for rec in gen.generate_sample(line)():
                yield [values for _, values in rec]


def evaluate(exe, program, feed_vars, loss, auc_var, auc_states, files, place, batch_size=1000):
    """Mean loss and global AUC of `program` over the test files."""
    reset_auc_states(auc_states, place)
    feeder = fluid.DataFeeder(feed_list=feed_vars, place=place)
    losses, sizes, auc = [], [], None
    batch = []
    for path in files:
        for sample in test_samples(path):
            batch.append(sample)
            if len(batch) == batch_size:
                l, auc = exe.run(program, feed=feeder.feed(batch), fetch_list=[loss, auc_var])
                losses.append(float(np.array(l).ravel()[0]))
                sizes.append(len(batch))
                batch = []
    if batch:
        l, auc = exe.run(program, feed=feeder.feed(batch), fetch_list=[loss, auc_var])
        losses.append(float(np.array(l).ravel()[0]))
        sizes.append(len(batch))
    return float(np.average(losses, weights=sizes)), float(np.array(auc).ravel()[0])


def main():
    ap = argparse.ArgumentParser(description="CTR-DNN, PaddleRec 1.x style")
    ap.add_argument("--data_dir", default=os.path.join(HERE, "data"))
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batch_size", type=int, default=128)
    ap.add_argument("--thread", type=int, default=2, help="train_from_dataset threads")
    ap.add_argument("--optimizer", default="sgd", choices=["sgd", "adagrad", "adam"])
    ap.add_argument("--lr", type=float, default=0.2)
    ap.add_argument("--embedding_size", type=int, default=10)
    ap.add_argument("--layer_sizes", default="400,400,400")
    ap.add_argument("--mode", default="async", choices=["async", "sync", "half_async", "geo"])
    ap.add_argument("--local", action="store_true", help="train locally even if TRAINING_ROLE is set")
    ap.add_argument("--model_dir", default=None, help="trainer 0 saves the model to evaluate into a fresh "
                    "directory under this one (default: data_dir/model)")
    ap.add_argument("--result_file", default=None, help="also write the RESULT json here (trainer id appended)")
    args = ap.parse_args()

    args.model_dir = args.model_dir or os.path.join(args.data_dir, "model")
    if not os.path.isdir(args.model_dir):
        os.makedirs(args.model_dir)
    distributed = "TRAINING_ROLE" in os.environ and not args.local
    fluid.default_startup_program().random_seed = 1
    fluid.default_main_program().random_seed = 1
    feed_vars, loss, auc_var, auc_states = ctr_dnn(args.embedding_size,
                                                   [int(s) for s in args.layer_sizes.split(",")])
    test_program = fluid.default_main_program().clone(for_test=True)
    optimizer = {"sgd": fluid.optimizer.SGD, "adagrad": fluid.optimizer.Adagrad,
                 "adam": fluid.optimizer.Adam}[args.optimizer](learning_rate=args.lr)
    if distributed:
        fleet.init(role_maker.PaddleCloudRoleMaker())
        strategy = {"async": StrategyFactory.create_async_strategy,
                    "sync": StrategyFactory.create_sync_strategy,
                    "half_async": StrategyFactory.create_half_async_strategy,
                    "geo": lambda: StrategyFactory.create_geo_strategy(10)}[args.mode]()
        optimizer = fleet.distributed_optimizer(optimizer, strategy)
    optimizer.minimize(loss)

    if distributed and fleet.is_server():
        fleet.init_server()
        fleet.run_server()
        return

    place = fluid.CPUPlace()
    exe = fluid.Executor(place)
    train_files = sorted(glob.glob(os.path.join(args.data_dir, "train", "*")))
    test_files = sorted(glob.glob(os.path.join(args.data_dir, "test", "*")))
    if not train_files or not test_files:
        raise SystemExit("no files under %s/train or %s/test: run make_data.py first" % (args.data_dir,
                                                                                          args.data_dir))
    if distributed:
        fleet.init_worker()
        exe.run(fleet.startup_program)
        train_program, trainer_id = fleet.main_program, fleet.worker_index()
        # a round-robin share by hand: Paddle 1.8.5's fleet.split_files slices with a float under Python 3
        train_files = train_files[trainer_id::fleet.worker_num()]
    else:
        exe.run(fluid.default_startup_program())
        train_program, trainer_id = fluid.default_main_program(), 0

    dataset = fluid.DatasetFactory().create_dataset("QueueDataset")
    dataset.set_use_var(feed_vars)
    dataset.set_pipe_command("%s %s" % (sys.executable, os.path.join(HERE, "criteo_reader.py")))
    dataset.set_batch_size(args.batch_size)
    dataset.set_thread(args.thread)
    dataset.set_filelist(train_files)
    samples = sum(sum(1 for _ in open(f)) for f in train_files)

    result = {"trainer_id": trainer_id, "mode": args.mode if distributed else "local", "thread": args.thread,
              "samples_per_epoch": samples, "epochs": [], "paddle": getattr(fluid, "__name__", "")}
    for epoch in range(args.epochs):
        reset_auc_states(auc_states, place)
        start = time.time()
        exe.train_from_dataset(program=train_program, dataset=dataset, fetch_list=[loss, auc_var],
                               fetch_info=["loss", "auc"], print_period=50, debug=False)
        seconds = time.time() - start
        train_auc = auc_from_states(auc_states)
        if not distributed:
            test_loss, test_auc = evaluate(exe, test_program, feed_vars, loss, auc_var, auc_states, test_files,
                                           place)
        elif fleet.is_first_worker():
            # In Paddle 1.8's async mode the trainer holds no copy of the sparse table (its lookups are
            # prefetched from the pservers), so the parameters are saved and evaluated in a fresh scope.
            # a fresh directory per save: files of an earlier run or of a run with another layout (whole
            # table vs per-pserver shards) must not be picked up
            save_dir = tempfile.mkdtemp(prefix="epoch%d_" % epoch, dir=args.model_dir)
            fleet.save_persistables(exe, save_dir)
            with fluid.scope_guard(fluid.Scope()):
                fluid.io.load_persistables(exe, save_dir, test_program)
                test_loss, test_auc = evaluate(exe, test_program, feed_vars, loss, auc_var, auc_states,
                                               test_files, place)
        else:
            test_loss = test_auc = None
        result["epochs"].append({"train_seconds": round(seconds, 3), "samples_per_s": round(samples / seconds, 1),
                                 "train_auc": round(train_auc, 5), "test_loss": test_loss, "test_auc": test_auc})
        print("epoch %d: %.1f samples/s, train auc %.4f, test loss %s, test auc %s"
              % (epoch, samples / seconds, train_auc, test_loss, test_auc), flush=True)
    print("RESULT " + json.dumps(result), flush=True)
    if args.result_file:
        with open("%s.%d" % (args.result_file, trainer_id), "w") as f:
            json.dump(result, f)
    if distributed:
        fleet.stop_worker()


def auc_from_states(auc_states):
    """The global AUC of the pass from the auc op's positive/negative histograms (stat_pos, stat_neg),
    computed as the auc op does (trapezoids from the highest threshold down)."""
    scope = fluid.global_scope()
    pos = np.array(scope.find_var(auc_states[2].name).get_tensor()).ravel()[::-1].astype(np.float64)
    neg = np.array(scope.find_var(auc_states[3].name).get_tensor()).ravel()[::-1].astype(np.float64)
    tp, fp = np.concatenate([[0.0], np.cumsum(pos)]), np.concatenate([[0.0], np.cumsum(neg)])
    if tp[-1] == 0 or fp[-1] == 0:
        return 0.5
    return float(np.sum((fp[1:] - fp[:-1]) * (tp[1:] + tp[:-1]) / 2.0) / (tp[-1] * fp[-1]))


if __name__ == "__main__":
    main()
