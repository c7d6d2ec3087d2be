"""Program I/O ops: feed and fetch (the executor's own: no kernel runs them), save / load / save_combine /
load_combine (Paddle's save_op, load_op, ...) and the reader ops (operators/reader/). Kernels: backends/lowering/
kernels/io_ops.py and reader_ops.py."""

from ..registry import declare

# feed and fetch move data between the executor and the scope; nothing flows through them to differentiate
declare(["feed", "fetch"], differentiable=False)
declare("save", inputs=("X",), outputs=(), lod_in=("X",))
declare("load", inputs=(), outputs=("Out",), lod_out=("Out",))
declare("save_combine", inputs=("X*",), outputs=())
declare("load_combine", inputs=(), outputs=("Out*",))
declare("read", inputs=(), outputs=("Out*",), lod_out=("Out*",))
declare("create_double_buffer_reader", inputs=(), outputs=("Out",))
