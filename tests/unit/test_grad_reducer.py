"""GradAllReducer in one process, against a fake two-trainer group: buckets start inside the backward pass,
in gradient order, and the result is the averaged gradient."""

import numpy as np
import torch

import paddle_compat as fluid
from paddle_compat.backends.grad_reducer import GradAllReducer
from paddle_compat.backends.lowering.autograd_region import autograd, find_regions


class _Done:
    def wait(self):
        pass


class FakeComm:
    """Acts as two identical trainers: allreduce doubles; records when and what each launch reduced."""

    def __init__(self):
        self.launches = []

    def allreduce_async(self, flat, op=None):
        self.launches.append((flat.numel(), torch._C._current_graph_task_id() >= 0))
        flat.mul_(2)
        return _Done()

    def wait(self, work, what=""):
        work.wait()


def _region_and_values():
    x = fluid.layers.data(name="x", shape=[8], dtype="float32")
    h = fluid.layers.fc(x, 16, act="relu")
    h = fluid.layers.fc(h, 4)
    loss = fluid.layers.mean(h)
    params_grads = fluid.backward.append_backward(loss)
    block = fluid.default_main_program().global_block()
    region = find_regions(block, [g.name for _, g in params_grads])[0]   # as if the grads were read
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(fluid.default_startup_program())
    scope = fluid.global_scope()
    params = {p.name: scope.find_var(p.name).value.detach().clone().requires_grad_(True)
              for p in block.all_parameters()}
    xs = torch.from_numpy(np.random.RandomState(0).randn(5, 8).astype(np.float32))

    def forward():   # the same net in torch: a fresh graph per backward
        out = torch.relu(xs @ params["fc_0.w_0"] + params["fc_0.b_0"]) @ params["fc_1.w_0"] + params["fc_1.b_0"]
        return out.mean().reshape(1)
    inputs = [params[n] for n in region.wanted_forward()]
    return block, region, forward, inputs


def test_buckets_start_during_backward_in_gradient_order_and_average():
    block, region, forward, inputs = _region_and_values()
    names = region.wanted_forward()
    comm = FakeComm()
    # tiny buckets: one parameter each, so every launch is visible
    red = GradAllReducer(comm, block, region, divisor=2, first_bucket_bytes=1, bucket_bytes=1)
    got = red([forward()], inputs, [torch.ones(1)])
    want = autograd([forward()], inputs, [torch.ones(1)])
    for n, g, w in zip(names, got, want):
        torch.testing.assert_close(g, w, rtol=0, atol=0, msg=n)
    assert all(inside for _, inside in comm.launches)       # overlapped: launched from autograd's hooks
    sizes = {n: x.numel() for n, x in zip(names, inputs)}
    # gradient order: the last layer's bias and weight first
    assert [s for s, _ in comm.launches] == [sizes["fc_1.b_0"], sizes["fc_1.w_0"], sizes["fc_0.b_0"],
                                             sizes["fc_0.w_0"]]


def test_default_buckets_coalesce_and_reuse_buffers():
    block, region, forward, inputs = _region_and_values()
    comm = FakeComm()
    red = GradAllReducer(comm, block, region, divisor=2)
    g1 = [g.clone() for g in red([forward()], inputs, [torch.ones(1)])]
    g2 = red([forward()], inputs, [torch.ones(1)])
    assert [s for s, _ in comm.launches] == [sum(x.numel() for x in inputs)] * 2   # one 1 MiB bucket per step
    assert len(red.flat_buffers) == 1
    for a, b in zip(g1, g2):
        torch.testing.assert_close(a, b)
