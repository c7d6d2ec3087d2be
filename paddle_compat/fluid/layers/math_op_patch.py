"""Variable operators (+ - * / ** unary -, comparisons) as Paddle's ops: scalars fold into `scale`,
Variables use elementwise_* with axis=-1."""

from ...ir import Variable, default_main_program, notify_changed, unique_name
from . import tensor


def _block(var):
    return default_main_program().current_block()


def _tmp(var, dtype=None, shape=None, stop_gradient=False):
    return _block(var).create_var(name=unique_name.generate("tmp"), dtype=dtype or var.dtype,
                                  shape=var.shape if shape is None else shape, lod_level=var.lod_level,
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
    out = _block(ref).create_var(name=unique_name.generate("tmp"), dtype=ref.dtype, shape=(1,),
                                 stop_gradient=True)
    _append(ref, "fill_constant", {}, {"Out": [out]},
            {"shape": [1], "dtype": int(ref.dtype), "value": float(value), "force_cpu": False})
    return out


def _binary(op_type, reverse=False, scalar_fn=None, out_bool=False):
    def method(self, other):
        if not isinstance(other, Variable):
            if scalar_fn is not None and isinstance(other, (int, float)) and not isinstance(other, bool):
                return scalar_fn(self, float(other))
            if not isinstance(other, (int, float)):
                return NotImplemented
            other = _const(self, other)
        x, y = (other, self) if reverse else (self, other)
        shape = x.shape if len(x.shape) >= len(y.shape) else y.shape
        out = _tmp(self, dtype="bool" if out_bool else None, shape=shape, stop_gradient=out_bool)
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
    V.__truediv__ = _binary("elementwise_div", scalar_fn=lambda v, s: _scale(v, 1.0 / s, 0.0))
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
    V.astype = lambda self, dtype: tensor.cast(self, dtype)   # Paddle patches astype here too
    from .getitem import patch
    patch()
