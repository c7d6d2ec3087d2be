"""WeightNormParamAttr: a weight w = g * v / ||v|| (Salimans & Kingma), built as Paddle 1.8.5 builds it.

Two parameters, `<name>_g` (norms: shape [1]*rank, or the size of dim `dim` there) and `<name>_v` (the
direction, with the attr's initializer). The startup program initialises v and sets g to v's norm over every
dim but `dim` (so w starts equal to v); the main program computes w from g and v with the same norm ops (abs,
pow, reduce_sum, pow; reshape/transpose to bring `dim` first or last), elementwise_div and elementwise_mul.
"""

import copy

from ..ir import VarType, unique_name

__all__ = ["weight_normalized_parameter"]


def _tmp(helper, block, dtype, what):
    return block.create_var(name=unique_name.generate_with_ignorable_key(".".join([helper.name, what])),
                            dtype=dtype, persistable=False)


def _norm(helper, block, dtype, x, out=None, p=2, dim=None, keep_dim=False):
    out = out if out is not None else _tmp(helper, block, dtype, "weight_norm_norm")
    absx = _tmp(helper, block, dtype, "weight_norm_abs")
    block.append_op(type="abs", inputs={"X": [x]}, outputs={"Out": [absx]})
    powx = _tmp(helper, block, dtype, "weight_norm_pow")
    block.append_op(type="pow", inputs={"X": [absx]}, outputs={"Out": [powx]}, attrs={"factor": float(p)})
    total = _tmp(helper, block, dtype, "weight_norm_sum")
    block.append_op(type="reduce_sum", inputs={"X": [powx]}, outputs={"Out": [total]},
                    attrs={"dim": dim if dim is not None else [0], "keep_dim": keep_dim,
                           "reduce_all": dim is None})
    block.append_op(type="pow", inputs={"X": [total]}, outputs={"Out": [out]}, attrs={"factor": 1.0 / p})
    return out


def _reshape(helper, block, dtype, x, shape, out=None):
    out = out if out is not None else _tmp(helper, block, dtype, "weight_norm_reshape")
    block.append_op(type="reshape", inputs={"X": [x]}, outputs={"Out": [out]}, attrs={"shape": list(shape)})
    return out


def _transpose(helper, block, dtype, x, axis, out=None):
    out = out if out is not None else _tmp(helper, block, dtype, "weight_norm_transpose")
    block.append_op(type="transpose", inputs={"X": [x]}, outputs={"Out": [out]}, attrs={"axis": list(axis)})
    return out


def _norm_except_dim(helper, block, dtype, x, out=None, dim=None):
    """The 2-norm of x over every dim but `dim` (all of them with dim None), shaped to broadcast against x."""
    out = out if out is not None else _tmp(helper, block, dtype, "weight_norm_norm")
    rank = len(x.shape)
    if dim is None:
        return _norm(helper, block, dtype, x, out)
    if dim == 0:
        flat = _reshape(helper, block, dtype, x, [x.shape[0], -1])
        norm = _norm(helper, block, dtype, flat, dim=[1])
        return _reshape(helper, block, dtype, norm, [x.shape[0]] + [1] * (rank - 1), out=out)
    if dim == rank - 1:
        flat = _reshape(helper, block, dtype, x, [-1, x.shape[-1]])
        norm = _norm(helper, block, dtype, flat, dim=[0])
        return _reshape(helper, block, dtype, norm, [1] * (rank - 1) + [x.shape[-1]], out=out)
    perm = list(range(rank))
    perm[0], perm[dim] = dim, 0
    moved = _transpose(helper, block, dtype, x, perm)
    flat = _reshape(helper, block, dtype, moved, [x.shape[dim], -1])
    norm = _norm(helper, block, dtype, flat, dim=[1])
    back = _reshape(helper, block, dtype, norm, [x.shape[dim]] + [1] * (rank - 1))
    return _transpose(helper, block, dtype, back, perm, out=out)


def weight_normalized_parameter(helper, attr, shape, dtype):
    """The variable w of a WeightNormParamAttr parameter (attr has its name and initializer set)."""
    from .layers.nn.math import elementwise_div, elementwise_mul   # (fluid.layers imports this module's caller)
    from .layers.nn.common import reshape   # (same cycle: fluid.layers -> layer_helper -> here)
    dim = attr.dim
    if dim is not None and not -len(shape) <= dim < len(shape):
        raise ValueError("WeightNormParamAttr: dim %d is out of range for a %d-D weight" % (dim, len(shape)))
    if dim is not None and dim < 0:
        dim += len(shape)
    g_attr, v_attr = copy.deepcopy(attr), copy.deepcopy(attr)
    g_attr.name, v_attr.name = attr.name + "_g", attr.name + "_v"
    g_shape = [1] * len(shape)
    if dim is not None:
        g_shape[dim] = shape[dim]
    sb = helper.startup_program.global_block()
    g = sb.create_parameter(dtype=dtype, shape=g_shape, type=VarType.LOD_TENSOR,
                            **g_attr._to_kwargs(with_initializer=False))
    v = sb.create_parameter(dtype=dtype, shape=list(shape), type=VarType.LOD_TENSOR,
                            **v_attr._to_kwargs(with_initializer=True))
    # Paddle writes the norm into g and then reshapes g in place; the norm goes through a temporary here, as
    # a variable's declared shape ([1, 1]) must hold what its op writes ([1] from a full reduction)
    norm = _norm_except_dim(helper, sb, dtype, v, dim=dim)
    _reshape(helper, sb, dtype, norm, g_shape, out=g)
    mb = helper.main_program.global_block()
    g = mb.create_parameter(dtype=dtype, shape=g_shape, type=VarType.LOD_TENSOR, **g_attr._to_kwargs())
    v = mb.create_parameter(dtype=dtype, shape=list(shape), type=VarType.LOD_TENSOR, **v_attr._to_kwargs())
    norm = _norm_except_dim(helper, helper.main_program.current_block(), dtype, v, dim=dim)
    scale = elementwise_div(x=g, y=norm)
    return elementwise_mul(x=v, y=scale if dim is None else reshape(x=scale, shape=[v.shape[dim]]),
                           axis=-1 if dim is None else dim)
