"""Collective ops (Paddle's operators/collective/, and gen_nccl_id of its distributed_ops/): declared here,
their kernels live with the backend's communicator (backends/lowering/kernels/collective_ops.py)."""

from ..registry import declare

declare(["c_allreduce_sum", "c_allreduce_max", "c_allreduce_min", "c_allreduce_prod", "c_broadcast",
         "c_sync_calc_stream"])
declare("c_sync_comm_stream", inputs=("X*",), outputs=("Out*",))
declare("c_comm_init", inputs=("X",), outputs=())
declare("c_gen_nccl_id", inputs=(), outputs=("Out",))
declare("gen_nccl_id", inputs=(), outputs=("NCCLID",))
