"""Skip-gram word2vec with negative sampling in the PaddleRec 1.x style: is_sparse embeddings, a
MultiSlotDataGenerator pipe script drawing the negatives, train_from_dataset, Fleet parameter servers.
The same file runs locally, as any role of a pserver job, and unchanged under real PaddlePaddle 1.8.5:

    cd examples/word2vec
    python make_data.py        # synthetic topic corpus + dict in data/ beside the scripts
    python train.py            # local
    python -m paddle_compat.distributed.launch_ps --server_num 2 --worker_num 2 train.py
    python -m paddle.distributed.launch_ps --server_num 2 --worker_num 2 train.py      # real Paddle 1.8.5

Without TRAINING_ROLE in the environment (or with --local) it trains locally. After training, the input
embedding `emb` is scored by topic accuracy: the share of the 200 most frequent words whose nearest
neighbour (cosine) is a word of their own topic (chance: 1/topics). In a job trainer 0 saves the model
(fleet.save_persistables) and scores the saved embedding. Every trainer prints one `RESULT {json}` line.
"""

import argparse
import glob
import json
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


def skip_gram(dict_size, emb_dim, neg_num):
    input_word = fluid.layers.data(name="input_word", shape=[1], dtype="int64")
    true_word = fluid.layers.data(name="true_label", shape=[1], dtype="int64")
    neg_word = fluid.layers.data(name="neg_label", shape=[neg_num], dtype="int64")
    init_width = 0.5 / emb_dim
    input_emb = fluid.layers.embedding(input=input_word, is_sparse=True, size=[dict_size, emb_dim],
                                       param_attr=fluid.ParamAttr(name="emb", initializer=fluid.initializer.Uniform(
                                           -init_width, init_width)))
    true_emb_w = fluid.layers.embedding(input=true_word, is_sparse=True, size=[dict_size, emb_dim],
                                        param_attr=fluid.ParamAttr(name="emb_w",
                                                                   initializer=fluid.initializer.Constant(0.0)))
    true_emb_b = fluid.layers.embedding(input=true_word, is_sparse=True, size=[dict_size, 1],
                                        param_attr=fluid.ParamAttr(name="emb_b",
                                                                   initializer=fluid.initializer.Constant(0.0)))
    neg_word_reshape = fluid.layers.reshape(neg_word, shape=[-1, 1])
    neg_word_reshape.stop_gradient = True
    neg_emb_w = fluid.layers.embedding(input=neg_word_reshape, is_sparse=True, size=[dict_size, emb_dim],
                                       param_attr=fluid.ParamAttr(name="emb_w"))
    neg_emb_w_re = fluid.layers.reshape(neg_emb_w, shape=[-1, neg_num, emb_dim])
    neg_emb_b = fluid.layers.embedding(input=neg_word_reshape, is_sparse=True, size=[dict_size, 1],
                                       param_attr=fluid.ParamAttr(name="emb_b"))
    neg_emb_b_vec = fluid.layers.reshape(neg_emb_b, shape=[-1, neg_num])

    true_logits = fluid.layers.elementwise_add(
        fluid.layers.reduce_sum(fluid.layers.elementwise_mul(input_emb, true_emb_w), dim=1, keep_dim=True),
        true_emb_b)
    input_emb_re = fluid.layers.reshape(input_emb, shape=[-1, 1, emb_dim])
    neg_matmul = fluid.layers.matmul(input_emb_re, neg_emb_w_re, transpose_y=True)
    neg_logits = fluid.layers.elementwise_add(fluid.layers.reshape(neg_matmul, shape=[-1, neg_num]),
                                              neg_emb_b_vec)
    label_ones = fluid.layers.fill_constant_batch_size_like(true_logits, shape=[-1, 1], value=1.0,
                                                            dtype="float32")
    label_zeros = fluid.layers.fill_constant_batch_size_like(true_logits, shape=[-1, neg_num], value=0.0,
                                                             dtype="float32")
    true_xent = fluid.layers.sigmoid_cross_entropy_with_logits(true_logits, label_ones)
    neg_xent = fluid.layers.sigmoid_cross_entropy_with_logits(neg_logits, label_zeros)
    cost = fluid.layers.elementwise_add(fluid.layers.reduce_sum(true_xent, dim=1),
                                        fluid.layers.reduce_sum(neg_xent, dim=1))
    return [input_word, true_word, neg_word], fluid.layers.reduce_mean(cost)


