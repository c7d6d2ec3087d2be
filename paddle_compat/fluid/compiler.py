"""CompiledProgram, BuildStrategy, ExecutionStrategy (Paddle's fields and defaults).

In one process on one place a data-parallel CompiledProgram runs its program as is; several places or
trainers go to the data-parallel runner of the collective backend.
"""

from ..ir import CUDAPlace, OP_ROLE_KEY, OpRole, Program, cpu_places, cuda_places
from .compiler_compile import CompileChecks
from .core_objects import Graph
from .transpiler.batch_merge import merge_batches
from .inference import AnalysisConfig, NativeConfig, create_paddle_predictor

__all__ = ["CompiledProgram", "BuildStrategy", "ExecutionStrategy"]


class _Enum:
    pass


class BuildStrategy:
    class ReduceStrategy(_Enum):
        AllReduce = 0
        Reduce = 1

    class GradientScaleStrategy(_Enum):
        CoeffNumDevice = 0
        One = 1
        Customized = 2

    def __init__(self):
        # Paddle 1.8.5's defaults (tests/data/paddle18/strategies.json); the fusion and memory switches change
        # nothing here (torch runs the lowered program)
        self.reduce_strategy = BuildStrategy.ReduceStrategy.AllReduce
        self.gradient_scale_strategy = BuildStrategy.GradientScaleStrategy.CoeffNumDevice
        self.debug_graphviz_path = ""
        self.enable_sequential_execution = False
        self.fuse_elewise_add_act_ops = False
        self.fuse_bn_act_ops = False
        self.fuse_relu_depthwise_conv = False
        self.fuse_broadcast_ops = True
        self.fuse_all_optimizer_ops = False
        self.fuse_all_reduce_ops = True
        self.enable_auto_fusion = False
        self.enable_inplace = True
        self.memory_optimize = None
        self.enable_backward_optimizer_op_deps = True
        self.cache_runtime_context = False
        self.mkldnn_enabled_op_types = set()
        self.sync_batch_norm = False
        self.remove_unnecessary_lock = True
        self.num_trainers = 1
        self.trainer_id = 0
        self.trainers_endpoints = []
        self.use_hierarchical_allreduce = False
        self.hierarchical_allreduce_inter_nranks = 0
        self.nccl_comm_num = 1
        self.async_mode = False
        self.is_distribution = False
        # not a Paddle 1.8 field: on a CUDA place, run capture-safe steps as whole-step CUDA graphs
        # (FLAGS_cuda_graph_capture sets the default; False here turns it off for this program)
        self.allow_cuda_graph_capture = None
        self._pass_builder = None

    def _finalize_strategy_and_create_passes(self):
        """The strategy's PassBuilder (created once), for insert_pass("multi_batch_merge_pass")."""
        if self._pass_builder is None:
            self._pass_builder = PassBuilder()
        return self._pass_builder

    def _merge_repeats(self):
        """num_repeats of a multi_batch_merge_pass in the pass list, else 1."""
        for p in (self._pass_builder.all_passes() if self._pass_builder else []):
            if p.name == "multi_batch_merge_pass":
                return p.attrs.get("num_repeats", 1)
        return 1


class _Pass:
    """One entry of a PassBuilder: a name and its attributes (Pass.set)."""

    def __init__(self, name):
        self.name = name
        self.attrs = {}

    def set(self, key, value):
        self.attrs[key] = value

    def type(self):
        return self.name


class PassBuilder:
    """BuildStrategy's pass list (Paddle 1.8's core.PassBuilder).  Paddle's graph passes (fusions, inplace,
    memory reuse) change speed, not results, and have nothing to do here; `multi_batch_merge_pass`
    (num_repeats) changes the training step and is applied (fluid/transpiler/batch_merge.py)."""

    def __init__(self):
        self._passes = []

    def append_pass(self, name):
        self._passes.append(_Pass(name))
        return self._passes[-1]

    def insert_pass(self, index, name):
        self._passes.insert(index, _Pass(name))
        return self._passes[index]

    def remove_pass(self, index):
        del self._passes[index]

    def all_passes(self):
        return list(self._passes)


class ExecutionStrategy:
    def __init__(self):
        self.num_threads = 0
        self.allow_op_delay = False
        self.num_iteration_per_drop_scope = 100
        self.num_iteration_per_run = 1
        self.use_thread_barrier = False
        self.use_experimental_executor = True
        self._dry_run = False     # Paddle's name: run the graph without running its ops
        self.use_cuda = True      # Paddle 1.8's default; the executor's place decides here


