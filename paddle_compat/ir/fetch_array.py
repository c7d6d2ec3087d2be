"""The ndarray type Executor.run returns: a plain numpy array that also converts to a Python number when it
holds one element, as Paddle 1.8's fetches did under the numpy of its time.

Fluid scripts fetch a loss as shape [1] and then write `float(loss)` or `'%f' % loss`. numpy >= 2.4 refuses
float() of any array that is not 0-d, so those unmodified scripts would die at their first print. Rather than
bound numpy below 2.4, fetched arrays are this ndarray subclass (isinstance(x, np.ndarray) holds; shape,
dtype and values are unchanged; every numpy function accepts it) with size-1 float()/int() restored.
"""

import numpy as np

__all__ = ["FetchArray", "as_fetch"]


class FetchArray(np.ndarray):
    def _one(self, what):
        if self.size != 1:
            raise TypeError("only size-1 arrays can be converted to Python %s (this fetch has shape %s)"
                            % (what, list(self.shape)))
        return np.ndarray.item(self)

    def __float__(self):
        return float(self._one("float"))

    def __int__(self):
        return int(self._one("int"))

    def __complex__(self):
        return complex(self._one("complex"))


def as_fetch(a):
    """A fetched ndarray as FetchArray (a view: no copy, unless its memory is not in C order -- a
    channels-last activation, FLAGS_conv_channels_last -- when it is made so, as Paddle's arrays are)."""
    if type(a) is not np.ndarray:
        return a
    if not a.flags.c_contiguous:
        a = np.ascontiguousarray(a)
    return a.view(FetchArray)
