"""Every public name paddle_compat claims (by module), and the Fluid 1.x names it knowingly lacks.

`import paddle_compat as fluid` must offer these under the same paths as `paddle.fluid`."""

import importlib

import pytest

import paddle_compat

CLAIMED = {
    "paddle_compat": [
        "evaluator", "Program", "Variable", "default_main_program", "default_startup_program", "program_guard", "name_scope",
        "Executor", "global_scope", "scope_guard", "Scope", "CPUPlace", "CUDAPlace", "CUDAPinnedPlace",
        "LoDTensor", "Tensor", "create_lod_tensor", "create_random_int_lodtensor", "ParamAttr",
        "WeightNormParamAttr", "CompiledProgram", "BuildStrategy", "ExecutionStrategy", "ParallelExecutor",
        "DistributeTranspiler", "DistributeTranspilerConfig", "memory_optimize", "release_memory",
        "append_backward", "gradients", "cpu_places", "cuda_places", "in_dygraph_mode", "is_compiled_with_cuda",
        "data", "embedding", "force_init_on_cpu", "init_on_cpu", "layers", "optimizer", "initializer",
        "regularizer", "clip", "io", "backward", "unique_name", "framework", "executor", "core", "compiler",
        "transpiler", "param_attr", "fluid", "metrics", "nets", "profiler", "DataFeeder", "reader", "contrib",
        "install_check", "cuda_pinned_places", "device_guard", "get_flags", "require_version", "set_flags",
        "learning_rate_decay", "HashName", "RoundRobin", "save", "load", "one_hot", "LoDTensorArray",
        "enable_dygraph", "disable_dygraph", "enable_imperative", "disable_imperative", "VarBase", "ComplexVariable",
        "load_op_library", "DataFeedDesc", "TrainerDesc", "MultiTrainer", "DistMultiTrainer", "PipelineTrainer",
    ],
    "paddle_compat.fluid.contrib": ["mixed_precision", "extend_with_decoupled_weight_decay", "memory_usage",
                                    "op_freq_statistic", "distributed_batch_reader", "partial_sum",
                                    "partial_concat", "fused_elemwise_activation", "fused_embedding_seq_pool", "shuffle_batch", "tdm_child",
                                    "match_matrix_tensor", "sequence_topk_avg_pooling", "ctr_metric_bundle",
                                    "BasicGRUUnit", "BasicLSTMUnit", "basic_gru", "basic_lstm", "tree_conv",
                                    "var_conv_2d", "multiclass_nms2", "search_pyramid_hash", "rank_attention"],
    "paddle_compat.fluid.contrib.mixed_precision": ["decorate", "AutoMixedPrecisionLists"],
    "paddle_compat.fluid.contrib.layers": ["partial_sum", "partial_concat", "fused_elemwise_activation", "fused_embedding_seq_pool", "shuffle_batch", "tdm_child",
                                           "match_matrix_tensor", "sequence_topk_avg_pooling", "ctr_metric_bundle",
                                           "BasicGRUUnit", "BasicLSTMUnit", "basic_gru", "basic_lstm", "tree_conv",
                                    "var_conv_2d", "multiclass_nms2", "search_pyramid_hash", "rank_attention"],
    "paddle_compat.fluid.metrics": ["MetricBase", "CompositeMetric", "Precision", "Recall", "Accuracy",
                                    "ChunkEvaluator", "EditDistance", "Auc"],
    "paddle_compat.fluid.nets": ["simple_img_conv_pool", "img_conv_group", "glu", "scaled_dot_product_attention"],
    "paddle_compat.fluid.profiler": ["profiler", "start_profiler", "stop_profiler", "reset_profiler"],
    "paddle_compat.readers.decorator": ["batch", "shuffle", "buffered", "chain", "compose", "map_readers",
                                             "firstn", "cache"],
    "paddle_compat.fluid.layers": [
        "sigmoid_focal_loss", "retinanet_target_assign", "retinanet_detection_output", "roi_perspective_transform",
        "data", "fc", "embedding", "conv2d", "pool2d", "batch_norm", "dropout", "relu", "sigmoid", "tanh",
        "softmax", "leaky_relu", "cross_entropy", "softmax_with_cross_entropy", "square_error_cost",
        "sigmoid_cross_entropy_with_logits", "mean", "reduce_sum", "reduce_mean", "reduce_max", "reduce_min",
        "reduce_prod", "elementwise_add", "elementwise_sub", "elementwise_mul", "elementwise_div",
        "elementwise_max", "elementwise_min", "elementwise_pow", "mul", "matmul", "concat", "split", "reshape",
        "transpose", "scale", "cast", "fill_constant", "assign", "sums", "accuracy", "topk", "argmax", "argmin",
        "create_parameter", "create_global_var", "create_tensor", "zeros", "ones", "exponential_decay",
        "natural_exp_decay", "inverse_time_decay", "polynomial_decay", "piecewise_decay", "noam_decay",
        "cosine_decay", "exp", "log", "sqrt", "abs", "square", "clip", "clip_by_norm", "one_hot", "flatten",
        "squeeze", "unsqueeze", "stack", "gather", "expand", "l2_normalize", "less_than", "equal", "increment",
        "autoincreased_step_counter", "fill_constant_batch_size_like", "shape", "log_loss", "huber_loss",
        "relu6", "elu", "gelu", "swish", "softplus", "softsign", "hard_sigmoid", "pow", "layer_norm", "slice",
        "pad", "prelu", "label_smooth", "sequence_pool", "sequence_first_step", "sequence_last_step",
        "sequence_softmax", "sequence_concat", "sequence_expand", "auc", "py_reader", "read_file",
        "IfElse", "StaticRNN", "DynamicRNN", "lod_rank_table", "max_sequence_len", "lod_tensor_to_array",
        "array_to_lod_tensor", "shrink_memory", "reorder_lod_tensor_by_rank", "split_lod_tensor",
        "merge_lod_tensor", "tensor_array_to_tensor", "lstm_unit", "dynamic_lstmp", "lstm", "rnn", "RNNCell",
        "LSTMCell", "GRUCell", "Decoder", "BeamSearchDecoder", "dynamic_decode", "DecodeHelper", "TrainingHelper",
        "GreedyEmbeddingHelper", "SampleEmbeddingHelper", "BasicDecoder",
        "data_norm", "spectral_norm", "roi_pool", "roi_align", "psroi_pool", "prroi_pool", "deformable_conv",
        "deformable_roi_pooling", "hash", "filter_by_instag", "similarity_focus", "random_crop",
    ],
    "paddle_compat.fluid.incubate.fleet.base.role_maker": [
        "Role", "RoleMakerBase", "PaddleCloudRoleMaker", "UserDefinedRoleMaker", "UserDefinedCollectiveRoleMaker",
        "MPIRoleMaker", "MPISymetricRoleMaker", "GeneralRoleMaker",
    ],
    "paddle_compat.fluid.incubate.fleet.base.fleet_base": ["Fleet", "DistributedOptimizer", "Mode"],
    "paddle_compat.fluid.incubate.fleet.collective": ["fleet", "Collective", "CollectiveOptimizer",
                                                      "DistributedStrategy", "TrainStatus"],
    "paddle_compat.fluid.incubate.fleet.utils.fleet_barrier_util": ["check_all_trainers_ready"],
    "paddle_compat.fluid.incubate.fleet.utils.hdfs": ["HDFSClient"],
    "paddle_compat.fluid.incubate.fleet.utils.utils": ["load_program", "save_program", "check_pruned_program_vars"],
    "paddle_compat.distributed.fs_wrapper": ["FS", "LocalFS", "BDFS"],
    "paddle_compat.fluid.layers.io": ["ListenAndServ", "BlockGuardServ", "Send", "Recv"],
    "paddle_compat.fluid.layers.ops": ["_scale"],
    "paddle_compat.fluid.incubate.fleet.parameter_server.distribute_transpiler": [
        "fleet", "DistributedTranspiler", "TranspilerOptimizer", "StrategyFactory"],
    "paddle_compat.fluid.incubate.fleet.parameter_server.distributed_transpiler": [
        "fleet", "DistributedTranspiler", "TranspilerOptimizer", "StrategyFactory"],
    "paddle_compat.fluid.incubate.fleet.parameter_server.distribute_transpiler.distributed_strategy": [
        "StrategyFactory", "DistributedStrategy", "SyncStrategy", "AsyncStrategy", "HalfAsyncStrategy", "GeoStrategy",
        "TrainerRuntimeConfig", "ServerRuntimeConfig"],
    "paddle_compat.fluid.reader": ["DataLoader", "PyReader"],
    "paddle_compat.fluid.data_feeder": ["DataFeeder"],
    "paddle_compat.distributed.launch": ["main"],
    "paddle_compat.distributed.launch_ps": ["main"],
    "paddle_compat.fluid.initializer": [
        "Constant", "Uniform", "Normal", "TruncatedNormal", "Xavier", "MSRA", "Bilinear", "ConstantInitializer",
        "UniformInitializer", "NormalInitializer", "TruncatedNormalInitializer", "XavierInitializer",
        "MSRAInitializer", "BilinearInitializer", "NumpyArrayInitializer",
    ],
    "paddle_compat.fluid.optimizer": [
        "SGD", "Momentum", "Adam", "Adagrad", "RMSProp", "Adamax", "SGDOptimizer", "MomentumOptimizer",
        "AdamOptimizer", "AdagradOptimizer", "RMSPropOptimizer", "AdamaxOptimizer", "Ftrl", "FtrlOptimizer",
        "DecayedAdagrad", "DecayedAdagradOptimizer", "Adadelta", "AdadeltaOptimizer", "Lamb", "LambOptimizer",
        "LarsMomentum", "LarsMomentumOptimizer", "Dpsgd", "DpsgdOptimizer", "DGCMomentumOptimizer",
        "ExponentialMovingAverage", "ModelAverage", "LookaheadOptimizer", "RecomputeOptimizer",
    ],
    "paddle_compat.fluid.regularizer": ["L1Decay", "L2Decay", "L1DecayRegularizer", "L2DecayRegularizer"],
    "paddle_compat.fluid.clip": ["GradientClipByValue", "GradientClipByNorm", "GradientClipByGlobalNorm",
                                 "ErrorClipByValue", "set_gradient_clip"],
    "paddle_compat.fluid.io": [
        "save_vars", "save_params", "save_persistables", "load_vars", "load_params", "load_persistables",
        "save_inference_model", "load_inference_model", "DataLoader", "PyReader", "batch", "shuffle",
        "save", "load", "load_program_state", "set_program_state", "xmap_readers", "multiprocess_reader",
        "default_collate_fn", "ComposeNotAligned",
        "buffered", "chain", "compose", "map_readers", "firstn", "cache",
    ],
    "paddle_compat.fluid.backward": ["append_backward", "gradients", "calc_gradient"],
    "paddle_compat.fluid.framework": [
        "Program", "Block", "Variable", "Parameter", "Operator", "default_main_program",
        "default_startup_program", "program_guard", "name_scope", "in_dygraph_mode", "OpRole",
    ],
    "paddle_compat.fluid.unique_name": ["generate", "guard", "switch"],
    "paddle_compat.fluid.core": ["CPUPlace", "CUDAPlace", "LoDTensor", "Scope", "VarDesc", "SelectedRows",
                                 "is_compiled_with_cuda", "get_cuda_device_count", "AnalysisConfig", "NativeConfig",
                                 "create_paddle_predictor", "PaddleTensor", "PaddleBuf", "PaddleDType",
                                 "PaddlePlace", "AnalysisPredictor", "NativePaddlePredictor", "ZeroCopyTensor"],
    "paddle_compat.fluid.transpiler": ["DistributeTranspiler", "DistributeTranspilerConfig", "RoundRobin",
                                       "HashName", "memory_optimize", "release_memory"],
    "paddle_compat.fluid.compiler": ["CompiledProgram", "BuildStrategy", "ExecutionStrategy"],
}

