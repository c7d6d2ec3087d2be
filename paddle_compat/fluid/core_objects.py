"""fluid.core functions beyond what Fluid scripts call, which Paddle's own unit tests use: the feed / fetch
list accessors of a scope, the fuse-parameter flag setters and core.Graph."""

from ..ir.flags import core_globals
from ..ir.program import ProgramDesc

__all__ = ["set_feed_variable", "get_fetch_variable", "set_fuse_parameter_group_size",
           "set_fuse_parameter_memory_size", "Graph"]


def set_feed_variable(scope, tensor, var_name, index):
    """core.set_feed_variable: put `tensor` at column `index` of the feed list `var_name` in `scope`."""
    var = scope.var(var_name)
    if not isinstance(var.value, list):
        var.value = []
    while len(var.value) <= index:
        var.value.append(None)
    var.value[index] = tensor


def get_fetch_variable(scope, var_name, index):
    """core.get_fetch_variable: column `index` of the fetch list `var_name` in `scope`."""
    var = scope.find_var(var_name)
    if var is None or not isinstance(var.value, list):
        raise ValueError("get_fetch_variable: %s is not a fetch list in the scope" % var_name)
    if index >= len(var.value):
        raise IndexError("get_fetch_variable: %s holds %d fetched values, no column %d"
                         % (var_name, len(var.value), index))
    return var.value[index]


def set_fuse_parameter_group_size(size):
    """core._set_fuse_parameter_group_size: FLAGS_fuse_parameter_groups_size (recorded; see ir/flags.py)."""
    core_globals()["FLAGS_fuse_parameter_groups_size"] = int(size)


def set_fuse_parameter_memory_size(size):
    """core._set_fuse_parameter_memory_size: FLAGS_fuse_parameter_memory_size in MB (recorded)."""
    core_globals()["FLAGS_fuse_parameter_memory_size"] = float(size)


class Graph:
    """core.Graph(program_desc): Paddle's SSA graph of a ProgramDesc. Here it keeps the program it was made
    from; CompiledProgram(graph) runs that program (no graph passes exist here: torch runs the program)."""

    def __init__(self, program_desc, start_op_index=0, end_op_index=None):
        if not isinstance(program_desc, ProgramDesc):
            raise TypeError("core.Graph takes a core.ProgramDesc, got %s" % type(program_desc).__name__)
        if start_op_index or end_op_index is not None:
            raise NotImplementedError("core.Graph: a graph of part of a program (start/end op index) is not "
                                      "supported; build it from the whole ProgramDesc")
        self._desc = program_desc

    @property
    def _source_program(self):
        return self._desc.program

    def origin_program_desc(self):
        return self._desc
