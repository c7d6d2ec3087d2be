"""Data layers: declare what a run feeds."""

from ...ir import VarType, unique_name
from ..layer_helper import LayerHelper

__all__ = ["data", "py_reader", "create_py_reader_by_data", "read_file", "double_buffer"]


def data(name, shape, append_batch_size=True, dtype="float32", lod_level=0, type=VarType.LOD_TENSOR,
         stop_gradient=True):
    """A fed variable. Paddle's batch rule: unless a dim is None or negative, -1 is prepended.  As in Paddle,
    the executor does not check a feed's shape against it (fluid.data's variables are checked): programs
    feed e.g. [16, 1] into a variable declared [102, 1]."""
    if not isinstance(name, str):
        raise TypeError("data: name must be a str, got %r" % (name,))
    if not isinstance(shape, (list, tuple)):
        raise TypeError("data(%s): shape must be a list or tuple, got %r" % (name, shape))
    helper = LayerHelper("data", name=name)
    shape = list(shape)
    for i, d in enumerate(shape):
        if d is None:
            shape[i] = -1
            append_batch_size = False
        elif d < 0:
            append_batch_size = False
    if append_batch_size:
        shape = [-1] + shape
    return helper.create_global_variable(name=name, shape=shape, dtype=dtype, type=type,
                                         stop_gradient=stop_gradient, lod_level=lod_level, is_data=True,
                                         need_check_feed=False)


def py_reader(capacity, shapes, dtypes, lod_levels=None, name=None, use_double_buffer=True):
    """A reader variable feeding the program from Python (Paddle 1.x): `read_file(reader)` gives its data
    variables; `reader.decorate_paddle_reader(batched_reader)` or `reader.decorate_tensor_provider(fn)`
    sets the source; `reader.start()`, then run until fluid.core.EOFException, then `reader.reset()`.
    shapes include the batch dim (e.g. [(-1, 784), (-1, 1)])."""
    if len(shapes) != len(dtypes) or (lod_levels is not None and len(lod_levels) != len(shapes)):
        raise ValueError("py_reader: shapes, dtypes (and lod_levels) must have one entry per variable")
    lod_levels = list(lod_levels) if lod_levels is not None else [0] * len(shapes)
    prefix = name or unique_name.generate("py_reader")
    feed_vars = [data(name="%s_data_%d" % (prefix, i), shape=list(s), dtype=dt, lod_level=lv,
                      append_batch_size=False)
                 for i, (s, dt, lv) in enumerate(zip(shapes, dtypes, lod_levels))]
    return _reader_over(feed_vars, capacity, use_double_buffer)


def create_py_reader_by_data(capacity, feed_list, name=None, use_double_buffer=True):
    """A py_reader that fills existing data variables (feed_list, e.g. from fluid.data): the network uses
    them directly, or through read_file(reader)."""
    if not feed_list:
        raise ValueError("create_py_reader_by_data: feed_list must name the data variables to fill")
    return _reader_over(list(feed_list), capacity, use_double_buffer)


def double_buffer(reader, place=None, name=None):
    """Paddle's double-buffered reader wrapper; the loader behind py_reader already prefetches batches on a
    thread, so the reader is returned as is."""
    if getattr(reader, "_data_vars", None) is None:
        raise TypeError("double_buffer: expected a reader from py_reader/create_py_reader_by_data, got %r"
                        % (reader,))
    return reader


def _reader_over(feed_vars, capacity, use_double_buffer):
    from ..reader import PyReader
    loader = PyReader(feed_list=feed_vars, capacity=capacity, use_double_buffer=use_double_buffer, iterable=False)
    reader = loader._reader_var
    reader._loader, reader._data_vars = loader, feed_vars
    reader.start, reader.reset = loader.start, loader.reset
    reader.decorate_paddle_reader = reader.decorate_sample_list_generator = loader.set_sample_list_generator
    reader.decorate_tensor_provider = reader.decorate_batch_generator = loader.set_batch_generator
    reader.queue = loader.queue     # scripts log reader.queue.size()
    return reader


def read_file(reader):
    """The data variables of a py_reader (one Variable, or a list of them)."""
    feed_vars = getattr(reader, "_data_vars", None)
    if feed_vars is None:
        raise TypeError("read_file: expected the reader returned by fluid.layers.py_reader, got %r" % (reader,))
    return feed_vars[0] if len(feed_vars) == 1 else list(feed_vars)


# hand-built RPC programs: reachable as layers.io.X, as in Paddle (not in fluid.layers' namespace)
from .rpc import BlockGuardServ, ListenAndServ, Recv, Send  # noqa: E402,F401
