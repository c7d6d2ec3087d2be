"""collective mode: Paddle 1.x's collective ops written into the programs (grad_allreduce, local_sgd).

Startup, per ring: `c_gen_nccl_id` + `c_comm_init(nranks, rank, ring_id)`; then `c_broadcast(root=0)` of every
parameter (rings alternate) and `c_sync_comm_stream` per ring.
- grad_allreduce: `scale(1/nranks)` after the loss-grad op; after each op producing a parameter gradient
  `c_sync_calc_stream` + `c_allreduce_sum` (rings alternate); `c_sync_comm_stream` before the first optimizer op.
- local_sgd: startup snapshots each parameter as `<p>@SNAPSHOT`; after each update op
  `elementwise_sub(snapshot, p) -> p` + `c_sync_calc_stream` + `c_allreduce_sum`; at the end, per ring
  `c_sync_comm_stream`, then per parameter `scale(1/nranks)`, `elementwise_sub(snapshot, p) -> p`,
  `assign(p) -> snapshot`. Every step is averaged (Paddle 1.x had no period either).

Each op lowers to torch.distributed (backends/lowering/kernels/collective_ops.py). Paddle's trainer 0
waited at transpile time for the other endpoints (`wait_port`); here `c_comm_init` waits, with a deadline.
"""

from ...ir import OP_ROLE_KEY, OP_ROLE_VAR_KEY, OpRole, VarType, notify_changed, unique_name

__all__ = ["transpile_collective", "snapshot_name"]


def snapshot_name(param_name):
    return param_name + "@SNAPSHOT"


def transpile_collective(cfg, program, startup_program, trainer_id, endpoints, current_endpoint):
    if len(endpoints) < 2:
        raise ValueError("transpile (collective mode): needs at least 2 trainer endpoints, got %d (%s); "
                         "train in one process without transpiling instead" % (len(endpoints), ",".join(endpoints)))
    nranks, nrings = len(endpoints), cfg.nccl_comm_num
    if any(op.type == "c_comm_init" for op in startup_program.global_block().ops):
        raise ValueError("transpile (collective mode): the startup program already initialises communicators; "
                         "transpile each startup program once")
    params = _params(program, startup_program)
    _init_communicators(startup_program, trainer_id, endpoints, current_endpoint, nrings)
    _broadcast_params(startup_program, params, nrings)
    if cfg.collective_mode == "grad_allreduce":
        _scale_loss_grad(program, nranks)
        _allreduce_grads(program, nrings)
    else:   # local_sgd (the config validated the mode)
        _snapshot_params(startup_program, params)
        _local_sgd_main(program, nranks, nrings)
    for p in (program, startup_program):
        p._trainers_endpoints = list(endpoints)
        p._nccl_comm_num = nrings
    notify_changed(startup_program, "transpile_collective")
    notify_changed(program, "transpile_collective")


def _params(program, startup_program):
    """Parameters that are replicated on every trainer, in the startup program's order (as Paddle's
    iter_parameters), declared in the startup block so its ops can name them."""
    main_params = {p.name: p for p in program.global_block().all_parameters()}
    sb = startup_program.global_block()
    names = [p.name for p in sb.all_parameters()] + [n for n in main_params if not sb.has_var(n)]
    out = []
    for n in names:
        p = main_params.get(n) or sb.var(n)
        if getattr(p, "is_distributed", False):
            continue
        if not sb.has_var(n):
            sb.create_var(name=n, shape=p.shape, dtype=p.dtype, persistable=True)
        out.append(p)
    return out


def _init_communicators(startup_program, rank, endpoints, current_endpoint, nrings):
    block = startup_program.global_block()
    others = [e for e in endpoints if e != current_endpoint]
    for ring_id in range(nrings):
        nccl_id = block.create_var(name=unique_name.generate("nccl_id"), persistable=True, type=VarType.RAW)
        block.append_op(type="c_gen_nccl_id", inputs={}, outputs={"Out": [nccl_id]},
                        attrs={"rank": rank, "endpoint": current_endpoint, "other_endpoints": others,
                               OP_ROLE_KEY: OpRole.Forward})
        block.append_op(type="c_comm_init", inputs={"X": [nccl_id]}, outputs={},
                        attrs={"nranks": len(endpoints), "rank": rank, "ring_id": ring_id,
                               OP_ROLE_KEY: OpRole.Forward})


def _broadcast_params(startup_program, params, nrings):
    block = startup_program.global_block()
    ring_id = -1
    for p in params:
        ring_id = (ring_id + 1) % nrings
        block.append_op(type="c_broadcast", inputs={"X": [p.name]}, outputs={"Out": [p.name]},
                        attrs={"ring_id": ring_id, "root": 0, OP_ROLE_KEY: OpRole.Forward})
    _sync_comm(block, len(block.ops), params[-1].name if params else None, nrings, OpRole.Forward)


