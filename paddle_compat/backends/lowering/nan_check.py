"""FLAGS_check_nan_inf=1, as Paddle 1.8: after each op, its floating outputs are checked, and the first nan or inf
raises naming the op type, the output variable and where the op's layer was built.

What Paddle 1.8.5 checks (tests/data/paddle18/nan_inf.json, make_nan_inf.py): the outputs of every op run
with a kernel, in its output slots' name order: forward, backward (`sqrt_grad` writing `w@GRAD`), optimizer
(`sgd` writing the parameter) and learning-rate ops alike, also inside while bodies; float16/32/64 tensors
and SelectedRows values, not integer ones; not the ops run without a kernel (declared operator_base: feed, fetch,
while, read, recv, py_func, print, ...), so a fed nan is found in the first op that reads it. The environment's
PADDLE_INF_NAN_SKIP_OP ("op,op"), PADDLE_INF_NAN_SKIP_ROLE ("forward,backward,optimize,rpc,dist,lrsched")
and PADDLE_INF_NAN_SKIP_VAR ("op:var,op:var") leave out what they name. Its message is
`===ERROR: in [op=log] [tensor=log_0.tmp_0] find nan or inf===`; ours starts the same and says, instead
of printing values to stdout as Paddle does, how many values are nan, inf and finite and where the first one
is, and where the op was created.

Here the backward is one torch.autograd.grad call per region (autograd_region.py), so a grad op's outputs do
not exist one by one: the gradient of each forward tensor whose `@GRAD` a grad op writes is checked by a
tensor hook as autograd computes it (naming that grad op and `<name>@GRAD`), and the region's results (the
parameters' gradients) after the call. Lookups are not fused while checking (each op's output is checked).

Nothing here runs with the flag off: the plan holds no checks then, and the executor keys its lowerings on
the flag.
"""

import os

from ...ir import GRAD_SUFFIX, OP_ROLE_KEY, OpRole, flag_value
from ...ir.lazy import torch
from ...ops import info
from .ctx import OpRunError

# Paddle 1.8.5 runs the ops declared operator_base=True without a kernel (ops/defs; recorded by make_nan_inf.py)
# and so never checks their outputs; nor those of control flow's grad ops, which have no declaration (nor a
# proto of their own in Paddle).
_GRAD_WITHOUT_KERNEL = frozenset(["while_grad", "conditional_block_grad", "recurrent_grad", "rnn_memory_helper_grad"])

_FORWARD = 0x10000      # Paddle's stand-in bit for the forward role (0) in PADDLE_INF_NAN_SKIP_ROLE
_ROLES = {"forward": _FORWARD, "backward": OpRole.Backward, "optimize": OpRole.Optimize, "rpc": OpRole.RPC,
          "dist": OpRole.Dist, "lrsched": OpRole.LRSched}


class NanInfError(OpRunError):
    """FLAGS_check_nan_inf: an op wrote nan or inf (Paddle 1.8 raises EnforceNotMet with the same
    `===ERROR: in [op=..] [tensor=..] find nan or inf===`)."""


def flag_on():
    """FLAGS_check_nan_inf as the environment has it (fluid.set_flags writes it there)."""
    return flag_value("FLAGS_check_nan_inf")


def _items(env, name):
    return [s.strip() for s in env.get(name, "").split(",") if s.strip()]


