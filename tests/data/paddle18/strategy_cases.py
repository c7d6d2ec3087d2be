"""Every field of Fleet's pserver strategies (StrategyFactory), through the public API only, so that the same
function runs under Paddle 1.8.5 (make_strategies.py records it) and here (tests/unit/test_strategies_paddle18.py).

dump(fluid) -> {case: {field: value}} for each strategy as created, and after each set_* call Paddle's own
test makes (the strategy re-applies its preset then). Values are JSON-able (enums as ints, sets as sorted lists).
"""

import os

PROGRAM_FIELDS = ["slice_var_up", "split_method", "min_block_size", "enable_dc_asgd", "mode", "print_log",
                  "wait_port", "runtime_split_send_recv", "sync_mode", "half_async", "completely_not_async",
                  "geo_sgd_mode", "geo_sgd_need_push_nums", "nccl_comm_num", "use_hierarchical_allreduce",
                  "hierarchical_allreduce_inter_nranks", "collective_mode"]
EXEC_FIELDS = ["allow_op_delay", "num_iteration_per_drop_scope", "num_iteration_per_run", "num_threads",
               "use_cuda", "use_experimental_executor", "use_thread_barrier"]
BUILD_FIELDS = ["async_mode", "cache_runtime_context", "debug_graphviz_path", "enable_auto_fusion",
                "enable_backward_optimizer_op_deps",
                "enable_inplace", "enable_sequential_execution", "fuse_all_optimizer_ops", "fuse_all_reduce_ops",
                "fuse_bn_act_ops", "fuse_broadcast_ops", "fuse_elewise_add_act_ops", "fuse_relu_depthwise_conv",
                "gradient_scale_strategy", "hierarchical_allreduce_inter_nranks", "is_distribution",
                "memory_optimize", "mkldnn_enabled_op_types", "nccl_comm_num", "num_trainers", "reduce_strategy",
                "remove_unnecessary_lock", "sync_batch_norm", "trainer_id", "trainers_endpoints",
                "use_hierarchical_allreduce"]
SERVER_FIELDS = ["_rpc_send_thread_num", "_rpc_get_thread_num", "_rpc_prefetch_thread_num"]


def _plain(v):
    if isinstance(v, (set, frozenset)):
        return sorted(v)
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, type):
        return v.__name__
    if v is None or isinstance(v, (bool, str, float)):
        return v
    try:
        return int(v)       # enums (ReduceStrategy, GradientScaleStrategy, DistributedMode)
    except (TypeError, ValueError):
        return str(v)


def snapshot(strategy):
    out = {}
    pc = strategy.get_program_config()
    for f in PROGRAM_FIELDS:
        out["program." + f] = _plain(getattr(pc, f))
    ex = strategy.get_execute_strategy()
    for f in EXEC_FIELDS:
        out["exec." + f] = _plain(getattr(ex, f))
    bs = strategy.get_build_strategy()
    for f in BUILD_FIELDS:
        out["build." + f] = _plain(getattr(bs, f))
    sr = strategy.get_server_runtime_config()
    for f in SERVER_FIELDS:
        out["server." + f] = _plain(getattr(sr, f))
    tr = strategy.get_trainer_runtime_config()
    out["trainer.mode"] = _plain(tr.mode)
    out["trainer.runtime_configs"] = {k: str(v) for k, v in tr.runtime_configs.items()}
    out["trainer.communicator_flags"] = tr.get_communicator_flags()
    out["debug_opt"] = strategy.debug_opt
    out["get_debug_opt"] = strategy.get_debug_opt()
    return out


def dump(fluid):
    from paddle.fluid.incubate.fleet.parameter_server.distribute_transpiler.distributed_strategy import \
        StrategyFactory
    from paddle.fluid.transpiler.distribute_transpiler import DistributeTranspilerConfig, ServerRuntimeConfig
    # the defaults come from the environment: CPU_NUM=2 and no FLAGS_* of their own
    saved = {k: v for k, v in os.environ.items() if k == "CPU_NUM" or k.startswith("FLAGS_")}
    for k in saved:
        del os.environ[k]
    os.environ["CPU_NUM"] = "2"
    try:
        cases = {}
        for name, make in (("sync", StrategyFactory.create_sync_strategy),
                           ("async", StrategyFactory.create_async_strategy),
                           ("half_async", StrategyFactory.create_half_async_strategy),
                           ("geo", lambda: StrategyFactory.create_geo_strategy(5))):
            s = make()
            cases[name] = snapshot(s)
            # a user's config: the strategy's preset is applied to it again
            cfg = DistributeTranspilerConfig()
            cfg.min_block_size = 81920
            s.set_program_config(cfg)
            cases[name + "+program_config"] = snapshot(s)
            s.set_program_config({"slice_var_up": False})
            cases[name + "+program_dict"] = snapshot(s)
            s.set_build_strategy(fluid.BuildStrategy())
            cases[name + "+build_strategy"] = snapshot(s)
            s.set_build_strategy({"memory_optimize": True})
            cases[name + "+build_dict"] = snapshot(s)
            s.set_execute_strategy(fluid.ExecutionStrategy())
            cases[name + "+exec_strategy"] = snapshot(s)
            s.set_execute_strategy({"num_threads": 8})
            cases[name + "+exec_dict"] = snapshot(s)
            s.set_server_runtime_config(ServerRuntimeConfig())
            s.set_server_runtime_config({"_rpc_send_thread_num": 20})
            cases[name + "+server_dict"] = snapshot(s)
            s.set_trainer_runtime_config({"communicator_send_queue_size": "20"})
            cases[name + "+trainer_dict"] = snapshot(s)
            s.set_debug_opt({"dump_param": ["fc_0.tmp_0"], "dump_fields": ["fc_0.tmp_0", "fc_0.tmp_0@GRAD"],
                             "dump_fields_path": "dump_text/"})
            cases[name + "+debug_opt"] = snapshot(s)
        return cases
    finally:
        os.environ.pop("CPU_NUM", None)
        os.environ.update(saved)
