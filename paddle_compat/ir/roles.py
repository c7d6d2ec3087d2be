"""Facts about recorded ops that both the front end and the backends read: op roles, the gradient-name
convention, and which ops append_backward recorded (the autograd lowering computes those together).

Plain Python, below paddle_compat.fluid: the backends import these from here, not from fluid.backward.
"""

import re

__all__ = ["OpRole", "OP_ROLE_KEY", "OP_ROLE_VAR_KEY", "OP_NAMESCOPE_KEY", "OP_CALLSTACK_KEY", "GRAD_SUFFIX",
           "grad_var_name", "is_autograd_op", "is_recomputed_op", "SUBPROG_SUFFIX", "op_proto_and_checker_maker",
           "EMPTY_VAR_NAME", "TEMP_VAR_NAME"]


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
    if op.type.endswith("_grad"):
        # a conditional_block_grad running a backward block (minimize inside a cond branch) is a
        # control-flow op; one append_backward recorded for a conditional_block names the forward body
        sub = op.attrs.get("sub_block")
        return sub is None or getattr(sub, "forward_block_idx", -1) < 0
    if op.type == "sum":
        names = op.input_arg_names + op.output_arg_names
        return bool(names) and all(GRAD_SUFFIX in n for n in names)
    return False


def is_recomputed_op(op):
    """True for a forward op that RecomputeOptimizer copied into the backward section (append_backward with
    checkpoints): role Backward, writes `<name>.subprog_N` variables and no gradient."""
    role = op.attrs.get(OP_ROLE_KEY, 0)
    if not role & OpRole.Backward or role & OpRole.Loss:
        return False
    outs = op.output_arg_names
    return any(_SUBPROG.search(n) for n in outs) and not any(GRAD_SUFFIX in n for n in outs)
