"""The IR: what a Fluid script records (Program, Block, Operator, Variable/Parameter, dtypes, op roles, unique
names, the default programs and guards), what a run holds (places, Scope, LoDTensor, LoDTensorArray,
SelectedRows) and the numpy-only file formats (protobuf wire format, ProgramDesc, Paddle's tensor files,
program JSON, pickles read without running code).

It imports nothing of paddle_compat above it and loads torch only when a runtime holder makes a tensor. Op
types are declared by paddle_compat.ops, which registers them here (op_info.py).
"""

from . import unique_name  # noqa: F401
from .block import Block, BlockDesc
from .build_context import (default_main_program, default_startup_program, device_guard, name_scope,
                            program_guard, switch_main_program, switch_startup_program)
from .dtypes import VarType, convert_dtype, dtype_name
from .errors import EOFException
from .fetch_array import as_fetch
from .flags import flag_value, get_flags, set_flags
from .lod import check_lod, lengths_to_offsets, lod_as_lists, lod_as_tensors
from .operator import Operator, OpDesc
from .places import (CPUPlace, CUDAPinnedPlace, CUDAPlace, Place, cpu_places, cuda_pinned_places, cuda_places,
                     get_cuda_device_count, is_compiled_with_cuda, torch_device)
from .program import Program, ProgramDesc, prune_for_inference
from .recording import current_name_scope, notify_changed, switch_name_scope
from .roles import (GRAD_SUFFIX, OP_CALLSTACK_KEY, OP_NAMESCOPE_KEY, OP_ROLE_KEY, OP_ROLE_VAR_KEY, OpRole,
                    grad_var_name, forward_name, is_autograd_op, is_recomputed_op, role_var_params, updates_params)
from .scope import Scope, global_scope, scope_guard
from .tensor import LoDTensor, LoDTensorArray, ScopeVar, SelectedRows, to_torch
from .variable import Parameter, Variable, VarDesc

__all__ = [
    "Program", "ProgramDesc", "Block", "BlockDesc", "Operator", "OpDesc", "Variable", "Parameter", "VarDesc",
    "VarType", "convert_dtype", "dtype_name", "OpRole", "OP_ROLE_KEY", "OP_ROLE_VAR_KEY", "OP_NAMESCOPE_KEY",
    "OP_CALLSTACK_KEY", "GRAD_SUFFIX", "grad_var_name", "forward_name", "is_autograd_op", "is_recomputed_op",
    "default_main_program", "default_startup_program", "switch_main_program", "switch_startup_program",
    "program_guard", "name_scope", "device_guard", "current_name_scope", "switch_name_scope", "notify_changed",
    "prune_for_inference", "unique_name",
    "Place", "CPUPlace", "CUDAPlace", "CUDAPinnedPlace", "cpu_places", "cuda_places", "cuda_pinned_places",
    "is_compiled_with_cuda", "get_cuda_device_count", "torch_device",
    "Scope", "ScopeVar", "global_scope", "scope_guard", "LoDTensor", "LoDTensorArray", "SelectedRows",
    "to_torch", "lod_as_lists", "lod_as_tensors", "check_lod", "lengths_to_offsets", "EOFException",
    "as_fetch", "flag_value", "get_flags", "set_flags",
]
