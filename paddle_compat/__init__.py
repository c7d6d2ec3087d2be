"""paddle_compat: PaddlePaddle Fluid 1.x training scripts on PyTorch.

`import paddle_compat as fluid` gives fluid's names; `paddle_compat.fluid` is the same package.
Importing this package loads neither torch nor torch.distributed.rpc nor mpi4py.
"""

from . import fluid  # noqa: F401
from .fluid import *  # noqa: F401,F403
from .fluid import (backward, clip, compiler, core, evaluator, executor, framework, initializer, io,  # noqa: F401
                    layers, metrics, nets, optimizer, param_attr, profiler, regularizer, transpiler, unique_name)
from .fluid import DatasetFactory, incubate  # noqa: F401  (fluid.DatasetFactory, fluid.incubate)
from .readers.decorator import batch  # noqa: F401  (paddle.batch, for scripts that used it)
from .fluid import __all__ as _fluid_all

__version__ = "0.1.0"
__all__ = list(_fluid_all) + ["fluid"]
