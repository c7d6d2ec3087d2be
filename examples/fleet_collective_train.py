"""A Fleet 1.x collective job (gradients allreduced by torch.distributed: gloo on CPU, NCCL on GPU).

    python -m paddle_compat.distributed.launch --nproc_per_node 2 examples/fleet_collective_train.py
    torchrun --nproc_per_node 2 examples/fleet_collective_train.py

PaddleCloudRoleMaker(is_collective=True) reads PADDLE_TRAINER_ID / PADDLE_TRAINER_ENDPOINTS (set by
launch), or torchrun's RANK / WORLD_SIZE / MASTER_ADDR / MASTER_PORT.
"""

import argparse

import numpy as np

import paddle_compat as fluid
from paddle_compat.fluid.incubate.fleet.base import role_maker
from paddle_compat.fluid.incubate.fleet.collective import DistributedStrategy, fleet


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--save_dir", default=None)
    args = ap.parse_args()

    fleet.init(role_maker.PaddleCloudRoleMaker(is_collective=True))
    img = fluid.layers.data(name="img", shape=[784], dtype="float32")
    label = fluid.layers.data(name="label", shape=[1], dtype="int64")
    h = fluid.layers.fc(input=img, size=200, act="relu")
    prediction = fluid.layers.fc(input=h, size=10, act="softmax")
    loss = fluid.layers.mean(fluid.layers.cross_entropy(input=prediction, label=label))
    fleet.distributed_optimizer(fluid.optimizer.Adam(learning_rate=0.001), DistributedStrategy()).minimize(loss)

    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(fleet.startup_program)
    rng = np.random.RandomState(fleet.worker_index())
    teacher = np.random.RandomState(0).randn(784, 10).astype("float32")
    for step in range(args.steps):
        xs = rng.uniform(0, 1, (64, 784)).astype("float32")
        ys = np.argmax((xs - 0.5) @ teacher, axis=1).astype("int64").reshape(-1, 1)
        l, = exe.run(fleet.main_program, feed={"img": xs, "label": ys}, fetch_list=[loss])
        print("worker %d step %2d loss %.5f" % (fleet.worker_index(), step, l[0]), flush=True)
    if args.save_dir:
        fleet.save_persistables(exe, args.save_dir)   # worker 0 writes


if __name__ == "__main__":
    main()
