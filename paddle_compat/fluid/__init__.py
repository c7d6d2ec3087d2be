"""paddle_compat.fluid: Paddle Fluid 1.x's API. `import paddle_compat as fluid` gives the same names."""

from . import (backward, clip, compiler, core, data_feeder, executor, framework, initializer, io,  # noqa: F401
               layers, lod_tensor, metrics, nets, optimizer, param_attr, profiler, reader, regularizer,
               unique_name)
from .backward import append_backward, gradients
from .compiler import BuildStrategy, CompiledProgram, ExecutionStrategy
from .core import (CPUPlace, CUDAPinnedPlace, CUDAPlace, LoDTensor, LoDTensorArray, Scope,  # noqa: F401
                   is_compiled_with_cuda)
from .data_feeder import DataFeeder
from .executor import Executor, global_scope, scope_guard
from .framework import (ComplexVariable, Program, Variable, cpu_places, cuda_pinned_places,  # noqa: F401
                        cuda_places, default_main_program, default_startup_program, device_guard, get_flags,
                        in_dygraph_mode, load_op_library, name_scope, program_guard, require_version, set_flags)
from .initializer import force_init_on_cpu, init_on_cpu
from .lod_tensor import create_lod_tensor, create_random_int_lodtensor
from .parallel_executor import ParallelExecutor
from .param_attr import ParamAttr, WeightNormParamAttr
from . import transpiler  # noqa: E402
from .transpiler import DistributeTranspiler, DistributeTranspilerConfig, memory_optimize, release_memory
from . import contrib  # noqa: E402
from . import evaluator  # noqa: E402
from . import install_check  # noqa: E402
from .layers import learning_rate_scheduler as learning_rate_decay  # noqa: E402
from .transpiler import HashName, RoundRobin  # noqa: E402
from .io.state import load, save  # noqa: E402
from .data import data  # noqa: E402
from .input import embedding, one_hot  # noqa: E402
from .dygraph.mode import (VarBase, disable_dygraph, disable_imperative, enable_dygraph,  # noqa: E402,F401
                           enable_imperative)
from .data_feed_desc import DataFeedDesc  # noqa: E402
from . import average, communicator, dataset, device_worker, dygraph, incubate, log_helper, op  # noqa: E402,F401
from . import trainer_desc  # noqa: E402
from .trainer_desc import DistMultiTrainer, MultiTrainer, PipelineTrainer, TrainerDesc  # noqa: E402,F401
from .dataset import DatasetFactory, InMemoryDataset, QueueDataset  # noqa: E402,F401


Tensor = LoDTensor


__all__ = [
    "Program", "Variable", "default_main_program", "default_startup_program", "program_guard", "name_scope",
    "Executor", "global_scope", "scope_guard", "Scope", "CPUPlace", "CUDAPlace", "CUDAPinnedPlace",
    "LoDTensor", "Tensor", "create_lod_tensor", "create_random_int_lodtensor", "ParamAttr",
    "WeightNormParamAttr", "CompiledProgram", "BuildStrategy", "ExecutionStrategy", "ParallelExecutor",
    "DistributeTranspiler", "DistributeTranspilerConfig", "memory_optimize", "release_memory",
    "append_backward", "gradients", "cpu_places", "cuda_places", "in_dygraph_mode", "is_compiled_with_cuda",
    "data", "embedding", "force_init_on_cpu", "init_on_cpu",
    "layers", "optimizer", "initializer", "regularizer", "clip", "io", "backward", "unique_name",
    "framework", "executor", "core", "compiler", "transpiler", "param_attr", "metrics", "nets", "profiler",
    "DataFeeder", "reader", "contrib", "install_check", "cuda_pinned_places", "device_guard", "get_flags",
    "require_version", "set_flags", "learning_rate_decay", "HashName", "RoundRobin", "save", "load",
    "one_hot", "LoDTensorArray", "enable_dygraph", "disable_dygraph", "enable_imperative", "disable_imperative",
    "VarBase", "ComplexVariable", "load_op_library", "DataFeedDesc", "TrainerDesc", "MultiTrainer",
    "DistMultiTrainer", "PipelineTrainer",
]