# Fluid 1.x names a user might reach for that are not provided, and why.
KNOWN_GAPS = {
    "paddle_compat.fluid.layers": {
    },
    "paddle_compat.fluid.optimizer": {
        "PipelineOptimizer": "pipeline parallelism over device sections is not implemented",
        "GradientMergeOptimizer": "not part of Paddle 1.8's fluid.optimizer",
    },
    "paddle_compat.fluid.contrib": {
        "InitState": "contrib.decoder (InitState/StateCell/TrainingDecoder) is not built; fluid.layers' decoders are",
        "StateCell": "contrib.decoder (InitState/StateCell/TrainingDecoder) is not built; fluid.layers' decoders are",
        "TrainingDecoder": "contrib.decoder (InitState/StateCell/TrainingDecoder) is not built; fluid.layers' decoders are",
        "BeamSearchDecoder": "contrib.decoder (InitState/StateCell/TrainingDecoder) is not built; fluid.layers' decoders are",
        "Compressor": "PaddleSlim compression (pruning, distillation) is out of scope",
        "QuantizeTranspiler": "quantization-aware training is out of scope",
        "convert_dist_to_sparse_program": "PSLib (Baidu's closed parameter server) only",
        "load_persistables_for_increment": "PSLib (Baidu's closed parameter server) only: loads its sparse tables",
        "load_persistables_for_inference": "PSLib (Baidu's closed parameter server) only",
        "tdm_sampler": "random negative sampling over a TDM tree: not implemented",
    },
    "paddle_compat": {
        "dygraph": "imperative mode is out of scope (static Fluid programs only)",
    },
}


