"""py_func, load, create_py_reader_by_data and double_buffer of Paddle 1.8's fluid.layers."""

from ..framework import Variable
from ..layer_helper import LayerHelper

__all__ = ["py_func", "load", "create_py_reader_by_data", "double_buffer"]


def _as_list(v, what):
    if v is None:
        return []
    if isinstance(v, Variable):
        return [v]
    if isinstance(v, (list, tuple)):
        return list(v)
    raise TypeError("py_func: %s must be a Variable or a list/tuple of Variables, got %r" % (what, type(v).__name__))


def py_func(func, x, out, backward_func=None, skip_vars_in_backward_input=None):
    """Runs `func` (Python) as an op; `out` variables must be created by the caller with their shapes."""
    from ...ops.defs.py_func_op import register_callable
    helper = LayerHelper("py_func")
    xs, outs = _as_list(x, "x"), _as_list(out, "out")
    for o in outs:
        if len(o.shape) == 0:
            raise ValueError("py_func: give the shape of output %s when creating it" % o.name)
    skip = set()
    if backward_func is not None and skip_vars_in_backward_input is not None:
        known = {v.name for v in xs + outs}
        for v in _as_list(skip_vars_in_backward_input, "skip_vars_in_backward_input"):
            if v.name not in known:
                raise ValueError("py_func: skip variable %s is not a forward input or output" % v.name)
            skip.add(v.name)
    helper.append_op(type="py_func", inputs={"X": xs}, outputs={"Out": outs},
                     attrs={"forward_callable_id": register_callable(_with_lod_tensors(func)),
                            "backward_callable_id": (register_callable(_with_lod_tensors(backward_func))
                                                     if backward_func else -1),
                            "backward_skip_vars": sorted(skip)})
    return out


def _with_lod_tensors(fn):
    """The op hands arrays over; Paddle's callables receive LoDTensors."""
    from ..core import LoDTensor

    def call(*arrays):
        args = []
        for a in arrays:
            t = LoDTensor()
            t.set(a)
            args.append(t)
        return fn(*args)
    return call


def load(out, file_path, load_as_fp16=None):
    """Loads `out` from a file written by the save op. Paddle 1.8's layer passes its output under a
    misspelt keyword (`output=`), so its op writes nothing; this one writes `out`."""
    helper = LayerHelper("load")
    attrs = {"file_path": file_path}
    if load_as_fp16 is not None:
        attrs["load_as_fp16"] = load_as_fp16
    helper.append_op(type="load", inputs={}, outputs={"Out": [out]}, attrs=attrs)


def create_py_reader_by_data(capacity, feed_list, name=None, use_double_buffer=True):
    """A py_reader over existing data variables (read_file(reader) gives them back)."""
    from ..reader import PyReader
    loader = PyReader(feed_list=list(feed_list), capacity=capacity, use_double_buffer=use_double_buffer,
                      iterable=False)
    reader = loader._reader_var
    reader._loader, reader._data_vars = loader, list(feed_list)
    reader.start, reader.reset = loader.start, loader.reset
    reader.decorate_paddle_reader = reader.decorate_sample_list_generator = loader.set_sample_list_generator
    reader.decorate_tensor_provider = reader.decorate_batch_generator = loader.set_batch_generator
    return reader


def double_buffer(reader, place=None, name=None):
    """The reader itself: readers here already prefetch on a background thread."""
    if getattr(reader, "_loader", None) is None:
        raise TypeError("double_buffer: expected a reader from py_reader or create_py_reader_by_data, got %r"
                        % (reader,))
    return reader
