"""Paddle's fluid.framework: the IR's names (paddle_compat.ir: Program, Block, Variable, Parameter, Operator, the
default programs and guards) under the module path scripts import them from, and the few framework functions
of Paddle 1.8 that are not IR."""

from ..ir import unique_name  # noqa: F401
from ..ir.block import Block
from ..ir.build_context import (default_main_program, default_startup_program, device_guard,  # noqa: F401
                                name_scope, program_guard, switch_main_program, switch_startup_program)
from ..ir.dtypes import VarDesc, VarType, convert_dtype, convert_np_dtype_to_dtype_, dtype_name  # noqa: F401
from ..ir.flags import get_flags, set_flags  # noqa: F401
from ..ir.operator import Operator
from ..ir.places import (_current_expected_place, cpu_places, cuda_pinned_places, cuda_places,  # noqa: F401
                         is_compiled_with_cuda)
from ..ir.program import Program
from ..ir.recording import (NameScope, change_hooks, current_name_scope, eager_active,  # noqa: F401
                            notify_changed, switch_name_scope)
from ..ir.roles import (EMPTY_VAR_NAME, GRAD_SUFFIX, OP_CALLSTACK_KEY, OP_NAMESCOPE_KEY, OP_ROLE_KEY,  # noqa: F401
                        OP_ROLE_VAR_KEY, TEMP_VAR_NAME, OpRole, grad_var_name)
from ..ir.variable import Parameter, Variable
from ..ops.protos import OpProtoHolder
from ..version import require_version  # noqa: F401
from .dygraph.mode import ComplexVariable  # noqa: F401

__all__ = [
    "Program", "Block", "Variable", "Parameter", "Operator", "OpRole", "default_main_program",
    "default_startup_program", "program_guard", "name_scope", "switch_main_program",
    "switch_startup_program", "in_dygraph_mode", "unique_name", "VarDesc", "convert_np_dtype_to_dtype_",
    "grad_var_name", "GRAD_SUFFIX", "OpProtoHolder",
]

GRAD_VAR_SUFFIX = GRAD_SUFFIX      # Paddle's name constants (core.kGradVarSuffix() and friends)
ZERO_VAR_SUFFIX = "@ZERO"
CONTROL_DEP_VAR_PREFIX = "__control_var"


def in_dygraph_mode():
    # inside fluid.dygraph.guard (the minimal eager mode of fluid/eager_op.py), as Paddle's tracer answers
    return eager_active()


def load_op_library(lib_filename):
    raise NotImplementedError(
        "load_op_library(%r): custom C++ operators compiled against Paddle cannot be loaded by paddle_compat; "
        "write the op as a Python kernel with paddle_compat.ops.defop (see paddle_compat/ops/registry.py), or "
        "use layers.py_func" % (lib_filename,))