class CompiledProgram(CompileChecks):
    def __init__(self, program_or_graph, build_strategy=None):
        # a core.Graph: Paddle leaves _program None (fluid.io refuses such a CompiledProgram); it runs the
        # graph's program
        self._graph = None
        if isinstance(program_or_graph, Graph):
            self._graph, program_or_graph = program_or_graph, None
        elif not isinstance(program_or_graph, Program):
            raise TypeError("CompiledProgram expects a fluid.Program or a core.Graph, got %s"
                            % type(program_or_graph).__name__)
        self._program = program_or_graph
        self._build_strategy = build_strategy
        self._exec_strategy = None
        self._is_data_parallel = False
        self._loss_name = None
        self._share_vars_from = None
        self._places = None
        # Paddle's per-place scopes of a ParallelExecutor this program shares variables with (else []); the
        # per-place scopes here are the runner's, made on the first run, and not listed
        self._local_scopes = []
        self._runner = None
        self._is_inference = False
        self._infer_config = None
        self._predictor = None

    def _runnable_program(self):
        return self._program if self._program is not None else self._graph._source_program

    def with_data_parallel(self, loss_name=None, build_strategy=None, exec_strategy=None, share_vars_from=None,
                           places=None):
        if self._is_data_parallel:
            raise ValueError("with_data_parallel has already been called on this CompiledProgram")
        self._is_data_parallel = True
        if build_strategy is not None:
            self._build_strategy = build_strategy
        self._build_strategy = self._build_strategy or BuildStrategy()
        repeats = self._build_strategy._merge_repeats()
        if repeats != 1:
            self._program = merge_batches(self._runnable_program(), repeats)
        self._exec_strategy = exec_strategy or ExecutionStrategy()
        self._loss_name = loss_name
        self._share_vars_from = share_vars_from
        # one place is taken as a list of one (Paddle 1.8.5)
        self._places = [places] if places is not None and not isinstance(places, (list, tuple)) else places
        return self

    def _with_inference_optimize(self, config):
        """Run through a predictor made from `config` (an AnalysisConfig or NativeConfig naming a saved
        model): exe.run(compiled, feed=[PaddleTensor, ...]) returns [PaddleTensor, ...], as in Paddle."""
        if self._is_data_parallel:
            raise ValueError("CompiledProgram: cannot compile with both data parallel and inference")
        if self._is_inference:
            raise ValueError("CompiledProgram: already compiled with inference, cannot be recompiled")
        if not isinstance(config, (AnalysisConfig, NativeConfig)):
            raise TypeError("_with_inference_optimize takes an AnalysisConfig or a NativeConfig, got %s"
                            % type(config).__name__)
        self._is_inference = True
        self._infer_config = config
        return self

    with_inference_optimize = _with_inference_optimize

    def _resolve_places(self, exe_place):
        """with_data_parallel(places=None) runs on the selected GPUs with a CUDA executor (FLAGS_selected_gpus,
        one per trainer under the launcher), else on CPU_NUM CPU places (Paddle's rule)."""
        if self._places is not None:
            if not self._places:
                raise ValueError("with_data_parallel(places=[]): give at least one place")
            return list(self._places)
        if isinstance(exe_place, CUDAPlace):
            return cuda_places() or [exe_place]
        return cpu_places()

    def _is_multi(self, exe_place):
        bs = self._build_strategy
        return self._is_data_parallel and (len(self._resolve_places(exe_place)) > 1 or
                                           (bs is not None and bs.num_trainers > 1))

    def _dry_run(self, exe, feed, fetch_list):
        """ExecutionStrategy._dry_run (Paddle): the step runs no op, so nothing is fed, computed or updated.
        Fetching is refused: there would be nothing computed to return."""
        if fetch_list:
            raise ValueError("ExecutionStrategy._dry_run is set: the program runs no op, so there is nothing to "
                             "fetch (fetch_list %s)" % (fetch_list,))
        return []

    def _run_with_executor(self, exe, feed, fetch_list, scope, return_numpy, return_merged):
        if self._is_inference:
            if self._predictor is None:
                self._predictor = create_paddle_predictor(self._infer_config)
            return self._predictor.run(feed)
        if self._exec_strategy is not None and self._exec_strategy._dry_run:
            return self._dry_run(exe, feed, fetch_list)
        if self._runner is None and not self._is_multi(exe.place):
            if isinstance(feed, (list, tuple)):
                if len(feed) != 1:
                    raise ValueError("feed is a list of %d dicts but this program runs on 1 place" % len(feed))
                feed = feed[0]
            capture = getattr(self._build_strategy, "allow_cuda_graph_capture", None)
            return exe._run_program(self._runnable_program(), feed, fetch_list, scope, return_numpy,
                                    capture=capture)
        if self._runner is None:
            if (len(self._resolve_places(exe.place)) > 1
                    and _has_optimizer_in_control_flow(self._runnable_program())):
                # Paddle 1.8.5 refuses this too: each place would update in its own branch
                raise NotImplementedError("If optimizer is used in control flow, training on multi-places is "
                                          "not supported now.")
            # kept in a function: it loads torch (data-parallel runs only)
            from ..backends.data_parallel import DataParallelRunner
            self._runner = DataParallelRunner(self, exe)
        return self._runner.run(feed, fetch_list, scope, return_numpy, return_merged)


def _has_optimizer_in_control_flow(program):
    """A conditional_block_grad of the global block runs a backward block holding optimizer ops (minimize
    called inside a cond branch)."""
    if not isinstance(program, Program):
        return False
    for op in program.global_block().ops:
        sub = op.attrs.get("sub_block") if op.type == "conditional_block_grad" else None
        if sub is not None and any(o.attrs.get(OP_ROLE_KEY, 0) & OpRole.Optimize for o in sub.ops):
            return True
    return False