@pytest.mark.parametrize("module", sorted(CLAIMED))
def test_claimed_names_exist(module):
    mod = importlib.import_module(module)
    missing = [n for n in CLAIMED[module] if not hasattr(mod, n)]
    assert not missing, "%s lacks %s" % (module, missing)


def test_fluid_alias_is_the_same_package():
    import paddle_compat.fluid as pf
    assert paddle_compat.fluid is pf
    for name in CLAIMED["paddle_compat"]:
        if name != "fluid":
            assert getattr(paddle_compat, name) is getattr(pf, name), name


def test_all_exports_are_claimed():
    unclaimed = sorted(set(paddle_compat.__all__) - set(CLAIMED["paddle_compat"]))
    assert not unclaimed, "exported but not listed in CLAIMED: %s" % unclaimed


@pytest.mark.parametrize("module", sorted(KNOWN_GAPS))
def test_known_gaps_are_really_absent(module):
    mod = importlib.import_module(module)
    present = [n for n in KNOWN_GAPS[module] if hasattr(mod, n)]
    assert not present, "listed as gaps but present (update KNOWN_GAPS): %s" % present


# ---- Coverage of Paddle 1.8.5's public names (tests/data/paddle18/public_api.json, recorded by
# make_public_api.py from each module's __all__). Detection ops and probability distributions are not counted:
# the names are listed in the data file under "excluded".
import json  # noqa: E402
import os  # noqa: E402

