"""The models of benchmarks/step_speed.py, each built through fluid and hand-written in torch with the same
weights. Every maker returns a Case: two step functions (ours, torch) over the same prebuilt batches, each
returning the step's loss as a numpy array, and for the torch side the pieces a whole-step CUDA graph needs.

ResNet-20 is the book's image_classification resnet_cifar10 (depth 20: conv-bn-relu, 3 stages of 3 basic
blocks, 1x1 conv-bn shortcuts where the width changes, avg pool, fc softmax), cross_entropy + mean, Momentum.
The torch side is what a torch user writes: nn.Conv2d/BatchNorm2d/Linear, F.cross_entropy on the logits,
torch.optim.SGD(momentum=0.9) with torch's defaults (foreach on CUDA, a loop per parameter on the CPU).
The MLPs, the LSTM text classifier and the CTR step reuse the models of executor_overhead.py,
dynamic_lstm_text.py and ctr_step.py.
"""

import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
import paddle_compat as fluid  # noqa: E402
from conv_models import resnet_cifar10  # noqa: E402,F401


class Case:
    """ours(*batch) / ref(*batch) -> loss (numpy); data: a list of batches; graph(*device tensors) -> the torch
    step as a function of device tensors only (for CUDA-graph capture), None where it has host-side parts."""

    def __init__(self, name, ours, ref, data, tol=1e-4, graph=None, nofetch=None, others=()):
        self.name, self.ours, self.ref, self.data, self.tol, self.graph = name, ours, ref, data, tol, graph
        self.nofetch = nofetch      # our step with an empty fetch_list (step_speed.py --nofetch)
        self.others = list(others)  # more (name, step) sides timed with them (torch autocast under --amp)
        self.rebuild = None         # () -> a fresh Case of the same model (its program lowered anew)


# ---------------------------------------------------------------- ResNet-20 (book: image_classification)

# resnet_cifar10: conv_models.py (torch-free: Paddle 1.8.5 runs it too, benchmarks/conv_layout.py)


class TorchResNet20(torch.nn.Module):
    def __init__(self):
        super().__init__()
        convs, bns = [], []

        def cb(cin, cout, k, s, p):
            convs.append(torch.nn.Conv2d(cin, cout, k, s, p, bias=False))
            bns.append(torch.nn.BatchNorm2d(cout, eps=1e-5, momentum=0.1))   # Paddle's momentum 0.9
            return len(convs) - 1
        self.stem = cb(3, 16, 3, 1, 1)
        self.blocks = []
        for cin, cout, stride in ((16, 16, 1), (16, 32, 2), (32, 64, 2)):
            for i in range(3):
                ci, s = (cin, stride) if i == 0 else (cout, 1)
                a, b = cb(ci, cout, 3, s, 1), cb(cout, cout, 3, 1, 1)
                sc = cb(ci, cout, 1, s, 0) if ci != cout else None
                self.blocks.append((a, b, sc))
        self.convs, self.bns = torch.nn.ModuleList(convs), torch.nn.ModuleList(bns)
        self.fc = torch.nn.Linear(64, 10)

    def _cb(self, i, x):
        return self.bns[i](self.convs[i](x))

    def forward(self, x):
        h = F.relu(self._cb(self.stem, x))
        for a, b, sc in self.blocks:
            t = self._cb(b, F.relu(self._cb(a, h)))
            h = F.relu(t + (self._cb(sc, h) if sc is not None else h))
        return self.fc(F.avg_pool2d(h, 8, 1).flatten(1))


def _fluid_param_order(main):
    """The program's trainable parameters in creation order (conv filter, bn scale, bn bias, ..., fc w, b):
    the order TorchResNet20 creates its modules in."""
    return [p.name for p in main.global_block().all_parameters() if p.trainable]


def make_resnet(batch, device, lr=0.01, mom=0.9, nbatch=4, seed=90, amp=None):
    """amp: "float16" or "bfloat16": ours through contrib.mixed_precision.decorate (dynamic loss scaling,
    Paddle 1.8's defaults) against torch eager float32, and torch autocast (with a GradScaler for float16 on
    cuda) as a third side."""
    main, start = fluid.Program(), fluid.Program()
    main.random_seed = start.random_seed = seed
    with fluid.program_guard(main, start), fluid.unique_name.guard():
        img = fluid.layers.data(name="img", shape=[3, 32, 32], dtype="float32")
        label = fluid.layers.data(name="label", shape=[1], dtype="int64")
        predict = resnet_cifar10(fluid, img, 20)
        loss = fluid.layers.mean(fluid.layers.cross_entropy(input=predict, label=label))
        opt = fluid.optimizer.Momentum(learning_rate=lr, momentum=mom)
        if amp:
            opt = fluid.contrib.mixed_precision.decorate(opt, dtype=amp)
        opt.minimize(loss)
    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CUDAPlace(0) if device == "cuda" else fluid.CPUPlace())
    exe.run(start, scope=scope)

    model = TorchResNet20()
    # the same weights: fluid's initial values copied into torch's modules, in creation order
    params = [np.array(scope.find_var(n).get_tensor()) for n in _fluid_param_order(main)]
    it = iter(params)
    with torch.no_grad():
        for conv, bn in zip(model.convs, model.bns):
            conv.weight.copy_(torch.from_numpy(next(it)))
            bn.weight.copy_(torch.from_numpy(next(it)))
            bn.bias.copy_(torch.from_numpy(next(it)))
        model.fc.weight.copy_(torch.from_numpy(next(it).T))
        model.fc.bias.copy_(torch.from_numpy(next(it)))
    assert next(it, None) is None
    model = model.to(device)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=mom)

    rng = np.random.RandomState(seed + 1)
    data = [(rng.uniform(-1, 1, (batch, 3, 32, 32)).astype(np.float32),
             rng.randint(0, 10, (batch, 1)).astype(np.int64)) for _ in range(nbatch)]

    def ours(x, y):
        return exe.run(main, feed={"img": x, "label": y}, fetch_list=[loss], scope=scope)[0]

    def nofetch(x, y):
        exe.run(main, feed={"img": x, "label": y}, fetch_list=[], scope=scope)

    def torch_step(xt, yt):
        out = F.cross_entropy(model(xt), yt.view(-1))
        opt.zero_grad(set_to_none=True)
        out.backward()
        opt.step()
        return out.detach()

    def ref(x, y):
        return torch_step(torch.from_numpy(x).to(device), torch.from_numpy(y).to(device)).cpu().numpy().reshape(1)

    if not amp:
        case = Case("resnet20 b%d" % batch, ours, ref, data, tol=1e-3, graph=torch_step, nofetch=nofetch)
        case.rebuild = lambda: make_resnet(batch, device, lr, mom, nbatch, seed)
        return case
    return Case("resnet20 b%d amp %s" % (batch, amp), ours, ref, data, tol=5e-2, nofetch=nofetch,
                others=[("torch autocast", _autocast_resnet(params, device, lr, mom, amp))])


