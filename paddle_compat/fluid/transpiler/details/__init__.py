"""fluid.transpiler.details: the program printing helpers and distributed-variable records of Paddle 1.8."""

from .program_utils import block_to_code, op_to_code, program_to_code, variable_to_code  # noqa: F401
from .vars_distributed import VarDistributed, VarsDistributed, VarStruct  # noqa: F401
