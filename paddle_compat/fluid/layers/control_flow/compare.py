"""Comparisons and increment (Paddle keeps them in fluid.layers.control_flow)."""

from ...layer_helper import LayerHelper
from ..utils import out_var

__all__ = ["less_than", "less_equal", "greater_than", "greater_equal", "equal", "not_equal", "increment"]


# comparison / logic (outputs are bool and carry no gradient) --------------------------------------------
def _compare(op_type):
    def layer(x, y, cond=None, name=None, force_cpu=None):
        helper = LayerHelper(op_type, name=name)
        if cond is None:
            cond = out_var(helper, "bool", stop_gradient=True)
        helper.append_op(type=op_type, inputs={"X": [x], "Y": [y]}, outputs={"Out": [cond]},
                         attrs={"axis": -1, "force_cpu": bool(force_cpu)})
        return cond

    layer.__name__ = op_type
    return layer


less_than = _compare("less_than")


less_equal = _compare("less_equal")


greater_than = _compare("greater_than")


greater_equal = _compare("greater_equal")


equal = _compare("equal")


not_equal = _compare("not_equal")


def increment(x, value=1.0, in_place=True):
    helper = LayerHelper("increment")
    out = x if in_place else out_var(helper, x.dtype)
    helper.append_op(type="increment", inputs={"X": [x]}, outputs={"Out": [out]}, attrs={"step": float(value)})
    return out
