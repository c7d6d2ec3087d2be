"""fluid.op.Operator: build one op and run it on a Scope, the way Paddle's op unit tests drive operators.

    op = Operator("sum", X=["x0", "x1"], Out="out")
    op.run(scope, place)

Paddle tells inputs from outputs with the op's C++ proto. Here the rule is the test's own setup: a slot
whose variables all hold a value in the scope when run() is called is an input; the others are outputs.
"""

import numpy as np

__all__ = ["Operator"]


def _names(v):
    return [v] if isinstance(v, str) else list(v)


def _is_slot(key, value):
    # Paddle's slot names are CamelCase ("X", "Out", "Param"); attrs are snake_case ("scale", "use_mkldnn")
    return key[:1].isupper() and (isinstance(value, str) or
                                  (isinstance(value, (list, tuple)) and value and
                                   all(isinstance(x, str) for x in value)))


class Operator:
    def __init__(self, type, **kwargs):
        if not isinstance(type, str) or not type:
            raise ValueError("Operator needs an op type name, got %r" % (type,))
        self._type = type
        self._slots = {k: _names(v) for k, v in kwargs.items() if _is_slot(k, v)}
        self._attrs = {k: v for k, v in kwargs.items() if k not in self._slots}

    def type(self):
        return self._type

    def attr(self, name):
        return self._attrs[name]

    def run(self, scope, place):
        from .executor import Executor
        from .framework import Program, program_guard

        def has_value(n):
            v = scope.find_var(n)
            if v is None:
                return False
            try:
                return np.array(v.get_tensor()).size > 0 or v.get_tensor().shape() != []
            except Exception:
                return False

        inputs = {k: v for k, v in self._slots.items() if all(has_value(n) for n in v)}
        outputs = {k: v for k, v in self._slots.items() if k not in inputs}
        if not outputs:
            raise ValueError("Operator(%r).run: every slot (%s) already holds a value in the scope, so none "
                             "is an output; create outputs with scope.var(name) only"
                             % (self._type, ", ".join(self._slots)))
        prog, startup = Program(), Program()
        with program_guard(prog, startup):
            block = prog.global_block()
            for slot_vars in inputs.values():
                for n in slot_vars:
                    arr = np.array(scope.find_var(n).get_tensor())
                    block.create_var(name=n, shape=list(arr.shape), dtype=str(arr.dtype), persistable=True)
            for slot_vars in outputs.values():
                for n in slot_vars:
                    if not block.has_var(n):
                        block.create_var(name=n, dtype="float32", persistable=True)
            block.append_op(type=self._type, inputs=inputs, outputs=outputs, attrs=dict(self._attrs))
        Executor(place).run(prog, scope=scope)
