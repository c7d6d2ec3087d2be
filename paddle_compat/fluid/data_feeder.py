"""DataFeeder: a minibatch of Python samples -> {variable name: LoDTensor}, Paddle's rules.

Each sample is a list/tuple with one field per variable of feed_list. A field of a lod_level=0 variable is
one row (a number or a list); a field of a lod_level=1 variable is a sequence of rows (e.g. a list of ids).
The stacked rows are reshaped to the variable's shape when their rank differs (so int64 id lists become
[N, 1]); the sequence lengths become the LoD.
"""

import itertools

import numpy as np

from ..ir import CUDAPlace, LoDTensor, Variable, cpu_places, cuda_places, default_main_program, dtype_name

__all__ = ["DataFeeder"]


class _SlotConverter:
    """Collects one variable's field across the samples of a batch (Paddle's DataToLoDTensorConverter)."""

    def __init__(self, name, place, lod_level, shape, dtype):
        self.name = name
        self.place = place
        self.lod_level = lod_level
        # more than one unknown dim: the shape cannot guide a reshape (Paddle drops it too)
        self.shape = None if sum(1 for d in shape if d < 0) > 1 else list(shape)
        self.dtype = np.dtype(dtype_name(dtype))

    def convert(self, fields):
        lengths = [[] for _ in range(self.lod_level)]
        rows = fields
        for level in range(self.lod_level):
            try:
                lengths[level] = [len(seq) for seq in rows]
            except TypeError:
                raise TypeError("DataFeeder: '%s' has lod_level=%d, so each sample's field must be a sequence "
                                "(e.g. a list of ids) at nesting level %d" % (self.name, self.lod_level, level))
            rows = list(itertools.chain.from_iterable(rows))
        try:
            arr = np.array(rows, dtype=self.dtype)
        except (ValueError, TypeError) as e:
            raise ValueError("DataFeeder: the fields fed to '%s' do not form a %s array (%s)"
                             % (self.name, self.dtype.name, e))
        if self.shape:
            if arr.ndim != len(self.shape):
                try:
                    arr = arr.reshape(self.shape)
                except ValueError:
                    raise ValueError("DataFeeder: '%s' is declared with shape %s but the batch has shape %s"
                                     % (self.name, self.shape, list(arr.shape)))
            elif any(a != b and a >= 0 and b >= 0 for a, b in zip(self.shape, arr.shape)):
                raise ValueError("DataFeeder: '%s' is declared with shape %s but the batch has shape %s"
                                 % (self.name, self.shape, list(arr.shape)))
        t = LoDTensor()
        t.set(arr, self.place)
        if self.lod_level > 0:
            t.set_recursive_sequence_lengths(lengths)
        return t


class DataFeeder:
    def __init__(self, feed_list, place, program=None):
        if program is None:
            program = default_main_program()
        if not isinstance(feed_list, (list, tuple)):
            raise TypeError("DataFeeder: feed_list must be a list of Variables or names, got %s"
                            % type(feed_list).__name__)
        self.feed_names, self.feed_shapes, self.feed_dtypes, self.feed_lod_level = [], [], [], []
        for v in feed_list:
            if isinstance(v, str):
                v = program.global_block().var(v)
            if not isinstance(v, Variable):
                raise TypeError("DataFeeder: feed_list must hold Variables or names, got %r" % (v,))
            self.feed_names.append(v.name)
            self.feed_shapes.append(list(v.shape))
            self.feed_dtypes.append(v.dtype)
            self.feed_lod_level.append(v.lod_level)
        self.place = place

    def _converters(self):
        return [_SlotConverter(n, self.place, lod, shape, dt) for n, lod, shape, dt in
                zip(self.feed_names, self.feed_lod_level, self.feed_shapes, self.feed_dtypes)]

    def feed(self, iterable):
        """iterable: the samples of one minibatch. Returns {name: LoDTensor}."""
        samples = list(iterable)
        n = len(self.feed_names)
        for i, s in enumerate(samples):
            if len(s) != n:
                raise ValueError("DataFeeder: sample %d has %d fields but feed_list has %d variables (%s)"
                                 % (i, len(s), n, ", ".join(self.feed_names)))
        columns = list(zip(*samples)) if samples else [[] for _ in range(n)]
        return {c.name: c.convert(list(col)) for c, col in zip(self._converters(), columns)}

    def feed_parallel(self, iterable, num_places=None):
        """iterable: one minibatch per place. Yields one feed dict per place."""
        batches = list(iterable)
        if num_places is not None and len(batches) != num_places:
            raise ValueError("DataFeeder.feed_parallel: %d minibatches for %d places" % (len(batches), num_places))
        for b in batches:
            yield self.feed(b)

    def _number_of_places(self, num_places):
        """Paddle's rule: num_places if given, else every device of the place's kind (CPU_NUM for CPUs)."""
        if num_places is not None:
            return int(num_places)
        return len(cuda_places() if isinstance(self.place, CUDAPlace) else cpu_places())

    def decorate_reader(self, reader, multi_devices, num_places=None, drop_last=True):
        """A reader of minibatches -> a reader of feed dicts (lists of dicts with multi_devices)."""
        def decorated():
            if not multi_devices:
                for batch in reader():
                    yield self.feed(batch)
                return
            n = self._number_of_places(num_places)
            group = []
            for batch in reader():
                group.append(batch)
                if len(group) == n:
                    yield list(self.feed_parallel(group, n))
                    group = []
            if group and not drop_last:
                raise ValueError("DataFeeder.decorate_reader: %d minibatches left over for %d places; "
                                 "use drop_last=True" % (len(group), n))
        return decorated
