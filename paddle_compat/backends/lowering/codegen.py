"""Lower one block to one generated Python function: plan (plan.py, data) then emit (emit.py, source).

    lowered = lower_block(program, 0, scope, "cpu", feed_names, fetch_names)
    lowered(feeds) -> ((value, LoD), ...) per fetch;  lowered.code: the source;  lowered.plan: the BlockPlan

interpreter.py runs the same blocks op by op with the same kernels (the reference for differential tests).
"""

import functools

from . import capture as capture_mod, nan_check
from .ctx import LowerCtx, LoweringError, OpRunError
from .emit import LoweredBlock, emit
from .plan import plan_block
from ..quick_exit import install as _install_quick_exit

# lowering means torch is loaded: exit without the final GC walk over its objects (quick_exit.py)
_install_quick_exit()

__all__ = ["lower_block", "LowerCtx", "LoweringError", "OpRunError", "LoweredBlock"]


def lower_block(program, block_idx, scope, device, feed_names=(), fetch_names=(), executor=None,
                feed_lod=(), autograd_for=None, sub_block=False, shared_params=False, check_nan_inf=None,
                inplace_writes=False, fuse=True, capture=False, write_scope=True):
    """autograd_for(block, region) -> callable like autograd_region.autograd lets a backend substitute the
    gradient call of a region (the data-parallel runner overlaps its allreduce with it).
    sub_block: the body of a control-flow op (while, conditional_block): it keeps the caller's grad mode,
    so autograd sees through it.
    shared_params: the function runs on several threads at once over the same scope (train_from_dataset's
    Hogwild). Scope values are then read through `.data`: the same storage (in-place optimizer updates reach
    every thread) under a version counter of this call's own, so one thread's update of a parameter does not
    make torch reject another thread's backward through it (it reads the parameter as it is then, as
    Paddle's lock-free Hogwild does). Everything else a step holds is local to the call.
    check_nan_inf: FLAGS_check_nan_inf (None: the environment's); when on, the plan holds checks after
    each op and region (and nothing when off).
    inplace_writes: scope values are updated in place (CUDA-graph capture keeps their storage).
    fuse: False lowers every op by itself (no lookup, fc or optimizer groups).
    write_scope: False writes no persistable value back to the scope (a body whose results its op selects).
    capture: run the step as CUDA graphs where the plan allows (capture.py): True on a CUDA device, or a
    graphs backend object (tests give a fake one); a block that cannot be captured says why once."""
    if check_nan_inf is None:
        check_nan_inf = nan_check.flag_on()
    plan = plan_block(program, block_idx, scope, feed_names, fetch_names, feed_lod, sub_block, shared_params,
                      check_nan_inf, fuse=fuse, write_scope=write_scope)
    # control-flow bodies are lowered alike (fused or not)
    sub = lower_block if fuse else functools.partial(lower_block, fuse=False)
    ctx = LowerCtx(program, plan.block, scope, device, executor, shared_params, check_nan_inf, lower=sub)
    if capture is True and not capture_mod.device_supports(device):
        capture = False
    if not capture or sub_block or shared_params or autograd_for is not None:
        return emit(plan, ctx, autograd_for, inplace_writes)
    if not plan.capture.safe:
        return capture_mod.Uncaptured(emit(plan, ctx, None, inplace_writes), _where(plan) + (plan.capture.reason,),
                                      "program %d block %d: %s" % (_where(plan) + (plan.capture.reason,)))
    backend = capture_mod.default_backend(device) if capture is True else capture
    return capture_mod.CapturedBlock(emit(plan, ctx, None, inplace_writes=True), scope, backend)


def _where(plan):
    return plan.program._uid, plan.block.idx
