"""Whether a planned block can run as one CUDA graph (torch.cuda.CUDAGraph), and why not when it cannot.

A captured step replays the same kernels on the same memory: every shape must be fixed for a given feed
signature, and nothing may need the host in the middle of the step (a value read back, Python deciding what
runs next, a file, a socket, a reader). What the lowering knows statically is checked here, in the order
a reader would look for it; the first reason found is reported:

  LoD        a variable carrying a LoD: its rows and offsets vary per batch (sequence ops size from them)
  host ops   ops whose kernel runs on the host by nature: Python callbacks, printing, readers, files,
             parameter-server RPC, process-group collectives, tensor arrays and rank tables
  control    while / conditional_block / recurrent / IfElse: the condition is read on the host each step
  shapes     ops whose output size depends on the data (unique, where_index, nms, beam search, ...) or
             whose shape comes from a tensor input (reshape's ShapeTensor, interp's OutSize, ...)
  random     a fixed-seed random op builds a torch.Generator per step on the host
  sparse     an is_sparse lookup: its row-sparse gradient has as many rows as the batch has distinct ids
  nan check  FLAGS_check_nan_inf reads every output back

Whether a kernel syncs is a fact of our torch implementation (not of Paddle's op), so the tables live with
the kernels' backend. What a table misses, capture itself finds on the GPU (an operation not permitted while
capturing): the capture runner then falls back and says why, once.
"""

from .plan_types import CaptureVerdict, OpStep, RegionStep

__all__ = ["capture_verdict", "op_reason", "HOST_OPS", "CONTROL_FLOW", "DATA_SHAPED"]

_RPC = "talks to parameter servers over RPC"
_ARRAY = "keeps a tensor array or rank table on the host"
HOST_OPS = dict(
    [(t, "runs Python code") for t in ("py_func",)] +
    [(t, "prints tensor values") for t in ("print",)] +
    [(t, "reads the next batch from a reader") for t in ("read", "create_py_reader", "create_double_buffer_reader")] +
    [(t, "reads or writes files") for t in ("save", "load", "save_combine", "load_combine", "checkpoint_notify")] +
    [(t, _RPC) for t in ("send", "recv", "send_barrier", "fetch_barrier", "listen_and_serv",
                         "fl_listen_and_serv", "prefetch", "distributed_lookup_table", "lookup_sparse_table",
                         "split_ids", "merge_ids", "split_byref", "split_selected_rows", "ref_by_trainer_id",
                         "geo_sgd")] +
    [(t, "is a process-group call (not captured yet)")
     for t in ("gen_nccl_id", "c_gen_nccl_id", "c_comm_init", "c_comm_init_all", "c_broadcast", "c_allreduce_sum",
               "c_allreduce_max", "c_allreduce_min", "c_allreduce_prod", "c_allgather", "c_reducescatter",
               "c_sync_calc_stream", "c_sync_comm_stream", "allreduce", "broadcast")] +
    [(t, "draws from a generator kept on the host") for t in ("shuffle_batch", "random_crop", "dpsgd")] +
    [(t, _ARRAY) for t in ("write_to_array", "read_from_array", "array_to_lod_tensor", "lod_tensor_to_array",
                           "tensor_array_to_tensor", "lod_array_length", "lod_rank_table", "max_sequence_len",
                           "reorder_lod_tensor_by_rank", "shrink_rnn_memory", "rnn_memory_helper")])

CONTROL_FLOW = frozenset(["while", "conditional_block", "conditional_block_infer", "recurrent", "select_input",
                          "select_output", "split_lod_tensor", "merge_lod_tensor", "merge_lod_tensor_infer",
                          "while_grad", "conditional_block_grad", "recurrent_grad"])

