"""Paddle's fluid.layers.io: data, py_reader, double_buffer, read_file, load, and the hand-built pserver programs
(ListenAndServ, Send, Recv)."""

from ...ir import LoDTensor, OP_ROLE_KEY, OpRole, VarType, Variable, unique_name
from ..layer_helper import LayerHelper
from ..reader import PyReader

# Paddle's __all__: ListenAndServ, BlockGuardServ, Send and Recv are reached as fluid.layers.io.X only
__all__ = ["data", "py_reader", "create_py_reader_by_data", "double_buffer", "read_file", "load"]


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
    loader = PyReader(feed_list=feed_vars, capacity=capacity, use_double_buffer=use_double_buffer, iterable=False)
    reader = loader._reader_var
    reader._loader, reader._data_vars = loader, feed_vars
    reader.reset = loader.reset

    def start():
        loader.start()
        # Paddle's py_reader feeds its queue from `reader.thread`, which scripts join after the pass
        reader.thread = loader._feeding_thread()
    reader.start = start
    reader.decorate_paddle_reader = reader.decorate_sample_list_generator = loader.set_sample_list_generator
    reader.decorate_tensor_provider = reader.decorate_batch_generator = loader.set_batch_generator
    reader.queue = loader.queue     # scripts log reader.queue.size(), or push batches into it
    return reader


def read_file(reader):
    """The data variables of a py_reader (one Variable, or a list of them)."""
    feed_vars = getattr(reader, "_data_vars", None)
    if feed_vars is None:
        raise TypeError("read_file: expected the reader returned by fluid.layers.py_reader, got %r" % (reader,))
    return feed_vars[0] if len(feed_vars) == 1 else list(feed_vars)


def _with_lod_tensors(fn):
    """The op hands arrays over; Paddle's callables receive LoDTensors."""

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


_SYNC = 0    # Paddle's DistributedMode.SYNC: the only mode these layers build


class ListenAndServ:
    """A server listening on `endpoint` ("ip:port"; port 0 picks a free port, written to
    /tmp/paddle.<pid>.port once the server accepts clients, as Paddle does). `with serv.do():` records
    the block run each time all `fan_in` clients have sent their variables (`inputs`: the names they send).
    optimizer_mode is recorded for compatibility; the block runs whatever ops it holds either way."""

    def __init__(self, endpoint, inputs, fan_in=1, optimizer_mode=True):
        if not isinstance(endpoint, str) or ":" not in endpoint:
            raise ValueError("ListenAndServ: endpoint must be 'ip:port', got %r" % (endpoint,))
        if int(fan_in) < 1:
            raise ValueError("ListenAndServ: fan_in must be at least 1, got %r" % (fan_in,))
        self.helper = LayerHelper("listen_and_serv")
        self.inputs = list(inputs)
        self.outputs = []
        self.endpoint = endpoint
        self.fan_in = int(fan_in)
        self.optimizer_mode = optimizer_mode

    def do(self):
        return BlockGuardServ(self)

    def parent_block(self):
        prog = self.helper.main_program
        parent_idx = prog.current_block().parent_idx
        if parent_idx < 0:
            raise RuntimeError("ListenAndServ.parent_block() is only defined inside `with serv.do():`")
        return prog.block(parent_idx)

    def get_params_and_grads(self):
        """(params, grads) of the block being built: Param/Grad inputs of optimizer ops (optimizer_mode),
        else every input of every op (as Paddle's simple receive mode)."""
        block = self.helper.main_program.current_block()
        params, grads = [], []
        for op in block.ops:
            if self.optimizer_mode:
                if "Grad" in op.input_names and "Param" in op.input_names:
                    params.append(op.input("Param")[0])
                    grads.append(op.input("Grad")[0])
            else:
                parent = self.parent_block()
                for n in op.input_arg_names:
                    params.append(parent.var(n))
                    grads.append(parent.var(n))
        return params, grads

    def complete_op(self):
        block = self.helper.main_program.current_block()
        self.parent_block().append_op(
            type="listen_and_serv", inputs={"X": self.inputs}, outputs={},
            attrs={"endpoint": self.endpoint, "Fanin": self.fan_in, "optimize_blocks": [block],
                   "distributed_mode": _SYNC, "grad_to_block_id": [""]})


class BlockGuardServ:
    """`with serv.do():` ops go into a new sub-block; leaving it appends the listen_and_serv op."""

    def __init__(self, server):
        if not isinstance(server, ListenAndServ):
            raise TypeError("BlockGuardServ takes a ListenAndServ, got %s" % type(server).__name__)
        self.server = server
        self.program = server.helper.main_program

    def __enter__(self):
        self.program._create_block()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        try:
            if exc_type is None:
                self.server.complete_op()
        finally:
            self.program._rollback()
        return False


def _endpoints(endpoints, what):
    if not isinstance(endpoints, str) or not endpoints:
        raise ValueError("%s: endpoints must be a comma separated 'ip:port' string, got %r" % (what, endpoints))
    epmap = endpoints.split(",")
    return epmap, sorted(set(epmap), key=epmap.index)


def _var_list(v, arg, what):
    if v is None:
        return []
    if isinstance(v, Variable):
        return [v]
    if not isinstance(v, list):
        raise TypeError("%s: %s must be a list of Variables, got %s" % (what, arg, type(v).__name__))
    return v


def Send(endpoints, send_vars, dummy_output=None, sync=True):
    """Send `send_vars` to the server(s) (endpoints: one "ip:port" per variable, comma separated, or one
    for all); with sync, a send_barrier follows: the server runs its block once every client's barrier
    is in."""
    send_vars = _var_list(send_vars, "send_vars", "Send")
    dummy_output = _var_list(dummy_output, "dummy_output", "Send")
    epmap, eps = _endpoints(endpoints, "Send")
    helper = LayerHelper("Send")
    # (Paddle's send and recv ops keep only epmap: their op protos declare no `endpoints`)
    helper.append_op(type="send", inputs={"X": send_vars}, outputs={"Out": dummy_output},
                     attrs={"epmap": epmap, OP_ROLE_KEY: OpRole.RPC})
    if sync:
        helper.append_op(type="send_barrier", inputs={"X": dummy_output}, outputs={"Out": []},
                         attrs={"endpoints": eps})


def Recv(endpoints, get_vars, dummy_input=None, sync=True):
    """Fetch `get_vars` (by name) from the server(s) after the server ran its block on what this client
    sent; returns get_vars."""
    get_vars = _var_list(get_vars, "get_vars", "Recv")
    dummy_input = _var_list(dummy_input, "dummy_input", "Recv")
    epmap, eps = _endpoints(endpoints, "Recv")
    helper = LayerHelper("Recv")
    helper.append_op(type="recv", inputs={"X": dummy_input}, outputs={"Out": get_vars}, attrs={"epmap": epmap})
    if sync:
        helper.append_op(type="fetch_barrier", outputs={"Out": get_vars}, attrs={"endpoints": eps})
    return get_vars
