"""One process of a Fleet pserver job (UserDefinedRoleMaker from the environment, as fleet_ps_node.py) whose
workers each load their own MultiSlot files into an InMemoryDataset, global_shuffle(fleet) them, then train a
pass with train_from_dataset. Each worker writes RESULT_DIR/worker<i>.json: the tags (worker * 1000 + line) it
holds after the shuffle, the fleet-wide sizes, and its losses."""

import json
import os
import sys

import numpy as np

import paddle_compat as fluid
from paddle_compat.fluid.incubate.fleet.base import role_maker
from paddle_compat.fluid.incubate.fleet.parameter_server.distribute_transpiler import StrategyFactory, fleet

LINES = 60


def main():
    env = os.environ
    servers = env["PADDLE_PSERVERS_IP_PORT_LIST"].split(",")
    n = int(env["PADDLE_TRAINERS_NUM"])
    if env["TRAINING_ROLE"] == "PSERVER":
        rm = role_maker.UserDefinedRoleMaker(current_id=servers.index(env["PADDLE_CURRENT_ENDPOINT"]),
                                             role=role_maker.Role.SERVER, worker_num=n, server_endpoints=servers)
    else:
        rm = role_maker.UserDefinedRoleMaker(current_id=int(env["PADDLE_TRAINER_ID"]), role=role_maker.Role.WORKER,
                                             worker_num=n, server_endpoints=servers)
    fleet.init(rm)
    ids = fluid.layers.data("ids", [1], dtype="int64", lod_level=1)
    dense = fluid.layers.data("dense", [2], dtype="float32")
    tag = fluid.layers.data("tag", [1], dtype="int64")
    label = fluid.layers.data("label", [1], dtype="int64")
    emb = fluid.layers.embedding(ids, [100, 4], is_sparse=True)
    h = fluid.layers.concat([fluid.layers.sequence_pool(emb, "sum"), dense], axis=1)
    pred = fluid.layers.fc(h, 2, act="softmax")
    loss = fluid.layers.mean(fluid.layers.cross_entropy(pred, label))
    fleet.distributed_optimizer(fluid.optimizer.SGD(0.1), StrategyFactory.create_async_strategy()).minimize(loss)
    if fleet.is_server():
        fleet.init_server()
        fleet.run_server()
        return
    me = fleet.worker_index()
    rs = np.random.RandomState(me)
    path = os.path.join(env["RESULT_DIR"], "part-%d" % me)
    with open(path, "w") as f:
        for i in range(LINES):
            x = rs.randint(0, 100, size=rs.randint(1, 4))
            f.write("%d %s 2 %.3f %.3f 1 %d 1 %d\n" % (len(x), " ".join(map(str, x)), rs.rand(), rs.rand(),
                                                     me * 1000 + i, int(x[0] < 50)))
    fleet.init_worker()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(fleet.startup_program)
    if env.get("SHUFFLE_MERGE"):
        return merge_run(me, env)
    ds = fluid.DatasetFactory().create_dataset("InMemoryDataset")
    ds.set_use_var([ids, dense, tag, label])
    ds.set_batch_size(10)
    ds.set_thread(2)
    ds.set_filelist([path])
    ds.load_into_memory()
    np.random.seed(100 + me)
    ds.global_shuffle(fleet)
    mem, shuf = ds.get_memory_data_size(fleet), ds.get_shuffle_data_size(fleet)
    from paddle_compat.fluid.dataset.feed import make_batch
    tags = [int(t) for t in np.array(make_batch(ds._records, ds._slots())["tag"]).ravel()]
    out = exe.train_from_dataset(fleet.main_program, ds, thread=2, fetch_list=[loss], fetch_info=["loss"],
                                 print_period=1000)
    fleet.stop_worker()
    with open(os.path.join(env["RESULT_DIR"], "worker%d.json" % me), "w") as f:
        json.dump({"tags": tags, "memory_size": mem, "shuffle_size": shuf}, f)
    print("DONE", me, flush=True)


def merge_run(me, env):
    """merge_by_lineid across trainers: line i of each worker has ins id g<i>; worker 0 carries slot a (i + 1),
    worker 1 slot b (1000 + i), each leaving the other's slot 0 (not carried), so every id merges into one
    record (a, b) on the trainer of its id."""
    a = fluid.layers.data("ma", [1], dtype="int64", lod_level=1)
    b = fluid.layers.data("mb", [1], dtype="int64", lod_level=1)
    path = os.path.join(env["RESULT_DIR"], "merge-%d" % me)
    with open(path, "w") as f:
        for i in range(LINES):
            f.write("1 g%d 1 %d 1 %d\n" % (i, i + 1 if me == 0 else 0, 1000 + i if me == 1 else 0))
    ds = fluid.DatasetFactory().create_dataset("InMemoryDataset")
    ds.set_use_var([a, b])
    ds.set_filelist([path])
    ds.set_merge_by_lineid(2)
    ds.load_into_memory()
    np.random.seed(7 + me)
    ds.global_shuffle(fleet)
    size = ds.get_memory_data_size(fleet)
    from paddle_compat.fluid.dataset.feed import make_batch
    feed = make_batch(ds._records, ds._slots()) if len(ds._records) else None
    pairs = [] if feed is None else [[int(x), int(y)] for x, y in zip(np.array(feed["ma"]).ravel(),
                                                                       np.array(feed["mb"]).ravel())]
    fleet.stop_worker()
    with open(os.path.join(env["RESULT_DIR"], "worker%d.json" % me), "w") as f:
        json.dump({"pairs": pairs, "memory_size": size}, f)
    print("DONE", me, flush=True)


if __name__ == "__main__":
    sys.exit(main())
