"""Every op type, declared once, in modules named after Paddle's op families. Importing this package declares
them (the registry loads it on its first question).

To add an op, see docs/internals.md ("Adding an op"); abn_ops.py is the one to copy: a declaration with its
slots, infer_shape and gradient facts over its kernel factory, in one `@defop`.
"""

from . import (abn_ops, activation_ops, amp_ops, beam_search, collective, contrib_ops, control_flow,  # noqa: F401
               conv_pool_ops, crf_ops, ctc_chunk_ops, cudnn_lstm_ops, detection_map, detection_ops, distributed_ops,
               fused, index_ops, init_ops, io_ops, lookup_table, loss_ops, lstmp_ops, math_ops, metric_ops, nn_ops,
               norm_resize_ops, optimizers, py_func_op, pyramid_hash, retinanet_ops, rnn_flow, rnn_ops, roi_ops,
               sampled_loss, sequence_ops, shape_ops, tensor_ops)
