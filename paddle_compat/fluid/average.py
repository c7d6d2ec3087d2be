"""fluid.average.WeightedAverage: a running weighted mean of numbers or arrays (deprecated in Paddle 1.8 for
fluid.metrics, which warns of it as 1.8 does)."""

import warnings

import numpy as np

__all__ = ["WeightedAverage"]


def _is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) or \
        isinstance(v, np.ndarray) and v.shape == (1,)


def _is_number_or_array(v):
    return _is_number(v) or isinstance(v, np.ndarray)


class WeightedAverage:
    """add(value, weight) values (a number or an array) and eval() their weighted mean."""

    def __init__(self):
        warnings.warn("The %s is deprecated, please use fluid.metrics.Accuracy instead." % type(self).__name__,
                      Warning)
        self.reset()

    def reset(self):
        self.numerator = None
        self.denominator = None

    def add(self, value, weight):
        if not _is_number_or_array(value):
            raise ValueError("The 'value' must be a number(int, float) or a numpy ndarray.")
        if not _is_number(weight):
            raise ValueError("The 'weight' must be a number(int, float).")
        if self.numerator is None or self.denominator is None:
            self.numerator = value * weight
            self.denominator = weight
        else:
            self.numerator = self.numerator + value * weight
            self.denominator = self.denominator + weight

    def eval(self):
        if self.numerator is None or self.denominator is None:
            raise ValueError("There is no data to be averaged in WeightedAverage.")
        return self.numerator / self.denominator
