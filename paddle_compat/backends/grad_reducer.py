"""Bucketed allreduce of parameter gradients, overlapped with backward: torch DDP's reducer, done with hooks.

A lowered block computes its gradients with one torch.autograd.grad call. The data-parallel runner swaps in
`GradAllReducer` for that call (codegen's `autograd_for` hook). It hooks each parameter leaf; when every
gradient of a bucket has arrived, the bucket is flattened and its allreduce starts on the group's own thread
(gloo) or stream (NCCL) while autograd computes the remaining gradients. Buckets launch strictly in order so
every trainer issues the same collectives in the same order. Bucket sizes follow DDP (first 1 MiB, then
25 MiB), in the order gradients are produced (the program's grad-op order, i.e. reverse forward order).
"""

import torch

from ..ir import GRAD_SUFFIX, Parameter, role_var_params

__all__ = ["GradAllReducer", "FIRST_BUCKET_BYTES", "BUCKET_BYTES"]

FIRST_BUCKET_BYTES = 1 << 20
BUCKET_BYTES = 25 << 20


class _Bucket:
    __slots__ = ("positions", "shapes", "numels")

    def __init__(self):
        self.positions, self.shapes, self.numels = [], [], []


class GradAllReducer:
    """Callable like autograd_region.autograd; returns the gradients with parameter ones averaged."""

    def __init__(self, comm, block, region, divisor, first_bucket_bytes=FIRST_BUCKET_BYTES,
                 bucket_bytes=BUCKET_BYTES, reuse_buffers=True):
        """reuse_buffers: flatten into the same buffers every step (the returned gradients are views of them,
        so only when nothing keeps a gradient past the step, e.g. a fetched one)."""
        self.comm = comm
        self.reuse_buffers = reuse_buffers
        self.flat_buffers = {}
        self.divisor = float(divisor)
        self.first_bucket_bytes, self.bucket_bytes = first_bucket_bytes, bucket_bytes
        names = region.wanted_forward()
        ready_at = {}
        for i in region.op_idx:   # a gradient is final after its last contribution
            for n in block.ops[i].output_arg_names:
                base = n.split("@RENAME@")[0]
                if base.endswith(GRAD_SUFFIX):
                    ready_at[base[: -len(GRAD_SUFFIX)]] = i
        named = role_var_params(block)   # a parsed program has no Parameter objects
        params = [(ready_at.get(n, 0), pos) for pos, n in enumerate(names)
                  if n in named or isinstance(block._find_var_recursive(n), Parameter)]
        self.order = [pos for _, pos in sorted(params)]
        self.buckets = None

    def _build(self, inputs):
        buckets, cur, cur_bytes, key = [], None, 0, None
        for pos in self.order:
            x = inputs[pos]
            nbytes = x.numel() * x.element_size()
            cap = self.first_bucket_bytes if len(buckets) <= 1 else self.bucket_bytes
            k = (x.dtype, x.device)
            if cur is None or k != key or (cur.positions and cur_bytes + nbytes > cap):
                cur, cur_bytes, key = _Bucket(), 0, k
                buckets.append(cur)
            cur.positions.append(pos)
            cur.shapes.append(x.shape)
            cur.numels.append(x.numel())
            cur_bytes += nbytes
        self.buckets = buckets

    def __call__(self, targets, inputs, seeds):
        if self.buckets is None:
            self._build(inputs)
        step = _Step(self, inputs)
        outs = [t for t in targets if t.requires_grad]
        if outs:
            # Average by scaling the loss gradient (Paddle's scale_loss_grad): free, unlike a pass over the
            # flattened gradients; the gradients read outside the region are scaled alike, as in Paddle.
            gos = [s if self.divisor == 1.0 else s / self.divisor for t, s in zip(targets, seeds) if t.requires_grad]
            handles = []
            for b, bucket in enumerate(self.buckets):
                for j, pos in enumerate(bucket.positions):
                    if inputs[pos].requires_grad:
                        handles.append(inputs[pos].register_hook(step.hook(b, j)))
            try:
                grads = list(torch.autograd.grad(outs, inputs, gos, allow_unused=True))
            finally:
                for h in handles:
                    h.remove()
        else:
            grads = [None] * len(inputs)
        step.finish(grads)
        return [torch.zeros_like(x) if g is None else g for x, g in zip(inputs, grads)]


class _Step:
    """State of one backward: which bucket slots are filled, which buckets are in flight."""

    def __init__(self, reducer, inputs):
        self.r = reducer
        self.inputs = inputs
        self.slots = [[None] * len(b.positions) for b in reducer.buckets]
        self.missing = [len(b.positions) for b in reducer.buckets]
        self.works = []       # (flat, work) per launched bucket, in bucket order

    def hook(self, b, j):
        def on_grad(g):
            if self.slots[b][j] is None:
                self.missing[b] -= 1
            self.slots[b][j] = g
            while len(self.works) < len(self.slots) and self.missing[len(self.works)] == 0:
                self._launch(len(self.works))
        return on_grad

    def _launch(self, b):
        parts = [g.to_dense() if g.is_sparse else g for g in self.slots[b]]
        flat = self.r.flat_buffers.get(b)
        if flat is None:
            flat = parts[0].new_empty(sum(self.r.buckets[b].numels))
            if self.r.reuse_buffers:
                self.r.flat_buffers[b] = flat
        torch.cat([g.reshape(-1) for g in parts], out=flat)
        self.works.append((flat, self.r.comm.allreduce_async(flat)))

    def finish(self, grads):
        buckets = self.r.buckets
        for b in range(len(self.works), len(buckets)):   # unused params, or grads no hook saw
            for j, pos in enumerate(buckets[b].positions):
                if self.slots[b][j] is None:
                    g = grads[pos]
                    self.slots[b][j] = g if g is not None else torch.zeros_like(self.inputs[pos])
            self.missing[b] = 0
            self._launch(b)
        for b, (flat, work) in enumerate(self.works):
            self.r.comm.wait(work, "gradient allreduce")
            off = 0
            bucket = buckets[b]
            for pos, shape, n in zip(bucket.positions, bucket.shapes, bucket.numels):
                grads[pos] = flat[off:off + n].view(shape)
                off += n
