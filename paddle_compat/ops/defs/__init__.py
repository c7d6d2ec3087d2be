"""Op families defined in one place each (shapes, kernel, grad facts). Importing this package defines them.

To add an op: pick (or start) the family module here, write one `@defop(...)` kernel factory with its
infer_shape and gradient facts, add the module to the import below, and write the layer builder in
paddle_compat/fluid/layers/ with `helpers.append_defined` (no shape code there). See math_ext.py.
"""

from . import (abn_ops, amp_ops, beam_search, conv_pool_ops, contrib_ops, crf_ops, ctc_chunk_ops, index_ops,  # noqa: F401
               loss_more, math_ext, math_more, norm_resize_ops, py_func_op, random_misc_ops, rnn_ops,
               sampled_loss, seq_ext, seq_more, seq_shape, shape_ops)
from . import control_flow, cudnn_lstm_ops, lstmp_ops, rnn_flow  # noqa: F401
from . import contrib_more_ops, misc_ext_ops, norm_ext_ops, roi_ops  # noqa: F401
from . import activation_ops, init_ops, loss_ops, math_ops, metric_ops, nn_ops, sequence_ops  # noqa: F401
from . import detection_ops, pyramid_hash, retinanet_ops, tensor_ops  # noqa: F401
from . import cross_entropy2  # noqa: F401
from . import collective, distributed_ops, fused, io_ops, lookup_table, optimizers  # noqa: F401
