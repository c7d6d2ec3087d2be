"""Whether a planned block can run as one CUDA graph (torch.cuda.CUDAGraph), and why not when it cannot.

A captured step replays the same kernels on the same memory: every shape must be fixed for a given feed
signature, and nothing may need the host in the middle of the step (a value read back, Python deciding what
runs next, a file, a socket, a reader). What the lowering knows statically is checked here, in the order
a reader would look for it; the first reason found is reported:

  LoD        a variable carrying a LoD: its rows and offsets vary per batch (sequence ops size from them)
  host ops   ops whose kernel runs on the host by nature: Python callbacks, printing, readers, files,
             parameter-server RPC, process-group collectives, tensor arrays and rank tables
  control    while / conditional_block / recurrent / IfElse: the condition is read on the host each step
  shapes     ops whose output size depends on the data (unique, where_index, nms, beam search, ...) or
             whose shape comes from a tensor input (reshape's ShapeTensor, interp's OutSize, ...)
  random     a fixed-seed random op builds a torch.Generator per step on the host
  sparse     an is_sparse lookup: its row-sparse gradient has as many rows as the batch has distinct ids
  nan check  FLAGS_check_nan_inf reads every output back

The facts about each op type (it runs Python code, talks over RPC, is control flow, sizes an output by the
data, reads a shape input on the host, draws random numbers) are declared with the op (ops/defs: `host`
and `device_when`, `host_inputs`, `random`, `sparse_grad_slot`); this module only orders them into a verdict. What a
declaration misses, capture itself finds on the GPU (an operation not permitted while capturing): the capture
runner then falls back and says why, once.
"""

from ...ops import HOST_REASONS, info
from .plan_types import CaptureVerdict, OpStep, RegionStep

__all__ = ["capture_verdict", "op_reason"]


def op_reason(op, training=True):
    """Why one op keeps its step from being captured, or None. training: the step has a backward (an
    is_sparse lookup makes a row-sparse gradient only then)."""
    t = op.type
    d = info(t)
    host = d.host_need(op)
    if host is not None:
        return HOST_REASONS[host]
    if op.attrs.get("sub_block") is not None and t.endswith("_grad"):    # grad ops have no declaration
        return HOST_REASONS["control"]
    for slot, names in op.inputs.items():
        if names and d.reads_on_host(slot):
            return "reads its %s input on the host" % slot
    if d.random and (op.attrs.get("fix_seed") or op.attrs.get("seed") or op.inputs.get("Seed")) and \
            not (t == "dropout" and op.attrs.get("is_test")):
        return "has a fixed seed (a generator made per step on the host)"
    if training and d.sparse_grad_slot is not None and op.attrs.get("is_sparse"):
        return "makes a row-sparse gradient (its rows vary with the batch's ids)"
    return None


def capture_verdict(block, steps, feed_lod, has_lod, check_nan_inf):
    """CaptureVerdict for a planned block: safe, or the first reason it is not (naming the op or variable)."""
    if check_nan_inf:
        return CaptureVerdict(False, "FLAGS_check_nan_inf reads every op's outputs on the host")
    lod = sorted(feed_lod) or sorted(has_lod)
    if lod:
        return CaptureVerdict(False, "variable '%s' carries a LoD (its shape varies per batch)" % lod[0])
    training = any(isinstance(s, RegionStep) for s in steps)
    for s in steps:
        if isinstance(s, OpStep):
            why = op_reason(s.op, training)
            if why is not None:
                return CaptureVerdict(False, "op '%s' (#%d) %s" % (s.op.type, s.index, why), s.index)
        elif isinstance(s, RegionStep):
            for i in s.region.op_idx:
                op = block.ops[i]
                if op.attrs.get("sub_block") is not None:
                    return CaptureVerdict(False, "op '%s' (#%d) is control flow decided on the host"
                                          % (op.type, i), i)
    for s in steps:
        if isinstance(s, OpStep):
            for slot, names in s.op.outputs.items():
                for n in names:
                    v = block._find_var_recursive(n)
                    if v is not None and v.lod_level > 0:
                        return CaptureVerdict(False, "variable '%s' carries a LoD (its shape varies per batch)"
                                              % n, s.index)
    return CaptureVerdict(True)