def _autocast_resnet(params, device, lr, mom, amp):
    """torch's own mixed precision on the same initial weights: autocast, GradScaler for float16 on cuda."""
    model = TorchResNet20()
    it = iter(params)
    with torch.no_grad():
        for conv, bn in zip(model.convs, model.bns):
            conv.weight.copy_(torch.from_numpy(next(it)))
            bn.weight.copy_(torch.from_numpy(next(it)))
            bn.bias.copy_(torch.from_numpy(next(it)))
        model.fc.weight.copy_(torch.from_numpy(next(it).T))
        model.fc.bias.copy_(torch.from_numpy(next(it)))
    model = model.to(device)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=mom)
    dtype = torch.float16 if amp == "float16" else torch.bfloat16
    scaler = torch.amp.GradScaler("cuda", init_scale=2.0 ** 15) if device == "cuda" and amp == "float16" else None

    def step(x, y):
        xt, yt = torch.from_numpy(x).to(device), torch.from_numpy(y).to(device)
        with torch.autocast(device_type=device, dtype=dtype):
            out = F.cross_entropy(model(xt), yt.view(-1))
        opt.zero_grad(set_to_none=True)
        if scaler is None:
            out.backward()
            opt.step()
        else:
            scaler.scale(out).backward()
            scaler.step(opt)
            scaler.update()
        return out.detach().float().cpu().numpy().reshape(1)
    return step


# ---------------------------------------------------------------- MLPs (executor_overhead.py)

def make_mlp(sizes, batch, device, lr=0.01, nbatch=8):
    import executor_overhead as eo
    from bench_util import fluid_mlp
    rng = np.random.RandomState(0)
    init = [(eo.xavier(rng, a, b), np.zeros(b, np.float32)) for a, b in zip(sizes[:-1], sizes[1:])]
    data = [(rng.uniform(0, 1, (batch, sizes[0])).astype(np.float32),
             rng.randint(0, sizes[-1], (batch, 1)).astype(np.int64)) for _ in range(nbatch)]
    main, start, loss = fluid_mlp(fluid, init, lr)      # executor_overhead.make_ours's program
    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CUDAPlace(0) if device == "cuda" else fluid.CPUPlace())
    exe.run(start, scope=scope)

    def ours(x, y):
        return exe.run(main, feed={"img": x, "label": y}, fetch_list=[loss], scope=scope)[0]

    def nofetch(x, y):
        exe.run(main, feed={"img": x, "label": y}, fetch_list=[], scope=scope)
    return Case("mlp %s b%d" % ("-".join(map(str, sizes)), batch), ours, eo.make_torch(init, lr, device), data,
                nofetch=nofetch)


# ---------------------------------------------------------------- LSTM text classifier (dynamic_lstm_text.py)

def make_lstm(device):
    import dynamic_lstm_text as dl
    if device != "cpu":
        return None   # that benchmark's both sides are CPU-only (create_lod_tensor on CPUPlace)
    rng = np.random.RandomState(0)
    W = dl.init_weights(rng)
    data = dl.make_batches(rng, 8)
    return Case("lstm text b%d" % dl.BATCH, dl.stepper(fluid, W), dl.make_torch(W), data)


# ---------------------------------------------------------------- CTR-DNN step (ctr_step.py)

def make_ctr(device):
    import ctr_step as cs
    if device != "cpu":
        return None
    cfg = dict(slots=8, emb_dim=8, height=100000, hidden=(64, 32), batch=32)
    init = cs.initial_weights(cfg["slots"], cfg["emb_dim"], cfg["height"], cfg["hidden"])
    data = [(d,) for d in cs.batches(cfg, 16)]
    return Case("ctr-dnn 8 slots b32", cs.make_ours(cfg, init, 0.05, False), cs.make_torch(cfg, init, 0.05), data,
                tol=1e-5)
