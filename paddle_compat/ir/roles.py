"""Facts about recorded ops that both the front end and the backends read: op roles, the gradient-name
convention, and which ops append_backward recorded (the autograd lowering computes those together).

Plain Python, below paddle_compat.fluid: the backends import these from here, not from fluid.backward.
"""

import re

__all__ = ["OpRole", "OP_ROLE_KEY", "OP_ROLE_VAR_KEY", "OP_NAMESCOPE_KEY", "OP_CALLSTACK_KEY", "GRAD_SUFFIX",
           "grad_var_name", "is_autograd_op", "is_recomputed_op", "role_var_params", "updates_params",
           "SUBPROG_SUFFIX", "op_proto_and_checker_maker", "EMPTY_VAR_NAME", "TEMP_VAR_NAME"]


class OpRole:
    """Paddle's op_role bits (core.op_proto_and_checker_maker.OpRole)."""
    Forward = 0x0000
    Backward = 0x0001
    Optimize = 0x0002
    RPC = 0x0004
    Dist = 0x0008
    LRSched = 0x0010
    Loss = 0x0100
    Collective = 0x0200  # not a Paddle 1.x bit; marks ops inserted by the collective transpiler
    NotSpecified = 0x1000


OP_ROLE_KEY = "op_role"
OP_ROLE_VAR_KEY = "op_role_var"
OP_NAMESCOPE_KEY = "op_namescope"
OP_CALLSTACK_KEY = "op_callstack"


class op_proto_and_checker_maker:   # noqa: N801  (Paddle's name)
    """The op attribute names and role bits Paddle's scripts read from fluid.core (hand-built RPC and
    transpiler programs set op_role by hand)."""
    OpRole = OpRole

    @staticmethod
    def kOpRoleAttrName():   # noqa: N802
        return "op_role"

    @staticmethod
    def kOpRoleVarAttrName():   # noqa: N802
        return "op_role_var"

    @staticmethod
    def kOpNameScopeAttrName():   # noqa: N802
        return "op_namescope"

    @staticmethod
    def kOpCreationCallstackAttrName():   # noqa: N802
        return "op_callstack"

    @staticmethod
    def kOpDeviceAttrName():   # noqa: N802
        return "op_device"


GRAD_SUFFIX = "@GRAD"
EMPTY_VAR_NAME = "@EMPTY@"
TEMP_VAR_NAME = "@TEMP@"
SUBPROG_SUFFIX = ".subprog_%d"    # a variable recomputed in the backward section (RecomputeOptimizer)
_SUBPROG = re.compile(r"\.subprog_\d+$")


def grad_var_name(name):
    return name + GRAD_SUFFIX


def is_autograd_op(op):
    """True for ops append_backward recorded (computed together by the autograd lowering)."""
    role = op.attrs.get(OP_ROLE_KEY, 0)
    if not role & OpRole.Backward or role & OpRole.Loss:
        return False
    if op.type.endswith("_grad") or op.type == "cross_entropy_grad2":   # Paddle's one grad type named otherwise
        # a conditional_block_grad running a backward block that updates parameters (minimize inside a cond
        # branch) is a control-flow op; one append_backward recorded for a conditional_block names the
        # forward body; Paddle's own grad op of a control-flow op (a program it wrote: recurrent_grad,
        # conditional_block_grad, while_grad) runs a block of grad ops only, which autograd computes
        sub = op.attrs.get("sub_block")
        return sub is None or getattr(sub, "forward_block_idx", -1) < 0 or not updates_params(sub)
    if op.type == "sum":
        names = op.input_arg_names + op.output_arg_names
        if bool(names) and all(GRAD_SUFFIX in n for n in names):
            return True
    return op.type in _GRAD_MAKER_TYPES and _maps_grads(op)


# Ordinary op types Paddle 1.8's grad makers write into a backward section (split's grad is a concat, scale's
# and sum's are scales, cast's a cast, assign's an assign, select_input's a select_output, array_to_lod_tensor's
# a lod_tensor_to_array, write_to_array's a read_from_array and back, a missing output gradient a
# fill_zeros_like). In a program Paddle wrote they are part of the backward pass, which autograd computes as a
# whole. Not a fact of each listed op (a concat is a concat) but of other ops' grad makers, read by the IR's
# role classification, which sits below the op table: so it stays here.
_GRAD_MAKER_TYPES = frozenset(["scale", "assign", "cast", "concat", "split", "sum", "fill_zeros_like",
                               "select_input", "select_output", "lod_tensor_to_array", "array_to_lod_tensor",
                               "read_from_array", "write_to_array"])


def updates_params(block):
    """Whether a block (or one it runs) holds an optimizer op: a backward block of minimize inside a sub-block,
    not one of Paddle's grad blocks of a control-flow op."""
    for op in block.ops:
        if op.attrs.get(OP_ROLE_KEY, 0) & OpRole.Optimize:
            return True
        sub = op.attrs.get("sub_block")
        if sub is not None and sub is not block and updates_params(sub):
            return True
    return False


def _maps_grads(op):
    """The op writes new gradients (outputs all @GRAD or @GRAD parts, none of them also read) from gradients
    (fill_zeros_like: from the forward variable). Not an in-place rewrite of a gradient (the collective
    transpiler's loss-gradient scale, batch_merge's averaging), which stays an ordinary op."""
    if op.attrs.get(OP_ROLE_KEY, 0) != OpRole.Backward:
        return False
    outs, ins = op.output_arg_names, op.input_arg_names
    if not outs or set(outs) & set(ins):
        return False
    if not all(n.endswith(GRAD_SUFFIX) or GRAD_SUFFIX + "@RENAME@" in n for n in outs):
        return False
    return op.type == "fill_zeros_like" or any(n.endswith(GRAD_SUFFIX) or GRAD_SUFFIX + "@RENAME@" in n
                                               for n in ins)


def role_var_params(block):
    """The parameters the block's ops name in op_role_var ([param, grad, ...]: backward and optimizer ops).
    A program Paddle wrote, parsed, has no Parameter objects; these pairs are how Paddle's multi-device pass
    found the gradients to average."""
    out = set()
    for op in block.ops:
        out.update((op.attrs.get(OP_ROLE_VAR_KEY) or [])[0::2])
    return out


def is_recomputed_op(op):
    """True for a forward op that RecomputeOptimizer copied into the backward section (append_backward with
    checkpoints): role Backward, writes `<name>.subprog_N` variables and no gradient."""
    role = op.attrs.get(OP_ROLE_KEY, 0)
    if not role & OpRole.Backward or role & OpRole.Loss:
        return False
    outs = op.output_arg_names
    return any(_SUBPROG.search(n) for n in outs) and not any(GRAD_SUFFIX in n for n in outs)
