"""Runs Fluid steps on torch's meta device as a stand-in for a GPU, without one: CUDAPlace(0) lowers to
"meta", so every kernel takes its device branch (what a CUDA tensor takes: not the CPU's), tensors carry
shapes and dtypes but no data, and torch raises where a CUDA step would go wrong or stall:

  device mixing    a CPU tensor (more than a 0-dim scalar) meeting a device one: "is not on the expected
                   device", as a GPU's "Expected all tensors to be on the same device"
  host reads       .item(), .tolist(), bool(t), .cpu(), nonzero: meta tensors have no data to read; on a GPU
                   each is a sync, and inside a CUDA-graph capture an error
  uploads          (watched here) a CPU tensor copied to the device in the middle of a step, or a
                   torch.tensor / torch.as_tensor of host data made there: a host-to-device copy from pageable
                   memory, which a CUDA-graph capture cannot hold

A step's aten ops (after torch's composite ops are decomposed, as on a GPU) count the device kernels it
launches, roughly: the same count for hand-written torch on meta is the comparison (benchmarks/step_speed.py
measures real kernels on a GPU).

    with MetaDevice() as dev:                   # CUDAPlace(0) is the meta device inside
        scope = dev.startup(startup)            # initial values made on the CPU, moved to meta
        dev.step(exe, main, feed, scope)        # one step, fetch-free; dev.steps[-1]: what it did
"""

import collections

import torch
from torch.utils._python_dispatch import TorchDispatchMode

import paddle_compat as fluid
from paddle_compat.backends.lowering import emit
from paddle_compat.ir import lazy, places

_COPIES = {torch.ops.aten._to_copy.default, torch.ops.aten.copy_.default}
# aten ops that launch no kernel on a GPU (views, metadata, allocation, profiler marks)
NO_KERNEL = frozenset("detach view _unsafe_view t transpose permute expand reshape as_strided squeeze unsqueeze "
                      "alias empty empty_strided empty_like slice select split unbind lift_fresh "
                      "_record_function_enter_new _record_function_exit".split())


class StepRecord:
    def __init__(self):
        self.ops = collections.Counter()
        self.uploads = []           # (aten op, shape) of CPU tensors copied to the device mid-step
        self.done = False           # the step ran to its end

    @property
    def n_ops(self):
        return sum(self.ops.values())

    @property
    def kernels(self):
        """The ops that launch a kernel (all but NO_KERNEL): roughly a GPU's kernels per step."""
        return sum(v for k, v in self.ops.items() if k not in NO_KERNEL)


class _Watch(TorchDispatchMode):
    def __init__(self, record):
        super().__init__()
        self.record = record

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        self.record.ops[str(func.overloadpacket.__name__)] += 1
        out = func(*args, **kwargs)
        if func in _COPIES:
            src = args[1] if func is torch.ops.aten.copy_.default else args[0]
            dst = args[0] if func is torch.ops.aten.copy_.default else out
            if isinstance(src, torch.Tensor) and src.device.type == "cpu" and dst.device.type == "meta":
                self.record.uploads.append((str(func.overloadpacket.__name__), tuple(src.shape)))
        return out


class MetaDevice:
    """A context in which CUDAPlace lowers to the meta device and every lowered step is watched."""

    def __init__(self, capturing=True):
        """capturing: run as a CUDA-graph capture would (places.capturing holds: kernels skip what they only
        do outside a capture, e.g. the lookup's synced id check)."""
        self.capturing = capturing
        self.steps = []
        self.depth = 0
        self._saved = None

    def __enter__(self):
        run = emit.LoweredBlock.__call__
        watch = self

        def watched(block, feeds):
            if watch.depth:         # a control-flow body: part of the step being watched
                return run(block, feeds)
            rec = StepRecord()
            watch.steps.append(rec)
            watch.depth += 1
            try:
                with _Watch(rec):
                    out = run(block, feeds)
                rec.done = True
                return out
            finally:
                watch.depth -= 1
        self._saved = (places.CUDAPlace._torch_device, run, places.capturing, torch.tensor, torch.as_tensor)
        places.CUDAPlace._torch_device = lambda place: "meta"
        emit.LoweredBlock.__call__ = watched
        # torch.tensor(data, device=...) copies host data to the device without the dispatcher seeing a copy
        # (patched on torch and on the package's lazy handle, which keeps what it looked up)
        self._lazy = dict((n, lazy.torch.__dict__.get(n)) for n in ("tensor", "as_tensor"))
        for name in ("tensor", "as_tensor"):
            setattr(torch, name, self._factory(getattr(torch, name), name))
            lazy.torch.__dict__[name] = getattr(torch, name)
        if self.capturing:
            places.capturing = lambda device: device.type == "meta"
        return self

    def __exit__(self, *exc):
        (places.CUDAPlace._torch_device, emit.LoweredBlock.__call__, places.capturing, torch.tensor,
         torch.as_tensor) = self._saved
        for name, value in self._lazy.items():
            if value is None:
                lazy.torch.__dict__.pop(name, None)
            else:
                lazy.torch.__dict__[name] = value
        return False

    def _factory(self, make, name):
        def factory(data, *args, **kwargs):
            out = make(data, *args, **kwargs)
            if self.depth and out.device.type == "meta" and not (
                    isinstance(data, torch.Tensor) and data.device.type == "meta"):
                self.steps[-1].uploads.append((name, tuple(out.shape)))
            return out
        return factory

    def startup(self, startup, scope=None):
        """Run a startup program on the CPU (random initializers need a real generator) and move what it made
        to the meta device."""
        scope = scope or fluid.Scope()
        fluid.Executor(fluid.CPUPlace()).run(startup, scope=scope)
        for n in scope.local_var_names():
            var = scope.find_var(n)
            if isinstance(var.value, torch.Tensor):
                var.value = var.value.to("meta")
        self.steps.clear()
        return scope

    def step(self, exe, main, feed, scope):
        """One step with no fetch (a fetch reads values back); returns its StepRecord."""
        n = len(self.steps)
        exe.run(main, feed=feed, fetch_list=[], scope=scope)
        assert len(self.steps) == n + 1, "the step ran %d lowered blocks" % (len(self.steps) - n)
        return self.steps[-1]


def torch_ops(fn, *args):
    """The aten ops of fn(*args) under the same watch (for a hand-written torch step on meta)."""
    rec = StepRecord()
    with _Watch(rec):
        fn(*args)
    return rec
