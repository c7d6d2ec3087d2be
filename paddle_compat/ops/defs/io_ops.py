"""Program I/O ops: feed and fetch (the executor's own: no kernel runs them), save / load / save_combine /
load_combine (Paddle's save_op, load_op, ...) and the reader ops (operators/reader/). Kernels: backends/lowering/
kernels/io_ops.py and reader_ops.py."""

from ..registry import declare

# feed and fetch move data between the executor and the scope; nothing flows through them to differentiate
declare(["feed", "fetch"], differentiable=False, operator_base=True)
declare("save", inputs=("X",), outputs=(), lod_in=("X",), host="file")
declare("load", inputs=(), outputs=("Out",), lod_out=("Out",), host="file")
declare("save_combine", inputs=("X*",), outputs=(), host="file")
declare("load_combine", inputs=(), outputs=("Out*",), host="file")
declare("read", inputs=(), outputs=("Out*",), lod_out=("Out*",), host="reader", operator_base=True)
declare("create_double_buffer_reader", inputs=(), outputs=("Out",), host="reader", operator_base=True)
