"""Variable.__getitem__ as Paddle 1.8 builds it: x[0], x[:, 1], x[1:3], layers.shape(x)[0], x[::2].

Integer indices and step-1 slices become one `slice` op (integers listed in decrease_axis, which drops those
dims; dropping every dim leaves shape [1], as in Paddle); any other step makes it a `strided_slice` op.
"""

from ...ir import Variable, default_main_program, notify_changed, unique_name

__all__ = ["variable_getitem"]

_BIG = 10000000   # Paddle's "to the end" bound


def _out_len(d, s, e, st):
    if d < 0:
        return -1
    return len(range(*slice(s, e, st).indices(d)))


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
    shape = list(var.shape)
    for a, s, e, st in zip(axes, starts, ends, steps):
        shape[a] = _out_len(shape[a], s, e, st)
    shape = [d for i, d in enumerate(shape) if i not in decrease] or [1]
    strided = any(st != 1 for st in steps)
    attrs = {"axes": axes, "starts": starts, "ends": ends, "decrease_axis": decrease,
             "infer_flags": [1] * len(axes)}
    if strided:
        attrs["strides"] = steps
    # Paddle appends the slice to the block that holds var, not the current one: x[i] of an outer variable
    # inside a StaticRNN step is computed once, outside it (basic_lstm's initial states rely on this)
    block = var.block
    out = block.create_var(name=unique_name.generate("%s_%s" % (var.name, "strided_slice" if strided else "slice")),
                           dtype=var.dtype, shape=shape, lod_level=var.lod_level, stop_gradient=var.stop_gradient)
    op_type = "strided_slice" if strided else "slice"
    block.append_op(type=op_type, inputs={"Input": [var]}, outputs={"Out": [out]}, attrs=attrs)
    notify_changed(default_main_program(), op_type)
    return out


def patch():
    Variable.__getitem__ = variable_getitem
