"""Variable's operators (+, -, *, /, comparisons, astype, [] indexing) as Paddle 1.8 records them."""

from ...ir import VarType, Variable, default_main_program, notify_changed, unique_name
from .tensor import cast

__all__ = ["variable_getitem"]


_BIG = 10000000   # Paddle's "to the end" bound


def variable_getitem(var, item):
    items = item if isinstance(item, tuple) else (item,)
    if len(items) > len(var.shape):
        raise IndexError("too many indices for variable %s of shape %s: %r" % (var.name, list(var.shape), item))
    axes, starts, ends, steps, decrease = [], [], [], [], []
    for dim, it in enumerate(items):
        if isinstance(it, slice):
            if it.start is None and it.stop is None and it.step in (None, 1):
                continue
            st = 1 if it.step is None else it.step
            if not isinstance(st, int) or st == 0:
                raise ValueError("variable %s: slice step must be a non-zero int, got %r" % (var.name, it.step))
            s = it.start if it.start is not None else (0 if st > 0 else -1)
            e = it.stop if it.stop is not None else (_BIG if st > 0 else -_BIG - 1)
        elif isinstance(it, int) and not isinstance(it, bool):
            d = var.shape[dim]
            if d >= 0 and not -d <= it < d:
                raise IndexError("index %d is out of range for dim %d (size %d) of variable %s"
                                 % (it, dim, d, var.name))
            s, e, st = it, (it + 1 if it != -1 else _BIG), 1
            decrease.append(dim)
        else:
            raise TypeError("variable %s: only ints and slices index a Variable (Paddle 1.8 static mode), got %r"
                            % (var.name, it))
        for v in (s, e):
            if not isinstance(v, int):
                raise TypeError("variable %s: slice bounds must be ints, got %r" % (var.name, v))
        axes.append(dim)
        starts.append(s)
        ends.append(e)
        steps.append(st)
    if not axes:
        return var
    strided = any(st != 1 for st in steps)
    attrs = {"axes": axes, "starts": starts, "ends": ends, "decrease_axis": decrease,
             "infer_flags": [1] * len(axes)}
    if strided:
        attrs["strides"] = steps
    # Paddle appends the slice to the block that holds var, not the current one: x[i] of an outer variable
    # inside a StaticRNN step is computed once, outside it (basic_lstm's initial states rely on this)
    block = var.block
    out = block.create_var(name=unique_name.generate("%s_%s" % (var.name, "strided_slice" if strided else "slice")),
                           dtype=var.dtype, lod_level=var.lod_level, stop_gradient=var.stop_gradient)
    op_type = "strided_slice" if strided else "slice"
    block.append_op(type=op_type, inputs={"Input": [var]}, outputs={"Out": [out]}, attrs=attrs)
    notify_changed(default_main_program(), op_type)
    return out


def patch():
    Variable.__getitem__ = variable_getitem


def _block(var):
    return default_main_program().current_block()


def _tmp(var, dtype=None, stop_gradient=False):
    """An op's output; its shape is the op's infer_shape's (Block.append_op)."""
    return _block(var).create_var(name=unique_name.generate("tmp"), dtype=dtype or var.dtype, lod_level=var.lod_level,
                                  stop_gradient=stop_gradient)


def _append(var, type, inputs, outputs, attrs=None):
    op = _block(var).append_op(type=type, inputs=inputs, outputs=outputs, attrs=attrs or {})
    notify_changed(default_main_program(), type)
    return op


def _scale(var, scale=1.0, bias=0.0):
    out = _tmp(var)
    _append(var, "scale", {"X": [var]}, {"Out": [out]},
            {"scale": float(scale), "bias": float(bias), "bias_after_scale": True})
    return out


def _const(ref, value):
    out = _block(ref).create_var(name=unique_name.generate("tmp"), dtype=ref.dtype, stop_gradient=True)
    _append(ref, "fill_constant", {}, {"Out": [out]},
            {"shape": [1], "dtype": int(ref.dtype), "value": float(value), "force_cpu": False})
    return out


_INT_DTYPES = (VarType.UINT8, VarType.INT8, VarType.INT16, VarType.INT32, VarType.INT64)


def _binary(op_type, reverse=False, scalar_fn=None, out_bool=False, scalar_fn_if=None):
    def method(self, other):
        if not isinstance(other, Variable):
            if (scalar_fn is not None and isinstance(other, (int, float)) and not isinstance(other, bool)
                    and (scalar_fn_if is None or scalar_fn_if(self))):
                return scalar_fn(self, float(other))
            if not isinstance(other, (int, float)):
                return NotImplemented
            other = _const(self, other)
        x, y = (other, self) if reverse else (self, other)
        out = _tmp(self, dtype="bool" if out_bool else None, stop_gradient=out_bool)
        _append(self, op_type, {"X": [x], "Y": [y]}, {"Out": [out]}, {"axis": -1})
        return out

    return method


def monkey_patch_variable():
    V = Variable
    V.__add__ = _binary("elementwise_add", scalar_fn=lambda v, s: _scale(v, 1.0, s))
    V.__radd__ = _binary("elementwise_add", True, scalar_fn=lambda v, s: _scale(v, 1.0, s))
    V.__sub__ = _binary("elementwise_sub", scalar_fn=lambda v, s: _scale(v, 1.0, -s))
    V.__rsub__ = _binary("elementwise_sub", True, scalar_fn=lambda v, s: _scale(v, -1.0, s))
    V.__mul__ = _binary("elementwise_mul", scalar_fn=lambda v, s: _scale(v, s, 0.0))
    V.__rmul__ = _binary("elementwise_mul", True, scalar_fn=lambda v, s: _scale(v, s, 0.0))
    # an integer Variable / scalar stays an integer division (elementwise_div by a constant), as in Paddle 1.8
    V.__truediv__ = _binary("elementwise_div", scalar_fn=lambda v, s: _scale(v, 1.0 / s, 0.0),
                            scalar_fn_if=lambda v: v.dtype not in _INT_DTYPES)
    V.__div__ = V.__truediv__
    V.__rtruediv__ = _binary("elementwise_div", True)
    V.__rdiv__ = V.__rtruediv__
    V.__pow__ = _binary("elementwise_pow")
    V.__rpow__ = _binary("elementwise_pow", True)
    V.__floordiv__ = _binary("elementwise_floordiv")
    V.__mod__ = _binary("elementwise_mod")
    V.__neg__ = lambda self: _scale(self, -1.0, 0.0)
    V.__lt__ = _binary("less_than", out_bool=True)
    V.__le__ = _binary("less_equal", out_bool=True)
    V.__gt__ = _binary("greater_than", out_bool=True)
    V.__ge__ = _binary("greater_equal", out_bool=True)
    V.__eq__ = _binary("equal", out_bool=True)
    V.__ne__ = _binary("not_equal", out_bool=True)
    V.__hash__ = object.__hash__
    V.astype = lambda self, dtype: cast(self, dtype)   # Paddle patches astype here too
    patch()
