"""A Fleet 1.x parameter-server job: the same script runs as pserver or worker, whoever launches it.

    python -m paddle_compat.distributed.launch_ps --server_num 2 --worker_num 2 examples/fleet_ps_train.py
    mpiexec -n 4 python examples/fleet_ps_train.py          # MPISymetricRoleMaker: even ranks serve

The role maker comes from the environment: under mpiexec fleet.init() defaults to MPISymetricRoleMaker,
otherwise PaddleCloudRoleMaker reads what launch_ps (or PaddleCloud) set.
"""

import argparse
import os

import numpy as np

import paddle_compat as fluid
from paddle_compat.fluid.incubate.fleet.base import role_maker
from paddle_compat.fluid.incubate.fleet.parameter_server.distribute_transpiler import StrategyFactory, fleet


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--async_mode", action="store_true")
    ap.add_argument("--save_dir", default=None, help="the first worker saves the model here at the end")
    args = ap.parse_args()

    under_mpi = any(k in os.environ for k in ("PMI_RANK", "OMPI_COMM_WORLD_RANK"))
    fleet.init(None if under_mpi else role_maker.PaddleCloudRoleMaker())

    x = fluid.layers.data(name="x", shape=[13], dtype="float32")
    y = fluid.layers.data(name="y", shape=[1], dtype="float32")
    hidden = fluid.layers.fc(input=x, size=32, act="relu")
    pred = fluid.layers.fc(input=hidden, size=1)
    loss = fluid.layers.mean(fluid.layers.square_error_cost(input=pred, label=y))
    strategy = StrategyFactory.create_async_strategy() if args.async_mode else StrategyFactory.create_sync_strategy()
    fleet.distributed_optimizer(fluid.optimizer.SGD(learning_rate=0.01), strategy).minimize(loss)

    if fleet.is_server():
        fleet.init_server()
        fleet.run_server()          # returns when every worker has called fleet.stop_worker()
        return

    fleet.init_worker()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(fleet.startup_program)
    rng = np.random.RandomState(fleet.worker_index())
    w_true = np.random.RandomState(42).randn(13, 1).astype("float32")
    for step in range(args.steps):
        xs = rng.uniform(-1, 1, (32, 13)).astype("float32")
        l, = exe.run(fleet.main_program, feed={"x": xs, "y": xs @ w_true + 0.5}, fetch_list=[loss])
        print("worker %d step %2d loss %.5f" % (fleet.worker_index(), step, l[0]), flush=True)
    if args.save_dir and fleet.is_first_worker():
        fleet.save_persistables(exe, args.save_dir)
    fleet.stop_worker()


if __name__ == "__main__":
    main()
