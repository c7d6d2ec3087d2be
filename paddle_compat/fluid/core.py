"""Paddle's fluid.core: the runtime holders (places, Scope, LoDTensor, LoDTensorArray, SelectedRows), the
desc-level views and the op-role names, all from paddle_compat.ir, Paddle's inference API (fluid.inference) and
the op-registry queries and scope accessors Paddle's own unit tests use, under the module path scripts import
them from."""

from ..ir.block import BlockDesc  # noqa: F401
from ..ir.errors import EnforceNotMet, EOFException  # noqa: F401
from ..ir.errors import unittest_throw_exception as __unittest_throw_exception__  # noqa: F401
from ..ir.flags import _set_eager_deletion_mode  # noqa: F401
from ..ir.flags import core_globals as globals  # noqa: F401,A001  (Paddle's name)
from ..ir.operator import OpDesc  # noqa: F401
from ..ir.places import (CPUPlace, CUDAPinnedPlace, CUDAPlace, Place, get_cuda_device_count,  # noqa: F401
                         is_compiled_with_cuda)
from ..ir.program import ProgramDesc  # noqa: F401
from ..ir.proto_desc import AttrType  # noqa: F401
from ..ir.roles import op_proto_and_checker_maker  # noqa: F401
from ..ir.scope import Scope, _switch_scope  # noqa: F401
from ..ir.tensor import LoDTensor, LoDTensorArray, SelectedRows  # noqa: F401
from ..ir.variable import VarDesc  # noqa: F401
from .dygraph.mode import VarBase  # noqa: F401
from .inference import (AnalysisConfig, AnalysisPredictor, NativeConfig, NativePaddlePredictor,  # noqa: F401
                        PaddleBuf, PaddleDType, PaddlePlace, PaddlePredictor, PaddleTensor, ZeroCopyTensor,
                        create_paddle_predictor)
from .core_executor import Executor  # noqa: F401
from .dataset.core_dataset import Dataset, Fleet  # noqa: F401
from .core_objects import Graph, get_fetch_variable, set_feed_variable  # noqa: F401
from .core_objects import set_fuse_parameter_group_size as _set_fuse_parameter_group_size  # noqa: F401
from .core_objects import set_fuse_parameter_memory_size as _set_fuse_parameter_memory_size  # noqa: F401
from .core_registry import (_get_all_register_op_kernels, get_grad_op_desc, has_grad_op_maker,  # noqa: F401
                            has_infer_inplace, is_float16_supported, op_support_gpu)
