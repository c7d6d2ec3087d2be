"""Op families defined in one place each (shapes, kernel, grad facts). Importing this package defines them.

To add an op: pick (or start) the family module here, write one `@defop(...)` kernel factory with its
infer_shape and gradient facts, add the module to the import below, and write the layer builder in
paddle_compat/fluid/layers/ with `helpers.append_defined` (no shape code there). See math_ext.py.
"""

from . import amp_ops, contrib_ops, crf_ops, math_ext, optimizer_ext, rnn_ops, seq_ext, seq_shape  # noqa: F401
from . import control_flow  # noqa: F401
