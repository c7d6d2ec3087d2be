"""What a kernel factory sees while a block is lowered (LowerCtx), and the lowering's errors.

A kernel factory `factory(op, ctx)` runs once per lowering and returns the callable the step calls. It may
read the fields below; state that several kernels of one lowered block share (the parameter-server client
of the block's send/recv ops, the ids split_ids computed for merge_ids) is declared as a class and asked for
with `ctx.state(Class)`: one instance per lowered block, built by `Class(ctx)` on first request. Any other
attribute write fails, so a kernel cannot leave undeclared state on the context for another to find.
"""

from ...ir.errors import EnforceNotMet

__all__ = ["LowerCtx", "LoweringError", "OpRunError", "describe_op", "missing_value", "op_failure"]


class LoweringError(EnforceNotMet):
    """The program cannot be run as given (a missing feed, an uninitialised variable, an unknown op)."""


class OpRunError(EnforceNotMet):
    """An op failed while running; the message names the op, its inputs and where it was built."""


def describe_op(op):
    where = (" (created at %s)" % op.callsite) if op.callsite else ""
    outs = ", ".join(op.output_arg_names[:3])
    return "op '%s'%s%s" % (op.type, (" -> " + outs) if outs else "", where)


def missing_value(name, var, op):
    """The LoweringError for a value the step reads that is neither fed, computed nor in the scope."""
    if var is not None and var.is_data:
        return LoweringError("data variable '%s' is used by %s but was not fed (feed it in "
                             "exe.run(feed={'%s': ...}))" % (name, describe_op(op) if op else "fetch", name))
    return LoweringError("variable '%s' is used by %s but was neither fed nor initialised in the scope (did you "
                         "run the startup program?)" % (name, describe_op(op) if op else "fetch_list"))


def op_failure(op, exc, value_of):
    """The OpRunError for an op whose kernel raised: the op, the error, each input's shape (value_of(name):
    its value, or None when it has none)."""
    parts = []
    for slot, args in op.inputs.items():
        shown = []
        for a in args:
            val = value_of(a)
            shape = list(getattr(val, "shape", [])) if val is not None else "undefined"
            shown.append("%s%s" % (a, shape))
        parts.append("%s=%s" % (slot, ", ".join(shown)))
    return OpRunError("%s failed: %s: %s\n  inputs: %s" % (describe_op(op), type(exc).__name__, exc,
                                                         "; ".join(parts)))


class LowerCtx:
    """Fields (read-only for kernels):
      program, block     the Program and the Block being lowered
      scope              the Scope the step reads and writes (None for a scope-less lowering)
      device             the torch device string the step runs on ("cpu", "cuda:0")
      executor           the Executor running it (backends keep per-executor clients in executor.runtime)
      shared_params      Hogwild threads share the scope's parameters (train_from_dataset, thread > 1)
      check_nan_inf      FLAGS_check_nan_inf is on for this lowering
    Methods: var(name), lower_sub_block(...), state(Class)."""

    __slots__ = ("program", "block", "scope", "device", "executor", "shared_params", "check_nan_inf",
                 "_lower", "_states")

    def __init__(self, program, block, scope, device, executor=None, shared_params=False, check_nan_inf=False,
                 lower=None):
        set_ = object.__setattr__
        set_(self, "program", program)
        set_(self, "block", block)
        set_(self, "scope", scope)
        set_(self, "device", device)
        set_(self, "executor", executor)
        set_(self, "shared_params", shared_params)
        set_(self, "check_nan_inf", check_nan_inf)
        set_(self, "_lower", lower)     # lower_block(program, idx, scope, device, ...) for control-flow bodies
        set_(self, "_states", {})

    def __setattr__(self, name, value):
        raise AttributeError("LowerCtx.%s: kernels may not write attributes on the lowering context; declare "
                             "shared per-block state as a class and ask ctx.state(ThatClass) for it" % name)

    def var(self, name):
        return self.block._find_var_recursive(name)

    def state(self, kind):
        """The one `kind(self)` of this lowered block: state its kernels share (built on first request)."""
        got = self._states.get(kind)
        if got is None:
            got = self._states[kind] = kind(self)
        return got

    def lower_sub_block(self, block_idx, in_names, out_names, feed_lod=(), write_scope=True):
        """Compiles a control-flow op's body once; the kernel calls it per step (ops/ cannot import backends).
        The names in feed_lod are given to it as (tensor, LoD) pairs. write_scope=False: the body writes no
        persistable value to the scope (it returns them; a predicated conditional_block selects them)."""
        if self._lower is None:
            raise LoweringError("this LowerCtx was made without a lowering for control-flow bodies (lower=)")
        return self._lower(self.program, block_idx, self.scope, self.device, in_names, out_names,
                           executor=self.executor, feed_lod=tuple(feed_lod), sub_block=True,
                           shared_params=self.shared_params, check_nan_inf=self.check_nan_inf,
                           write_scope=write_scope)
