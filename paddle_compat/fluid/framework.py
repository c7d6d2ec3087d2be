"""The IR: Program, Block, Variable, Parameter, Operator, and the default-program machinery.

Pieces live in program.py / variable.py / operator.py / dtypes.py; this module is the one the rest of the
package (and user code, as `fluid.framework`) imports them from.
"""

import contextlib

from . import eager_op as _eager
from . import unique_name
from .dtypes import VarDesc, VarType, convert_dtype, convert_np_dtype_to_dtype_, dtype_name
from ..ops.roles import GRAD_SUFFIX, grad_var_name  # noqa: F401  (Paddle has them here)
from .operator import (OP_CALLSTACK_KEY, OP_NAMESCOPE_KEY, OP_ROLE_KEY, OP_ROLE_VAR_KEY, Operator, OpRole)
from .program import Block, Program, change_hooks, current_name_scope, notify_changed, switch_name_scope
from .variable import Parameter, Variable
from ..ops import protos as _protos

__all__ = [
    "Program", "Block", "Variable", "Parameter", "Operator", "OpRole", "default_main_program",
    "default_startup_program", "program_guard", "name_scope", "switch_main_program",
    "switch_startup_program", "in_dygraph_mode", "unique_name", "VarDesc", "convert_np_dtype_to_dtype_",
    "grad_var_name", "GRAD_SUFFIX", "OpProtoHolder",
]

EMPTY_VAR_NAME = "@EMPTY@"
TEMP_VAR_NAME = "@TEMP@"
GRAD_VAR_SUFFIX = GRAD_SUFFIX      # Paddle's name constants (core.kGradVarSuffix() and friends)
ZERO_VAR_SUFFIX = "@ZERO"
CONTROL_DEP_VAR_PREFIX = "__control_var"




class OpProtoHolder:
    """Every op type's proto (its slots and attributes; see paddle_compat/ops/protos.py), as Paddle's op tests
    read them: OpProtoHolder.instance().get_op_proto("mul").inputs[0].name."""

    @classmethod
    def instance(cls):
        if not hasattr(cls, "_instance"):
            cls._instance = cls()
        return cls._instance

    def __init__(self):
        if hasattr(self.__class__, "_instance"):
            raise AssertionError("Please use `instance()` to get OpProtoHolder object!")
        self.op_proto_map = {t: _protos.get_proto(t) for t in _protos.proto_types()}

    def get_op_proto(self, type):
        proto = self.op_proto_map.get(type) or _protos.get_proto(type)
        if proto is None:
            raise ValueError("Operator \"%s\" has not been registered." % type)
        return proto

    def update_op_proto(self):
        """Protos of op types defined since (load_op_library's custom ops are not supported here)."""

    @staticmethod
    def generated_op_attr_names():
        return {name for name, _, _ in _protos.GENERATED_ATTRS}


_main_program_ = Program()
_startup_program_ = Program()


def default_main_program():
    return _main_program_


def default_startup_program():
    return _startup_program_


def switch_main_program(program):
    global _main_program_
    prev = _main_program_
    _main_program_ = program
    return prev


def switch_startup_program(program):
    global _startup_program_
    prev = _startup_program_
    _startup_program_ = program
    return prev


@contextlib.contextmanager
def program_guard(main_program, startup_program=None):
    if not isinstance(main_program, Program):
        raise TypeError("program_guard: main_program must be a Program, got %s" % type(main_program).__name__)
    if startup_program is not None and not isinstance(startup_program, Program):
        raise TypeError("program_guard: startup_program must be a Program, got %s"
                        % type(startup_program).__name__)
    main_program = switch_main_program(main_program)
    if startup_program is not None:
        startup_program = switch_startup_program(startup_program)
    try:
        yield
    finally:
        switch_main_program(main_program)
        if startup_program is not None:
            switch_startup_program(startup_program)


@contextlib.contextmanager
def name_scope(prefix=None):
    """Records a '/'-joined scope path in each op's op_namescope attribute (Paddle's name_scope: a prefix
    used twice at one level becomes prefix_1 the second time)."""
    if not prefix:      # Paddle asserts; an empty prefix adds no level here
        yield
        return
    old = switch_name_scope(current_name_scope().child(prefix))
    try:
        yield
    finally:
        switch_name_scope(old)


def in_dygraph_mode():
    return _eager.active()


def _current_expected_place():
    from .core import CPUPlace
    return CPUPlace()


def cuda_places(device_ids=None):
    """Paddle's rule: device_ids=None means FLAGS_selected_gpus (set per process by the launcher), else all."""
    import os
    from .core import CUDAPlace, get_cuda_device_count
    if device_ids is None:
        sel = os.environ.get("FLAGS_selected_gpus", "").strip()
        if sel:
            try:
                device_ids = [int(s) for s in sel.split(",") if s.strip()]
            except ValueError:
                raise ValueError("FLAGS_selected_gpus must be a comma-separated list of GPU ids, got %r" % sel)
        else:
            device_ids = range(get_cuda_device_count())
    return [CUDAPlace(i) for i in device_ids]


def cpu_places(device_count=None):
    import os
    from .core import CPUPlace
    if device_count is None:
        device_count = int(os.environ.get("CPU_NUM", "1"))
    return [CPUPlace() for _ in range(device_count)]


from .core import is_compiled_with_cuda  # noqa: E402,F401  (Paddle offers it here too)
from .framework_misc import (cuda_pinned_places, device_guard, get_flags, require_version,  # noqa: E402,F401
                             set_flags)
from .fluid_misc import ComplexVariable, load_op_library  # noqa: E402,F401  (Paddle has them here)
