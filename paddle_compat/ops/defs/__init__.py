"""Op families defined in one place each (shapes, kernel, grad facts). Importing this package defines them.

To add an op: pick (or start) the family module here, write one `@defop(...)` kernel factory with its
infer_shape and gradient facts, add the module to the import below, and write the layer builder in
paddle_compat/fluid/layers/ with `helpers.append_defined` (no shape code there). See math_ext.py.
"""

from . import math_ext  # noqa: F401
from . import math_more, index_ops, shape_ops, loss_more, conv_pool_ops, norm_resize_ops, random_misc_ops, py_func_op, abn_ops  # noqa: F401
