"""py_func: an op whose forward (and optional backward) is a Python callable registered by the layer.

The callables live in a process-local registry (Paddle's PyFuncRegistry); the op holds their ids. The forward
callable receives LoDTensors and returns arrays or LoDTensors; the backward callable receives the forward
inputs, outputs and output gradients (less `backward_skip_vars`) and returns one gradient (or None) per input.
"""

from ...ir.lazy import torch
from ..registry import attr, defop
import numpy as np

_CALLABLES = []


def register_callable(fn):
    """-> the id stored in the op's forward/backward_callable_id attr."""
    _CALLABLES.append(fn)
    return len(_CALLABLES) - 1


def _callable(i, op):
    if i is None or i < 0:
        return None
    if i >= len(_CALLABLES):
        raise RuntimeError("py_func: callable id %d of op writing %s is not registered in this process "
                           "(py_func programs cannot be loaded from disk)" % (i, op.output("Out")))
    return _CALLABLES[i]


def _to_lod_tensor(t):
    # a numpy array here; the layer wraps the user's callables so they receive LoDTensors as in Paddle
    # (the front end's type stays out of the op table)
    return t.detach().cpu().numpy()


def _to_torch(v, like, what):
    arr = np.array(v)
    if arr.dtype == object:
        raise TypeError("py_func: %s returned %r, expected an array or LoDTensor" % (what, type(v).__name__))
    return torch.from_numpy(np.ascontiguousarray(arr)).to(device=like.device)


@defop("py_func", inputs=("X*",), outputs=("Out*",), host="python", operator_base=True)
def py_func(op, ctx):
    fwd = _callable(attr(op, "forward_callable_id", -1), op)
    bwd = _callable(attr(op, "backward_callable_id", -1), op)
    skip = set(attr(op, "backward_skip_vars", []) or [])
    in_names, out_names = op.input("X"), op.output("Out")
    device = ctx.device

    def call_forward(xs):
        res = fwd(*[_to_lod_tensor(x) for x in xs])
        if res is None:
            res = []
        elif not isinstance(res, (list, tuple)):
            res = [res]
        if len(res) != len(out_names):
            raise ValueError("py_func: the forward callable returned %d values for %d outputs %s"
                             % (len(res), len(out_names), out_names))
        ref = xs[0] if xs else torch.empty(0, device=device)
        return [_to_torch(r, ref, "the forward callable") for r in res]

    class _PyFunc(torch.autograd.Function):
        @staticmethod
        def forward(fctx, *xs):
            outs = call_forward(xs)
            fctx.save_for_backward(*(list(xs) + outs))
            for o in outs:
                if not o.is_floating_point():
                    fctx.mark_non_differentiable(o)
            return tuple(outs)

        @staticmethod
        def backward(fctx, *douts):
            saved = fctx.saved_tensors
            xs, outs = saved[:len(in_names)], saved[len(in_names):]
            args = [x for n, x in zip(in_names, xs) if n not in skip]
            args += [o for n, o in zip(out_names, outs) if n not in skip]
            args += [d if d is not None else torch.zeros_like(o) for d, o in zip(douts, outs)]
            res = bwd(*[_to_lod_tensor(a) for a in args])
            if not isinstance(res, (list, tuple)):
                res = [res]
            if len(res) != len(xs):
                raise ValueError("py_func: the backward callable returned %d values for %d inputs %s"
                                 % (len(res), len(xs), in_names))
            return tuple(None if r is None else _to_torch(r, x, "the backward callable").to(x.dtype)
                         for r, x in zip(res, xs))

    def k(xs):
        if bwd is None or not any(x.requires_grad for x in xs):
            with torch.no_grad():
                return call_forward(list(xs))
        return list(_PyFunc.apply(*xs))
    return k
