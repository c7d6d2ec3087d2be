"""Kernels per step on the device branch, without a GPU: our step and the same model hand-written in eager torch
both run on torch's meta device (tests/meta_device.py: CUDAPlace(0) lowers to "meta", every kernel takes its
non-CPU branch, nothing is computed). Counts the aten ops that launch a kernel (views, allocation and profiler
marks left out), after torch's composite ops are decomposed as on a GPU; the torch side uses the foreach
optimizer CUDA gets by default. Also checks what a CUDA-graph capture needs: no host read (meta raises) and no
upload in the middle of a step. A proxy, not a measurement: step_speed.py --device cuda counts real kernels.

    python benchmarks/device_kernels.py [--model resnet20,mlp,amp] [--batch 32,128]
"""

import argparse
import os
import sys

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "tests")]
import paddle_compat as fluid  # noqa: E402
from bench_util import fluid_mlp  # noqa: E402
from conv_models import resnet_cifar10  # noqa: E402
from meta_device import MetaDevice, torch_ops  # noqa: E402
import step_models as sm  # noqa: E402

torch.set_num_threads(1)
L = fluid.layers


def ours_resnet(batch, amp=None):
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start), fluid.unique_name.guard():
        img = L.data(name="img", shape=[3, 32, 32], dtype="float32")
        label = L.data(name="label", shape=[1], dtype="int64")
        loss = L.mean(L.cross_entropy(input=resnet_cifar10(fluid, img, 20), label=label))
        opt = fluid.optimizer.Momentum(learning_rate=0.01, momentum=0.9)
        if amp:
            opt = fluid.contrib.mixed_precision.decorate(opt, dtype=amp)
        opt.minimize(loss)
    r = np.random.RandomState(0)
    return main, start, {"img": r.rand(batch, 3, 32, 32).astype("float32"),
                         "label": r.randint(0, 10, (batch, 1)).astype("int64")}


def torch_resnet(batch):
    model = sm.TorchResNet20().to("meta")
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, foreach=True)
    x = torch.empty(batch, 3, 32, 32, device="meta")
    y = torch.zeros(batch, dtype=torch.int64, device="meta")

    def step():
        out = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        out.backward()
        opt.step()
    return step


def ours_mlp(sizes, batch):
    init = [(np.zeros((a, b), np.float32), np.zeros(b, np.float32)) for a, b in zip(sizes[:-1], sizes[1:])]
    main, start, _ = fluid_mlp(fluid, init, 0.01)
    r = np.random.RandomState(0)
    return main, start, {"img": r.rand(batch, sizes[0]).astype("float32"),
                         "label": r.randint(0, sizes[-1], (batch, 1)).astype("int64")}


def torch_mlp(sizes, batch):
    layers = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers += [torch.nn.Linear(a, b), torch.nn.Softmax(dim=1) if i == len(sizes) - 2 else torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers).to("meta")
    opt = torch.optim.SGD(model.parameters(), lr=0.01, foreach=True)
    x = torch.empty(batch, sizes[0], device="meta")
    y = torch.zeros(batch, 1, dtype=torch.int64, device="meta")

    def step():                         # executor_overhead.make_torch's step
        loss = -torch.log(model(x).gather(1, y)).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return step


def ours_counts(main, start, feed, steps=3):
    with MetaDevice() as dev:
        scope = dev.startup(start)
        exe = fluid.Executor(fluid.CUDAPlace(0))
        recs = [dev.step(exe, main, feed, scope) for _ in range(steps)]
    if any(r.uploads for r in recs):
        raise AssertionError("a CPU tensor was uploaded mid-step: %s" % recs[-1].uploads)
    return recs[-1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="resnet20,mlp,amp")
    ap.add_argument("--batch", default="32,128")
    args = ap.parse_args()
    models = args.model.split(",")
    batches = [int(b) for b in args.batch.split(",")]
    rows = []
    if "resnet20" in models:
        for b in batches:
            ours = ours_counts(*ours_resnet(b))
            step = torch_resnet(b)
            ref = [torch_ops(step) for _ in range(3)][-1]
            rows.append(("resnet20 b%d" % b, ours.kernels, ref.kernels))
    if "mlp" in models:
        for sizes, b in (([784, 1024, 1024, 10], 256), ([784, 200, 200, 10], 32)):
            ours = ours_counts(*ours_mlp(sizes, b))
            step = torch_mlp(sizes, b)
            ref = [torch_ops(step) for _ in range(3)][-1]
            rows.append(("mlp %s b%d" % ("-".join(map(str, sizes)), b), ours.kernels, ref.kernels))
    if "amp" in models:
        for dtype in ("float16", "bfloat16"):
            ours = ours_counts(*ours_resnet(batches[-1], amp=dtype))
            step = torch_resnet(batches[-1])
            ref = [torch_ops(step) for _ in range(3)][-1]
            rows.append(("resnet20 b%d amp %s (vs torch fp32)" % (batches[-1], dtype), ours.kernels, ref.kernels))
    print("%-44s %8s %8s %6s" % ("device-branch kernels per step", "ours", "torch", "ratio"))
    for name, a, b in rows:
        print("%-44s %8d %8d %6.2f" % (name, a, b, a / float(b)))


if __name__ == "__main__":
    main()
