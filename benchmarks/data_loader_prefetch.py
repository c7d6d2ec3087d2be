"""DataLoader.from_generator with and without its prefetch thread, vs the same loop hand-written in torch.

    python benchmarks/data_loader_prefetch.py [--rounds 5] [--batches 60]

The generator does what a real one does per batch: reads samples from a file (np.load of a memory map), decodes
and normalises them with numpy (GIL released in the copies), then the step trains an MLP 784-512-512-10 with
SGD. Columns, alternating in one run, medians of per-round seconds:
  sync      DataLoader capacity=None (batches made in the training thread, as before prefetch existed)
  prefetch  DataLoader capacity=8 (the generator runs in a background thread)
  torch     a plain torch.nn module fed by the same generator inline (no overlap)
Speed-up of prefetch over sync is what the thread buys when making a batch costs about as much as a step.
"""

import argparse
import os
import sys
import tempfile
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import paddle_compat as fluid  # noqa: E402
from bench_util import median  # noqa: E402

BATCH, DIM, HID, CLASSES = 64, 784, 512, 10
WORK = 20          # numpy passes per batch: making a batch costs about what a training step does


def make_file(n):
    path = os.path.join(tempfile.mkdtemp(prefix="dl_bench_"), "samples.npy")
    rs = np.random.RandomState(0)
    np.save(path, rs.randint(0, 256, size=(n, DIM + 1)).astype("uint8"))
    return path


def generator(path, batches):
    def gen():
        data = np.load(path, mmap_mode="r")
        for b in range(batches):
            raw = np.array(data[(b * BATCH) % (len(data) - BATCH):][:BATCH])
            img = raw[:, :DIM].astype("float32")
            img = (img - img.mean(axis=1, keepdims=True)) / (img.std(axis=1, keepdims=True) + 1e-5)
            for _ in range(WORK):                         # stands for decoding/augmenting work
                img = np.tanh(img * 1.01) * 0.99
            label = (raw[:, DIM:] % CLASSES).astype("int64")
            yield [img, label]
    return gen


def fluid_job(path, batches, capacity):
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start), fluid.unique_name.guard():
        img = fluid.layers.data(name="img", shape=[DIM], dtype="float32")
        label = fluid.layers.data(name="label", shape=[1], dtype="int64")
        h = fluid.layers.fc(fluid.layers.fc(img, HID, act="relu"), HID, act="relu")
        loss = fluid.layers.mean(fluid.layers.cross_entropy(fluid.layers.fc(h, CLASSES, act="softmax"), label))
        fluid.optimizer.SGD(0.01).minimize(loss)
        loader = fluid.io.DataLoader.from_generator(feed_list=[img, label], capacity=capacity, iterable=True)
    loader.set_batch_generator(generator(path, batches), places=fluid.CPUPlace())
    exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
    with fluid.scope_guard(scope):
        exe.run(start)

    def run():
        with fluid.scope_guard(scope):
            t0 = time.perf_counter()
            for data in loader():
                exe.run(main, feed=data, fetch_list=[loss])
            return time.perf_counter() - t0
    return run


def torch_job(path, batches):
    import torch
    torch.set_num_threads(1)
    model = torch.nn.Sequential(torch.nn.Linear(DIM, HID), torch.nn.ReLU(), torch.nn.Linear(HID, HID),
                                torch.nn.ReLU(), torch.nn.Linear(HID, CLASSES))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    gen = generator(path, batches)

    def run():
        t0 = time.perf_counter()
        for img, label in gen():
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(torch.from_numpy(img)),
                                                     torch.from_numpy(label).view(-1))
            loss.backward()
            opt.step()
            loss.item()
        return time.perf_counter() - t0
    return run


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--batches", type=int, default=60)
    args = ap.parse_args()
    path = make_file(4096)
    jobs = {"sync": fluid_job(path, args.batches, None), "prefetch": fluid_job(path, args.batches, 8),
            "torch": torch_job(path, args.batches)}
    for run in jobs.values():   # warm up
        run()
    times = {k: [] for k in jobs}
    for _ in range(args.rounds):
        for k, run in jobs.items():
            times[k].append(run())
    med = {k: median(v) for k, v in times.items()}
    for k, v in med.items():
        print("%-9s %7.1f ms/batch  %8.0f samples/s" % (k, 1000 * v / args.batches, args.batches * BATCH / v))
    print("prefetch / sync time: %.2f   prefetch / torch time: %.2f" % (med["prefetch"] / med["sync"],
                                                                       med["prefetch"] / med["torch"]))


if __name__ == "__main__":
    main()
