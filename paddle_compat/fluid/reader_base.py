"""fluid.reader's base pieces: DataLoaderBase (the abstract loader GeneratorLoader derives from, with the check
Paddle runs on each batch a generator yields) and keep_data_loader_order (Paddle's switch for the order of
batches across places; one place per run here keeps the order either way, so it is recorded and reported)."""

import numpy as np

__all__ = ["DataLoaderBase", "keep_data_loader_order"]

_KEEP_ORDER = [True]


def keep_data_loader_order(*args):
    """keep_data_loader_order() -> the setting; keep_data_loader_order(flag) sets it (a bool)."""
    if not args:
        return _KEEP_ORDER[0]
    if len(args) != 1 or not isinstance(args[0], bool):
        raise AssertionError("keep_data_loader_order takes one bool, got %r" % (args,))
    _KEEP_ORDER[0] = args[0]


class DataLoaderBase(object):
    def __init__(self):
        self._places = None

    def __call__(self):
        return self

    def next(self):
        return self.__next__()

    def __iter__(self):
        raise NotImplementedError()

    def __next__(self):
        raise NotImplementedError()

    @classmethod
    def _check_input_array(cls, item):
        """`item` as a regular ndarray; ragged nested lists are refused with Paddle's TypeError."""
        try:
            arr = np.asarray(item)
        except ValueError:      # NumPy 2 refuses ragged lists outright; NumPy 1 made an object array
            arr = np.empty(0, dtype=object)
        if arr.dtype == object:
            raise TypeError(
                "\n\tFaild to convert input data to a regular ndarray :\n\t* Usually this means the input data "
                "contains nested lists with different lengths. \n\t* Check the reader function passed to "
                "'decorate_batch_generator' to locate the data causes this issue.\n\t* Please consider using "
                "'fluid.create_lod_tensor' to convert it to a LoD-Tensor.")
        return arr
