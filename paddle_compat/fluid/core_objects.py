"""fluid.core / fluid.executor objects beyond what Fluid scripts touch, which Paddle's own unit tests use:
ScopeVar's typed accessors (is_int, set_float, get_lod_tensor_array, ...), Scope._remove_from_pool,
core.__unittest_throw_exception__, executor._fetch_var and executor._as_lodtensor."""

import numpy as np

__all__ = ["ScopeVarAccessors", "ScopePool", "unittest_throw_exception", "fetch_var", "as_lodtensor",
           "set_feed_variable", "get_fetch_variable", "set_fuse_parameter_group_size",
           "set_fuse_parameter_memory_size"]


class ScopeVarAccessors:
    """Mixed into core.ScopeVar (its `value` slot holds what the variable holds)."""
    __slots__ = ()

    def is_int(self):
        return isinstance(self.value, int) and not isinstance(self.value, bool)

    def is_float(self):
        return isinstance(self.value, float)

    def set_float(self, v):
        self.value = float(v)

    def get_float(self):
        return float(self.value)

    def get_lod_tensor_array(self):
        from .core import LoDTensorArray
        if not isinstance(self.value, LoDTensorArray):
            self.value = LoDTensorArray(self.value or [])
        return self.value

    def get_fetch_list(self):
        """The list a fetch variable holds (Paddle's FetchList): fetched tensors, by column."""
        if not isinstance(self.value, list):
            self.value = []
        return self.value

    def is_type(self, name):
        """The holder's kind by Paddle's type names (LoDTensor, SelectedRows, LoDTensorArray)."""
        from .core import LoDTensorArray, SelectedRows
        kinds = {"LoDTensorArray": LoDTensorArray, "SelectedRows": SelectedRows}
        return isinstance(self.value, kinds[name]) if name in kinds else name == "LoDTensor"


class ScopePool:
    """Mixed into core.Scope: Paddle keeps every scope made from Python in a pool until it is removed."""

    def _remove_from_pool(self):
        if getattr(self, "_removed_from_pool", False):
            raise RuntimeError("Deleting a nonexistent scope is not allowed (this scope was already removed "
                               "from the pool)")
        self._removed_from_pool = True


def unittest_throw_exception():
    """core.__unittest_throw_exception__: Paddle's test of its error type."""
    from ..ops.enforce import EnforceNotMet
    raise EnforceNotMet("test exception")


def fetch_var(name, scope=None, return_numpy=True):
    """executor._fetch_var: a variable's value from `scope` (the global scope by default)."""
    from .core import global_scope
    from .framework import Variable
    name = name.name if isinstance(name, Variable) else name
    if not isinstance(name, str):
        raise TypeError("_fetch_var: name must be a str or a Variable, got %s" % type(name).__name__)
    scope = global_scope() if scope is None else scope
    var = scope.find_var(name)
    if var is None:
        raise ValueError("Cannot find %s in scope. Perhaps you need to make the variable persistable by using "
                         "var.persistable = True in your program." % name)
    tensor = var.get_tensor()
    if return_numpy:
        from .executor import as_numpy
        return as_numpy(tensor)
    return tensor


def as_lodtensor(data, place, dtype=None):
    """executor._as_lodtensor: a numpy array (or a Python scalar with its dtype) as a LoDTensor without LoD."""
    from .core import LoDTensor
    from .dtypes import convert_dtype, dtype_name
    if isinstance(data, list):
        raise RuntimeError("Some of your feed data hold LoD information. They can not be completely cast from a "
                           "list of Python ndarray to LoDTensor. Please convert data to LoDTensor directly before "
                           "feeding the data.")
    if not isinstance(data, np.ndarray) and np.isscalar(data):
        if dtype is None:
            raise AssertionError("dtype should be given when casting python scalar to tensor")
        data = np.array([data]).astype(dtype_name(convert_dtype(dtype)))
    t = LoDTensor()
    t.set(data, place)
    return t


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
    """core._set_fuse_parameter_group_size: FLAGS_fuse_parameter_groups_size (recorded; see framework_misc)."""
    from .framework_misc import core_globals
    core_globals()["FLAGS_fuse_parameter_groups_size"] = int(size)


def set_fuse_parameter_memory_size(size):
    """core._set_fuse_parameter_memory_size: FLAGS_fuse_parameter_memory_size in MB (recorded)."""
    from .framework_misc import core_globals
    core_globals()["FLAGS_fuse_parameter_memory_size"] = float(size)
