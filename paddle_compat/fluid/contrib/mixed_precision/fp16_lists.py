"""Which ops run in low precision (Paddle 1.8's AutoMixedPrecisionLists).

white: always run in float16 (their float32 inputs are cast down, their outputs become float16);
black: always run in float32 (their float16 inputs are cast up);
gray: follow the ops that produce their inputs (black if any of them is black, else white if any is white,
else left as they are). An op in none of the lists counts as black.
"""

import copy

# Paddle 1.8's default lists, part of its API (scripts read them and extend them through
# AutoMixedPrecisionLists): the AMP pass's policy, not facts of the ops, so they stay here.

__all__ = ["AutoMixedPrecisionLists"]

# fast and numerically safe in float16 (matrix products, on tensor cores where there are some)
white_list = {"conv2d", "matmul", "mul"}

# need float32's range or precision, and their effect shows downstream
black_list = {"exp", "square", "log", "mean", "sum", "cos_sim", "softmax", "softmax_with_cross_entropy",
              "sigmoid_cross_entropy_with_logits", "cross_entropy", "cross_entropy2"}

# safe in float16 unless an upstream black op makes them unsafe, or without numerical effect (reshapes)
gray_list = {
    "elementwise_add", "elementwise_sub", "elementwise_mul", "elementwise_div", "elementwise_max",
    "elementwise_min", "elementwise_pow", "elementwise_mod", "elementwise_floordiv", "batch_norm", "tanh",
    "sigmoid", "lookup_table", "top_k", "pool2d", "pool3d", "dropout", "relu", "relu6", "leaky_relu",
    "soft_relu", "flatten2", "stack", "unstack", "uniform_random_batch_size_like", "gaussian_random",
    "gaussian_random_batch_size_like", "slice", "rank", "scale", "transpose2", "reshape2", "gather",
    "fill_constant", "get_tensor_from_selected_rows", "sign", "cast",
}


class AutoMixedPrecisionLists:
    """The white/black/gray op lists, updated by the user's custom lists: an op of custom_white_list leaves
    the black (or gray) list for the white one, an op of custom_black_list the white (or gray) list for the
    black one. custom_black_varnames: ops reading or writing any of these variables run in float32."""

    def __init__(self, custom_white_list=None, custom_black_list=None, custom_black_varnames=None):
        self._custom_white_list = custom_white_list
        self._custom_black_list = custom_black_list
        self.white_list = copy.copy(white_list)
        self.black_list = copy.copy(black_list)
        self.gray_list = copy.copy(gray_list)
        self.black_varnames = copy.copy(custom_black_varnames)
        self._update_list()

    def _update_list(self):
        if self._custom_white_list and self._custom_black_list:
            both = set(self._custom_white_list) & set(self._custom_black_list)
            if both:
                # Paddle 1.8's message, with the op types added
                raise ValueError("Custom white list overlap custom black list: %s" % sorted(both))
        for op_type in self._custom_white_list or ():
            self.black_list.discard(op_type)
            self.gray_list.discard(op_type)
            self.white_list.add(op_type)
        for op_type in self._custom_black_list or ():
            self.white_list.discard(op_type)
            self.gray_list.discard(op_type)
            self.black_list.add(op_type)