class NanPolicy:
    """What FLAGS_check_nan_inf checks in one block (the plan's part): which outputs after which op, which
    gradients by a hook; the environment's PADDLE_INF_NAN_SKIP_* leave out what they name."""

    def __init__(self, block, regions, env=None):
        env = os.environ if env is None else env
        self.skip_ops = set(_items(env, "PADDLE_INF_NAN_SKIP_OP"))
        self.skip_roles = 0
        for r in _items(env, "PADDLE_INF_NAN_SKIP_ROLE"):
            if r not in _ROLES:
                raise ValueError("PADDLE_INF_NAN_SKIP_ROLE: unknown role %r (known: %s)" % (r, ", ".join(_ROLES)))
            self.skip_roles |= _ROLES[r]
        self.skip_vars = set()
        for item in _items(env, "PADDLE_INF_NAN_SKIP_VAR"):
            op_type, sep, var = item.partition(":")
            if not sep:
                raise ValueError("PADDLE_INF_NAN_SKIP_VAR: %r is not op_type:var_name" % item)
            self.skip_vars.add((op_type, var))
        # the grad op that writes each gradient of a region (the last writer: the `sum` of renamed parts)
        self.grad_op = {}
        for r in regions:
            for i in r.op_idx:
                for n in block.ops[i].output_arg_names:
                    if n.endswith(GRAD_SUFFIX):
                        self.grad_op[n] = (i, block.ops[i])

    def _skipped(self, op):
        if info(op.type).operator_base or op.type in _GRAD_WITHOUT_KERNEL or op.type in self.skip_ops:
            return True
        role = int(op.attrs.get(OP_ROLE_KEY, 0)) or _FORWARD
        return bool(self.skip_roles & role)

    def after_op(self, i, op, out_slots):
        """After forward op i: ((op, output name), ...) to check (out_slots: the slots the kernel returns,
        whose values exist), and ((grad op, grad name, output name), ...): the gradients a later region
        computes for them, checked by a hook on the output."""
        checked, hooks = [], []
        if not self._skipped(op):
            checked = [(op, n) for slot in sorted(out_slots)
                       for n in op.outputs.get(slot, []) if (op.type, n) not in self.skip_vars]
        for slot in sorted(out_slots):
            for n in op.outputs.get(slot, []):
                at = self.grad_op.get(n + GRAD_SUFFIX)
                if at is not None and at[0] > i and not self._skipped(at[1]) and \
                        (at[1].type, n + GRAD_SUFFIX) not in self.skip_vars:
                    hooks.append((at[1], n + GRAD_SUFFIX, n))
        return tuple(checked), tuple(hooks)

    def after_region(self, region):
        """((grad op, gradient name), ...) to check after a region's autograd call: its results, in the
        order of the grad ops writing them."""
        checked = []
        for n in sorted(region.wanted, key=lambda n: self.grad_op[n][0] if n in self.grad_op else -1):
            op = self.grad_op.get(n, (None, None))[1]
            if op is not None and not self._skipped(op) and (op.type, n) not in self.skip_vars:
                checked.append((op, n))
        return tuple(checked)


class NanRuntime:
    """The run-time side: the checks the generated code calls (`__nan_out`, `__nan_hook`), each naming an
    entry (op, variable name) registered while emitting."""

    def __init__(self, g):
        self.ops = []                        # entry -> (op, var name), for the messages
        g["__nan_out"] = self._check_outputs
        g["__nan_hook"] = self._hook
        self._tensor = torch.Tensor
        self._isfinite = torch.isfinite

    def entry(self, op, name):
        self.ops.append((op, name))
        return len(self.ops) - 1

    def _values(self, v):
        if not isinstance(v, self._tensor):
            return None         # tensor arrays, LoD offsets, readers: not checked (as in Paddle)
        if v.is_sparse:         # SelectedRows: its rows' values
            v = v._values()
        return v if v.is_floating_point() and v.numel() else None

    def _check_outputs(self, pairs):
        for k, v in pairs:
            t = self._values(v)
            if t is not None and not bool(self._isfinite(t).all()):
                raise self._error(k, t)

    def _hook(self, k, v):
        if isinstance(v, self._tensor) and v.requires_grad and v.grad_fn is not None:
            # (not on leaves: a parameter lives across steps and its hooks would pile up; its gradient is a
            # region result, checked after the call)
            v.register_hook(lambda grad: self._check_outputs(((k, grad),)))

    def _error(self, k, t):
        op, name = self.ops[k]
        t = t.detach()
        nan = int(t.isnan().sum())
        inf = int(t.isinf().sum())
        first = int((~self._isfinite(t)).reshape(-1).nonzero()[0, 0])
        where = " (the op was created at %s)" % op.callsite if op.callsite else ""
        return NanInfError("===ERROR: in [op=%s] [tensor=%s] find nan or inf=== (FLAGS_check_nan_inf): %d nan, "
                           "%d inf and %d finite values of %d, the first at flat index %d, shape %s%s"
                           % (op.type, name, nan, inf, t.numel() - nan - inf, t.numel(), first, list(t.shape),
                              where))