DATA_SHAPED = frozenset([
    "unique", "unique_with_counts", "where_index", "masked_select", "edit_distance", "beam_search",
    "beam_search_decode", "multiclass_nms", "multiclass_nms2", "retinanet_detection_output",
    "retinanet_target_assign", "rpn_target_assign", "generate_proposals", "generate_proposal_labels",
    "ctc_align", "filter_by_instag", "range", "hash", "pyramid_hash", "sample_logits", "nce",
    "hierarchical_sigmoid", "get_tensor_from_selected_rows", "merge_selected_rows", "sequence_reshape",
    "sequence_slice", "sequence_scatter", "sequence_unpad", "sequence_expand", "sequence_expand_as", "lod_reset",
    "similarity_focus", "tdm_child", "affine_grid"])

# tensor inputs that carry a shape, size or index read on the host (reshape's ShapeTensor, slice's StartsTensor)
_SHAPE_SLOTS = frozenset(["Shape", "OutSize", "ExpandTimes", "expand_times_tensor"])
_INTERP = ("bilinear_interp", "nearest_interp", "trilinear_interp", "bicubic_interp", "linear_interp")
_RANDOM = frozenset(["dropout", "uniform_random", "gaussian_random", "truncated_gaussian_random", "randint",
                     "randperm", "sampling_id", "random_crop", "shuffle_batch", "uniform_random_batch_size_like",
                     "gaussian_random_batch_size_like"])
_SPARSE_LOOKUP = frozenset(["lookup_table", "lookup_table_v2", "fused_lookup_seqpool_sum",
                            "fused_embedding_seq_pool"])


def op_reason(op, training=True):
    """Why one op keeps its step from being captured, or None. training: the step has a backward (an
    is_sparse lookup makes a row-sparse gradient only then)."""
    t = op.type
    if t in HOST_OPS:
        return HOST_OPS[t]
    if t in CONTROL_FLOW or (op.attrs.get("sub_block") is not None and t.endswith("_grad")):
        return "is control flow decided on the host"
    if t in DATA_SHAPED:
        return "has an output whose size depends on the data"
    for slot, names in op.inputs.items():
        if names and (slot in _SHAPE_SLOTS or slot.endswith(("Tensor", "TensorList")) or
                      (slot == "Scale" and t in _INTERP)):
            return "reads its %s input on the host" % slot
    if t in _RANDOM and (op.attrs.get("fix_seed") or op.attrs.get("seed") or op.inputs.get("Seed")) and \
            not (t == "dropout" and op.attrs.get("is_test")):
        return "has a fixed seed (a generator made per step on the host)"
    if training and t in _SPARSE_LOOKUP and op.attrs.get("is_sparse"):
        return "makes a row-sparse gradient (its rows vary with the batch's ids)"
    return None


def capture_verdict(block, steps, feed_lod, has_lod, check_nan_inf):
    """CaptureVerdict for a planned block: safe, or the first reason it is not (naming the op or variable)."""
    if check_nan_inf:
        return CaptureVerdict(False, "FLAGS_check_nan_inf reads every op's outputs on the host")
    lod = sorted(feed_lod) or sorted(has_lod)
    if lod:
        return CaptureVerdict(False, "variable '%s' carries a LoD (its shape varies per batch)" % lod[0])
    training = any(isinstance(s, RegionStep) for s in steps)
    for s in steps:
        if isinstance(s, OpStep):
            why = op_reason(s.op, training)
            if why is not None:
                return CaptureVerdict(False, "op '%s' (#%d) %s" % (s.op.type, s.index, why), s.index)
        elif isinstance(s, RegionStep):
            for i in s.region.op_idx:
                op = block.ops[i]
                if op.attrs.get("sub_block") is not None:
                    return CaptureVerdict(False, "op '%s' (#%d) is control flow decided on the host"
                                          % (op.type, i), i)
    for s in steps:
        if isinstance(s, OpStep):
            for slot, names in s.op.outputs.items():
                for n in names:
                    v = block._find_var_recursive(n)
                    if v is not None and v.lod_level > 0:
                        return CaptureVerdict(False, "variable '%s' carries a LoD (its shape varies per batch)"
                                              % n, s.index)
    return CaptureVerdict(True)
