"""Which public layer names each of Paddle 1.8.5's fluid/layers/*.py modules holds.

Scripts import those modules directly (`import paddle.fluid.layers.nn as nn; nn.cos_sim(...)`); here
the layers live in other files, so each module of the same name answers its Paddle names from the
layers package (see `install`)."""
import sys

PADDLE_MODULE_NAMES = {
    'control_flow': (
        'DynamicRNN', 'IfElse', 'Print', 'StaticRNN', 'Switch', 'While', 'array_length', 'array_read',
        'array_write', 'case', 'cond', 'create_array', 'equal', 'greater_equal', 'greater_than', 'increment',
        'is_empty', 'less_equal', 'less_than', 'not_equal', 'reorder_lod_tensor_by_rank', 'switch_case',
        'while_loop',
    ),
    'io': (
        'create_py_reader_by_data', 'data', 'double_buffer', 'load', 'py_reader', 'read_file',
    ),
    'learning_rate_scheduler': (
        'cosine_decay', 'exponential_decay', 'inverse_time_decay', 'linear_lr_warmup', 'natural_exp_decay',
        'noam_decay', 'piecewise_decay', 'polynomial_decay',
    ),
    'loss': (
        'bpr_loss', 'center_loss', 'cross_entropy', 'edit_distance', 'hsigmoid', 'huber_loss', 'kldiv_loss',
        'margin_rank_loss', 'mse_loss', 'nce', 'npair_loss', 'rank_loss',
        'sampled_softmax_with_cross_entropy', 'sigmoid_cross_entropy_with_logits',
        'softmax_with_cross_entropy', 'square_error_cost', 'teacher_student_sigmoid_loss', 'warpctc',
    ),
    'metric_op': (
        'accuracy', 'auc',
    ),
    'nn': (
        'adaptive_pool2d', 'adaptive_pool3d', 'add_position_encoding', 'addcmul', 'addmm', 'affine_channel',
        'affine_grid', 'allclose', 'autoincreased_step_counter', 'batch_norm', 'bilinear_tensor_product',
        'bmm', 'bmm', 'brelu', 'chunk_eval', 'clamp', 'clip', 'clip_by_norm', 'continuous_value_model',
        'conv2d', 'conv2d_transpose', 'conv3d', 'conv3d_transpose', 'cos_sim', 'crf_decoding', 'crop',
        'crop_tensor', 'cross', 'ctc_greedy_decoder', 'data_norm', 'deformable_conv',
        'deformable_roi_pooling', 'diag_embed', 'dice_loss', 'dist', 'dot', 'dropout', 'elementwise_add',
        'elementwise_div', 'elementwise_equal', 'elementwise_floordiv', 'elementwise_max', 'elementwise_min',
        'elementwise_mod', 'elementwise_mul', 'elementwise_pow', 'elementwise_sub', 'elu', 'embedding',
        'expand', 'expand_as', 'fc', 'filter_by_instag', 'flatten', 'flip', 'fsp_matrix', 'gather',
        'gather_nd', 'gather_tree', 'gaussian_random', 'gaussian_random_batch_size_like',
        'get_tensor_from_selected_rows', 'grid_sampler', 'group_norm', 'hard_sigmoid', 'hard_swish', 'hash',
        'im2sequence', 'image_resize', 'image_resize_short', 'index_sample', 'index_select', 'inplace_abn',
        'instance_norm', 'interpolate', 'l2_normalize', 'label_smooth', 'layer_norm', 'leaky_relu',
        'linear_chain_crf', 'lod_append', 'lod_reset', 'log', 'log1p', 'log_loss', 'log_softmax',
        'logical_and', 'logical_not', 'logical_or', 'logical_xor', 'logsumexp', 'lrn', 'matmul', 'maxout',
        'mean', 'mean_iou', 'merge_selected_rows', 'meshgrid', 'mish', 'mul', 'multiplex', 'nonzero',
        'one_hot', 'pad', 'pad2d', 'pad_constant_like', 'pixel_shuffle', 'pool2d', 'pool3d', 'pow', 'prelu',
        'prroi_pool', 'psroi_pool', 'py_func', 'randint', 'randn', 'random_crop', 'randperm', 'rank',
        'reduce_all', 'reduce_any', 'reduce_max', 'reduce_mean', 'reduce_min', 'reduce_prod', 'reduce_sum',
        'relu', 'relu6', 'reshape', 'resize_bilinear', 'resize_nearest', 'resize_trilinear', 'roi_align',
        'roi_pool', 'roll', 'row_conv', 'sampling_id', 'scale', 'scatter', 'scatter_nd', 'scatter_nd_add',
        'selu', 'shape', 'shard_index', 'shuffle_channel', 'sign', 'similarity_focus', 'size', 'slice',
        'smooth_l1', 'soft_relu', 'softmax', 'space_to_depth', 'spectral_norm', 'split', 'squeeze', 'stack',
        'stanh', 'strided_slice', 'sum', 'swish', 't', 'temporal_shift', 'topk', 'transpose', 'unfold',
        'uniform_random', 'uniform_random_batch_size_like', 'unique', 'unique_with_counts', 'unsqueeze',
        'unstack', 'where',
    ),
    'ops': (
        'abs', 'acos', 'asin', 'atan', 'ceil', 'cos', 'cumsum', 'erf', 'exp', 'floor', 'gelu', 'hard_shrink',
        'logsigmoid', 'reciprocal', 'round', 'rsqrt', 'sigmoid', 'sin', 'softplus', 'softshrink', 'softsign',
        'sqrt', 'square', 'tanh', 'tanh_shrink', 'thresholded_relu',
    ),
    'sequence_lod': (
        'sequence_concat', 'sequence_conv', 'sequence_enumerate', 'sequence_expand', 'sequence_expand_as',
        'sequence_first_step', 'sequence_last_step', 'sequence_mask', 'sequence_pad', 'sequence_pool',
        'sequence_reshape', 'sequence_reverse', 'sequence_scatter', 'sequence_slice', 'sequence_softmax',
        'sequence_unpad',
    ),
    'tensor': (
        'arange', 'argmax', 'argmin', 'argsort', 'assign', 'cast', 'concat', 'create_global_var',
        'create_parameter', 'create_tensor', 'diag', 'eye', 'fill_constant', 'fill_constant_batch_size_like',
        'full', 'full_like', 'has_inf', 'has_nan', 'isfinite', 'kron', 'linspace', 'ones', 'ones_like',
        'range', 'reverse', 'sums', 'tensor_array_to_tensor', 'trace', 'tril', 'triu', 'zeros', 'zeros_like',
    ),
}


def install(package):
    """Give each layers module a module __getattr__ resolving its Paddle names from the package."""
    for mod_name, names in PADDLE_MODULE_NAMES.items():
        module = sys.modules.get(package.__name__ + "." + mod_name)
        if module is None:
            continue
        wanted = frozenset(names)

        def _getattr(name, _wanted=wanted, _mod=module.__name__):
            if name in _wanted and name in package.__dict__:
                return package.__dict__[name]
            raise AttributeError("module %r has no attribute %r" % (_mod, name))
        module.__getattr__ = _getattr
