"""Collective ops (Paddle's operators/collective/, and gen_nccl_id of its distributed_ops/): declared here,
their kernels live with the backend's communicator (backends/lowering/kernels/collective_ops.py)."""

from ..registry import declare

declare(["c_allreduce_sum", "c_allreduce_max", "c_allreduce_min", "c_allreduce_prod", "c_broadcast"],
        host="collective")
declare("c_sync_calc_stream", host="collective", operator_base=True)
declare("c_sync_comm_stream", inputs=("X*",), outputs=("Out*",), host="collective", operator_base=True)
declare("c_comm_init", inputs=("X",), outputs=(), host="collective", operator_base=True)
declare("c_gen_nccl_id", inputs=(), outputs=("Out",), host="collective")
declare("gen_nccl_id", inputs=(), outputs=("NCCLID",), host="collective")
