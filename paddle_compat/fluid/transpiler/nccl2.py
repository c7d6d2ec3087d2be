"""nccl2 mode: the startup program gains the persistable `NCCLID` variable and a `gen_nccl_id` op; the main
program is left as it is. Gradients are averaged by ParallelExecutor / CompiledProgram.with_data_parallel,
which must be told num_trainers and trainer_id (as in Paddle).

`gen_nccl_id` lowers to a process group over the trainer endpoints (backends/comm.py): rendezvous at
trainer 0's endpoint, bounded by FLAGS_rpc_deadline. Paddle's trainer 0 also blocked at transpile time
until every other endpoint answered (`wait_port`); that wait moves into the op, where it has a deadline and
names the endpoints that never joined, so transpiling stays a pure rewrite.
"""

from ...ir import OP_ROLE_KEY, OpRole, VarType, notify_changed

__all__ = ["transpile_nccl2", "NCCL_ID_VAR"]

NCCL_ID_VAR = "NCCLID"


def transpile_nccl2(cfg, program, startup_program, trainer_id, endpoints, current_endpoint):
    """Rewrite `startup_program` (and annotate `program`) in place for nccl2 data parallelism."""
    block = startup_program.global_block()
    if any(op.type == "gen_nccl_id" for op in block.ops):
        raise ValueError("transpile (nccl2): the startup program already has a gen_nccl_id op; "
                         "transpile each startup program once")
    nccl_id = block.create_var(name=NCCL_ID_VAR, persistable=True, type=VarType.RAW)
    # Paddle declares one id per extra ring and per hierarchical level; gen_nccl_id generates them all.
    # Here one process group carries every ring (gloo/NCCL order the collectives themselves).
    for i in range(1, cfg.nccl_comm_num):
        block.create_var(name="%s_%d" % (NCCL_ID_VAR, i), persistable=True, type=VarType.RAW)
    if cfg.use_hierarchical_allreduce:
        for i in range(cfg.nccl_comm_num):
            block.create_var(name="Hierarchical_inter_%s_%d" % (NCCL_ID_VAR, i), persistable=True, type=VarType.RAW)
            block.create_var(name="Hierarchical_exter_%s_%d" % (NCCL_ID_VAR, i), persistable=True, type=VarType.RAW)
    block.append_op(type="gen_nccl_id", inputs={}, outputs={"NCCLID": [nccl_id]},
                    attrs={"trainers": list(endpoints), "trainer_id": trainer_id, "endpoint": current_endpoint,
                           "nccl_comm_num": cfg.nccl_comm_num,
                           "use_hierarchical_allreduce": cfg.use_hierarchical_allreduce,
                           "hierarchical_allreduce_inter_nranks": cfg.hierarchical_allreduce_inter_nranks,
                           OP_ROLE_KEY: OpRole.Forward})
    for p in (program, startup_program):
        p._trainers_endpoints = list(endpoints)
        p._nccl_comm_num = cfg.nccl_comm_num
    notify_changed(startup_program, "transpile_nccl2")
    notify_changed(program, "transpile_nccl2")
    return nccl_id
