"""Parameter-server ops (Paddle's operators/distributed_ops/, with the SelectedRows helpers its programs use):
declared here. Those that talk to pservers are declared runtime="ps": their kernels are the pserver runtime's
(backends/ps/kernels.py), loaded with the first program that holds one; the local ones are the lowering's
(backends/lowering/kernels/table_ops.py, rows_ops.py). ps_plan names the transpiler record an op carries
(backends/ps/records.py); native_rows, the kernels that take a core.SelectedRows as it is.

  send / send_barrier / recv / fetch_barrier   the trainer's side of a step
  listen_and_serv                              the pserver's service loop
  split_byref / split_selected_rows            a variable cut into its pserver blocks
  ref_by_trainer_id                            the pserver's per-trainer gradient
  split_ids / prefetch / merge_ids             a distributed lookup table's forward and gradient
  lookup_sparse_table                          the pserver's rows of its table shard
  geo_sgd                                      geo-SGD's delta exchange
  recv_save                                    a variable's slices pulled from servers, saved as one file
"""

from ..registry import declare

declare("send", inputs=("X*",), outputs=(), runtime="ps", ps_plan="trainer", host="rpc", operator_base=True)
declare(["send_barrier", "fetch_barrier"], inputs=(), outputs=(),
        runtime="ps", ps_plan="trainer", host="rpc", operator_base=True)
declare("listen_and_serv", inputs=(), outputs=(), runtime="ps", ps_plan="pserver", host="rpc", operator_base=True)
declare("recv", inputs=(), outputs=("Out*",), runtime="ps", ps_plan="trainer", host="rpc", operator_base=True)
declare(["split_byref", "split_selected_rows"], outputs=("Out*",), host="rpc")
declare("ref_by_trainer_id", inputs=("X*", "TrainerId"), host="rpc")
declare("split_ids", inputs=("Ids*", "X*"), outputs=("Out*",), native_rows=True, host="rpc")
declare("merge_ids", inputs=("Ids*", "Rows*", "X*"), outputs=("Out*",), lod_in=("Ids*",), lod_out=("Out*",),
        native_rows=True, host="rpc")
declare("prefetch", inputs=("X*",), outputs=("Out*",), runtime="ps", ps_plan="trainer", native_rows=True,
        host="rpc", operator_base=True)
declare("lookup_sparse_table", inputs=("Ids", "W"), native_rows=True, host="rpc", operator_base=True)
declare("geo_sgd", inputs=("X*", "Old*"), outputs=("Out*", "OldOut*"), runtime="ps", ps_plan="trainer", host="rpc")
declare(["merge_selected_rows", "get_tensor_from_selected_rows"], host="data")
declare("recv_save", inputs=(), outputs=(), runtime="ps", host="rpc", operator_base=True)
