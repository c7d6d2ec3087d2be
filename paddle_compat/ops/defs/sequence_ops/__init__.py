"""Sequence ops on LoD input (Paddle's operators/sequence_ops/, with row_conv, im2sequence and cos_sim, which
fluid.layers keeps beside them). Index arithmetic over all rows at once, never a loop over sequences.

  pool.py   sequence_pool, sequence_softmax, sequence_concat, sequence_expand
  pad.py    sequence_pad / sequence_unpad, sequence_reverse, sequence_expand_as, sequence_mask
  slice.py  sequence_slice, sequence_reshape, sequence_scatter, sequence_enumerate, row_conv, im2sequence
  conv.py   sequence_conv, cos_sim
"""

from . import conv, pad, pool, slice  # noqa: F401
