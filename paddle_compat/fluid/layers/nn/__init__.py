"""Paddle's fluid.layers.nn, one module per concept: common (fc, embedding, conv2d, pool2d, batch_norm, dropout,
matmul, reshape, ...), conv (convolutions, pooling, normalization, resizing), vision (ROI and deformable
layers, random_crop, ...), shape_ops (slicing, scattering, cropping, padding), math (elementwise, reductions,
linear algebra), activation, random, sequence (CRF, chunk evaluation, CTC decoding, LoD), loss, features (CTR
feature layers) and python_func (py_func)."""

from . import activation, common, conv, features, loss, math, python_func, random, sequence, shape_ops, vision
from .activation import *  # noqa: F401,F403
from .common import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .features import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .math import *  # noqa: F401,F403
from .python_func import *  # noqa: F401,F403
from .random import *  # noqa: F401,F403
from .sequence import *  # noqa: F401,F403
from .shape_ops import *  # noqa: F401,F403
from .vision import *  # noqa: F401,F403

__all__ = (common.__all__ + conv.__all__ + vision.__all__ + shape_ops.__all__ + math.__all__ + activation.__all__
           + random.__all__ + sequence.__all__ + loss.__all__ + features.__all__ + python_func.__all__)
