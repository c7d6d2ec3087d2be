"""The base of Paddle's desc-level API (fluid.core.ProgramDesc, BlockDesc, OpDesc, VarDesc) as views of our Program,
Block, Operator and Variable: `program.desc`, `block.desc`, `op.desc` and `var.desc` are these, and a
`core.ProgramDesc()` built by hand is a view of a new Program.  A change made through a view is a change of
the program (Paddle keeps a C++ desc and a Python object in step with `_sync_with_cpp`; here there is one).

Two views of the same object are equal and hash alike (Paddle's tests compare `block.op(i)` with what
`append_op()` returned).
"""

__all__ = ["View"]


def text(name):
    return name.decode() if isinstance(name, bytes) else name


class View:
    __slots__ = ("_obj",)

    def __init__(self, obj):
        self._obj = obj

    def __eq__(self, other):
        return type(other) is type(self) and other._obj is self._obj

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash((type(self).__name__, id(self._obj)))