PUBLIC_API = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18", "public_api.json")

# The fraction of Paddle 1.8.5's names each module must offer: set to what is true today, raised as names land
# (the target is 0.90 for fluid.layers and 0.90 overall).
REQUIRED_COVERAGE = {        # what is true today; the goal is >= 0.90 for fluid.layers and overall
    "paddle.fluid.layers": 1.0,
    "paddle.fluid.optimizer": 0.96,
    "paddle.fluid.contrib": 0.72,
    "paddle.fluid": 0.94,
    "paddle.fluid.nets": 1.0,
    "paddle.fluid.io": 1.0,
    "overall": 0.97,
}


def _paddle18_names():
    with open(PUBLIC_API) as fh:
        data = json.load(fh)
    out = {}
    for mod, names in data["modules"].items():
        skip = set()
        for group in data["excluded"].get(mod, {}).values():
            skip.update(group)
        out[mod] = [n for n in names if n not in skip]
    return out


def _ours(paddle_module):
    name = "paddle_compat.fluid" + paddle_module[len("paddle.fluid"):]
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def coverage():
    """{paddle module: (offered names, missing names)}."""
    res = {}
    for mod, names in sorted(_paddle18_names().items()):
        ours = _ours(mod)
        have = [n for n in names if ours is not None and hasattr(ours, n)]
        res[mod] = (have, sorted(set(names) - set(have)))
    return res


def test_public_api_coverage_of_paddle18():
    cov = coverage()
    have = sum(len(h) for h, _ in cov.values())
    total = sum(len(h) + len(m) for h, m in cov.values())
    report = ["%s: %d of %d; missing: %s" % (mod, len(h), len(h) + len(m), " ".join(m))
              for mod, (h, m) in cov.items() if m]
    fractions = {mod: len(h) / float(len(h) + len(m)) for mod, (h, m) in cov.items()}
    fractions["overall"] = have / float(total)
    low = {k: round(fractions[k], 3) for k, need in REQUIRED_COVERAGE.items() if fractions[k] < need}
    assert not low, "coverage below REQUIRED_COVERAGE %s:\n%s" % (low, "\n".join(report))