def _sync_comm(block, index, var_name, nrings, role):
    if var_name is None:
        return
    for ring_id in range(nrings):
        block._insert_op(index + ring_id, type="c_sync_comm_stream", inputs={"X": [var_name]},
                         outputs={"Out": [var_name]}, attrs={"ring_id": ring_id, OP_ROLE_KEY: role})


def _role(op):
    return int(op.attrs.get(OP_ROLE_KEY, 0))


def _scale_loss_grad(program, nranks):
    block = program.global_block()
    loss_role = OpRole.Backward | OpRole.Loss
    for idx in reversed(range(len(block.ops))):
        op = block.ops[idx]
        if _role(op) == loss_role and op.output_arg_names:
            g = op.output_arg_names[0]
            block._insert_op(idx + 1, type="scale", inputs={"X": [g]}, outputs={"Out": [g]},
                             attrs={"scale": 1.0 / nranks, OP_ROLE_KEY: OpRole.Backward})


def _allreduce_grads(program, nrings):
    """After every op that produces a parameter gradient (its op_role_var names it), walking backwards so
    the rings alternate from the last gradient, as Paddle did."""
    block = program.global_block()
    ring_id, last_grad = -1, None
    for idx in reversed(range(len(block.ops))):
        op = block.ops[idx]
        role_var = op.attrs.get(OP_ROLE_VAR_KEY) or []
        if not _role(op) & OpRole.Backward or not role_var:
            continue
        offset = idx
        for i in range(0, len(role_var), 2):
            param = block._find_var_recursive(role_var[i])
            grad = role_var[i + 1]
            if param is not None and getattr(param, "is_distributed", False):
                continue
            if offset == idx:
                offset += 1
                block._insert_op(offset, type="c_sync_calc_stream", inputs={"X": [grad]}, outputs={"Out": [grad]},
                                 attrs={OP_ROLE_KEY: OpRole.Backward})
                offset += 1
            ring_id = (ring_id + 1) % nrings
            block._insert_op(offset, type="c_allreduce_sum", inputs={"X": [grad]}, outputs={"Out": [grad]},
                             attrs={"ring_id": ring_id, OP_ROLE_KEY: OpRole.Backward})
            last_grad = grad
    if last_grad is None:
        return
    for idx, op in enumerate(block.ops):
        if _role(op) & OpRole.Optimize:
            _sync_comm(block, idx, last_grad, nrings, OpRole.Backward)
            break


def _is_update_op(op):
    return all(s in op.inputs for s in ("Param", "Grad", "LearningRate"))


def _snapshot_params(startup_program, params):
    block = startup_program.global_block()
    for p in params:
        snap = block.create_var(name=snapshot_name(p.name), shape=p.shape, dtype=p.dtype, persistable=True,
                                stop_gradient=True)
        block.append_op(type="assign", inputs={"X": [p.name]}, outputs={"Out": [snap]},
                        attrs={OP_ROLE_KEY: OpRole.Forward})


def _local_sgd_main(program, nranks, nrings):
    block = program.global_block()
    ordered, ring_id, last = [], -1, None
    for idx in reversed(range(len(block.ops))):
        op = block.ops[idx]
        if not _is_update_op(op):
            continue
        param = block._var_recursive(op.input("Param")[0])
        if getattr(param, "is_distributed", False):
            continue
        snap = block.create_var(name=snapshot_name(param.name), shape=param.shape, dtype=param.dtype,
                                persistable=True, stop_gradient=True)
        p = param.name
        block._insert_op(idx + 1, type="elementwise_sub", inputs={"X": [snap], "Y": [p]}, outputs={"Out": [p]},
                         attrs={OP_ROLE_KEY: OpRole.Optimize})
        block._insert_op(idx + 2, type="c_sync_calc_stream", inputs={"X": [p]}, outputs={"Out": [p]},
                         attrs={OP_ROLE_KEY: OpRole.Optimize})
        ring_id = (ring_id + 1) % nrings
        block._insert_op(idx + 3, type="c_allreduce_sum", inputs={"X": [p]}, outputs={"Out": [p]},
                         attrs={"ring_id": ring_id, OP_ROLE_KEY: OpRole.Optimize})
        ordered.append((p, snap.name))
        last = p
    _sync_comm(block, len(block.ops), last, nrings, OpRole.Optimize)
    for p, snap in reversed(ordered):
        block.append_op(type="scale", inputs={"X": [p]}, outputs={"Out": [p]},
                        attrs={"scale": 1.0 / nranks, OP_ROLE_KEY: OpRole.Optimize})
        block.append_op(type="elementwise_sub", inputs={"X": [snap], "Y": [p]}, outputs={"Out": [p]},
                        attrs={OP_ROLE_KEY: OpRole.Optimize})
        block.append_op(type="assign", inputs={"X": [p]}, outputs={"Out": [snap]},
                        attrs={OP_ROLE_KEY: OpRole.Optimize})