def topic_accuracy(emb, topic, counts, top=200):
    """Share of the `top` most frequent words whose nearest other word (cosine) shares their topic."""
    words = np.argsort(-counts, kind="mergesort")[:top]
    e = emb / np.maximum(np.linalg.norm(emb, axis=1, keepdims=True), 1e-12)
    sim = e[words] @ e.T
    sim[np.arange(len(words)), words] = -np.inf
    return float(np.mean(topic[np.argmax(sim, axis=1)] == topic[words]))


def main():
    ap = argparse.ArgumentParser(description="skip-gram word2vec, PaddleRec 1.x style")
    ap.add_argument("--data_dir", default=os.path.join(HERE, "data"))
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batch_size", type=int, default=100)
    ap.add_argument("--thread", type=int, default=2)
    ap.add_argument("--lr", type=float, default=1.0)
    ap.add_argument("--emb_dim", type=int, default=32)
    ap.add_argument("--window", type=int, default=3)
    ap.add_argument("--neg_num", type=int, default=5)
    ap.add_argument("--local", action="store_true")
    ap.add_argument("--model_dir", default=None, help="trainer 0 saves the model into a fresh directory "
                    "under this one (default data_dir/model)")
    args = ap.parse_args()
    args.model_dir = args.model_dir or os.path.join(args.data_dir, "model")
    if not os.path.isdir(args.model_dir):
        os.makedirs(args.model_dir)
    info = json.load(open(os.path.join(args.data_dir, "data_info.json")))
    dict_path = os.path.join(args.data_dir, "dict.txt")
    counts = np.array([float(l.split()[2]) for l in open(dict_path)])

    distributed = "TRAINING_ROLE" in os.environ and not args.local
    fluid.default_startup_program().random_seed = 1
    feed_vars, loss = skip_gram(info["vocab"], args.emb_dim, args.neg_num)
    test_program = fluid.default_main_program().clone(for_test=True)
    optimizer = fluid.optimizer.SGD(learning_rate=args.lr)
    if distributed:
        fleet.init(role_maker.PaddleCloudRoleMaker())
        optimizer = fleet.distributed_optimizer(optimizer, StrategyFactory.create_async_strategy())
    optimizer.minimize(loss)
    if distributed and fleet.is_server():
        fleet.init_server()
        fleet.run_server()
        return

    place = fluid.CPUPlace()
    exe = fluid.Executor(place)
    files = sorted(glob.glob(os.path.join(args.data_dir, "train", "*")))
    if distributed:
        fleet.init_worker()
        exe.run(fleet.startup_program)
        train_program, trainer_id = fleet.main_program, fleet.worker_index()
        files = files[trainer_id::fleet.worker_num()]   # Paddle 1.8.5's fleet.split_files fails on Python 3
    else:
        exe.run(fluid.default_startup_program())
        train_program, trainer_id = fluid.default_main_program(), 0

    dataset = fluid.DatasetFactory().create_dataset("QueueDataset")
    dataset.set_use_var(feed_vars)
    dataset.set_pipe_command("%s %s %s %d %d" % (sys.executable, os.path.join(HERE, "word2vec_reader.py"),
                                                 dict_path, args.window, args.neg_num))
    dataset.set_batch_size(args.batch_size)
    dataset.set_thread(args.thread)
    dataset.set_filelist(files)
    start = time.time()
    for epoch in range(args.epochs):
        exe.train_from_dataset(program=train_program, dataset=dataset, fetch_list=[loss], fetch_info=["loss"],
                               print_period=200)
    seconds = time.time() - start
    acc = None
    if not distributed:
        acc = topic_accuracy(np.array(fluid.global_scope().find_var("emb").get_tensor()),
                             np.array(info["topic"]), counts)
    elif fleet.is_first_worker():
        # the sparse tables live on the pservers in Paddle 1.8's async mode: score the saved model
        save_dir = tempfile.mkdtemp(prefix="model_", dir=args.model_dir)   # fresh: no stale files
        fleet.save_persistables(exe, save_dir)
        with fluid.scope_guard(fluid.Scope()):
            fluid.io.load_persistables(exe, save_dir, test_program)
            acc = topic_accuracy(np.array(fluid.global_scope().find_var("emb").get_tensor()),
                                 np.array(info["topic"]), counts)
    result = {"trainer_id": trainer_id, "mode": "async" if distributed else "local", "thread": args.thread,
              "epochs": args.epochs, "train_seconds": round(seconds, 3), "topic_accuracy": acc,
              "chance_accuracy": info["chance_accuracy"]}
    print("RESULT " + json.dumps(result), flush=True)
    if distributed:
        fleet.stop_worker()


if __name__ == "__main__":
    main()
