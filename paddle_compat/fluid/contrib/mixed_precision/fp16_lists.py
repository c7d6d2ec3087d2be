"""Which ops run in low precision (Paddle 1.8's AutoMixedPrecisionLists)."""

__all__ = ["AutoMixedPrecisionLists"]

# Ops that are fast and numerically safe in float16/bfloat16 (matrix products).
WHITE_LIST = {"conv2d", "matmul", "mul"}
# Ops whose results need float32 range or precision.
BLACK_LIST = {"exp", "square", "log", "mean", "sum", "cos_sim", "softmax", "softmax_with_cross_entropy",
              "sigmoid_cross_entropy_with_logits", "cross_entropy", "cross_entropy2"}


class AutoMixedPrecisionLists:
    """White ops run in low precision (their float32 inputs are cast down and their outputs cast back up);
    everything else runs in float32. custom_white_list / custom_black_list move op types between the two."""

    def __init__(self, custom_white_list=None, custom_black_list=None):
        self._custom_white_list = set(custom_white_list or ())
        self._custom_black_list = set(custom_black_list or ())
        both = self._custom_white_list & self._custom_black_list
        if both:
            raise ValueError("custom_white_list and custom_black_list overlap: %s" % sorted(both))
        self.white_list = (set(WHITE_LIST) | self._custom_white_list) - self._custom_black_list
        self.black_list = (set(BLACK_LIST) | self._custom_black_list) - self._custom_white_list
        # Paddle's gray list (ops that follow their inputs' precision) is empty here: non-white ops run in float32
        self.gray_list = set()
