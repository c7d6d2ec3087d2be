"""fluid.incubate.data_generator: turn raw lines into Paddle's MultiSlot text format.

A user subclasses MultiSlotDataGenerator, overrides generate_sample(line) (a function returning an
iterator of [(slot name, [values...]), ...]) and optionally generate_batch(samples); the script then runs
as a dataset's pipe command (`run_from_stdin`). Each output line is, for every slot in order, the number
of values followed by the values: "3 1 2 3 1 0\n".
"""

import sys

__all__ = ["MultiSlotDataGenerator", "MultiSlotStringDataGenerator"]


class DataGenerator:
    """Base class: batching and the stdin/memory drivers; subclasses define the line format (_gen_str)."""

    def __init__(self):
        self._proto_info = None
        self.batch_size_ = 32

    def _set_line_limit(self, line_limit):
        if not isinstance(line_limit, int):
            raise ValueError("line_limit must be an int, got %s" % type(line_limit).__name__)
        if line_limit < 1:
            raise ValueError("line_limit must be at least 1, got %d" % line_limit)
        self._line_limit = line_limit

    def set_batch(self, batch_size):
        """How many samples generate_batch receives at a time."""
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError("set_batch: batch_size must be a positive int, got %r" % (batch_size,))
        self.batch_size_ = batch_size

    def generate_sample(self, line):
        raise NotImplementedError("override generate_sample(line) to return a function yielding "
                                  "[(name, [feasign, ...]), ...] or ((name, [feasign, ...]), ...)")

    def generate_batch(self, samples):
        def local_iter():
            yield from samples
        return local_iter

    def _gen_str(self, line):
        raise NotImplementedError("use MultiSlotDataGenerator or MultiSlotStringDataGenerator")

    def _emit(self, samples, out):
        for sample in self.generate_batch(samples)():
            out.write(self._gen_str(sample))

    def _drive(self, sample_iters, out):
        # Samples are grouped into batches of batch_size_ for generate_batch; None samples are dropped.
        pending = []
        for it in sample_iters:
            for sample in it():
                if sample is None:
                    continue
                pending.append(sample)
                if len(pending) == self.batch_size_:
                    self._emit(pending, out)
                    pending = []
        if pending:
            self._emit(pending, out)

    def run_from_memory(self):
        """Write the samples of generate_sample(None) to stdout (for debugging and benchmarks)."""
        self._drive([self.generate_sample(None)], sys.stdout)

    def run_from_stdin(self):
        """Read raw lines from stdin, write MultiSlot lines to stdout (a dataset's pipe command)."""
        self._drive((self.generate_sample(line) for line in sys.stdin), sys.stdout)


def _as_sample(line, example):
    # Python 2 era generators yield zip(names, values), a list there; Paddle 1.8.5 under Python 3
    # rejects the zip object. Any other iterable of pairs is taken as its list.
    if isinstance(line, (list, tuple)):
        return line
    if isinstance(line, (str, bytes, dict)) or not hasattr(line, "__iter__"):
        raise ValueError("generate_sample must yield a list or tuple such as %s, got %s"
                         % (example, type(line).__name__))
    return list(line)


def _check_item(item):
    if not isinstance(item, (list, tuple)) or len(item) != 2:
        raise ValueError("each slot must be a (name, [values]) pair, got %r" % (item,))
    name, elements = item
    if not isinstance(name, str):
        raise ValueError("slot name must be a str, got %s" % type(name).__name__)
    if not isinstance(elements, list):
        raise ValueError("slot '%s': values must be a list, got %s" % (name, type(elements).__name__))
    if not elements:
        raise ValueError("slot '%s' has no values: every slot needs at least one, pad it in generate_sample"
                         % name)
    return name, elements


class MultiSlotStringDataGenerator(DataGenerator):
    """Values are strings written as given (no type tracking)."""

    def _gen_str(self, line):
        line = _as_sample(line, "[('words', ['1926', '08', '17']), ('label', ['1'])]")
        parts = []
        for name, elements in line:
            parts.append(str(len(elements)))
            parts.extend(elements)
        return " ".join(parts) + "\n"


class MultiSlotDataGenerator(DataGenerator):
    """Values are ints or floats; a slot that ever holds a float is a float slot (`_proto_info`).

    The first sample fixes the slot names and their order; later samples must match them. Unlike
    Paddle 1.8.5 under Python 3 (a NameError on `long`), a value of another type gets a ValueError.
    """

    def _gen_str(self, line):
        line = _as_sample(line, "[('words', [1926, 8, 17]), ('label', [1])]")
        first = self._proto_info is None
        if first:
            self._proto_info = []
        elif len(line) != len(self._proto_info):
            raise ValueError("a sample has %d slots but the first had %d (%s)"
                             % (len(line), len(self._proto_info), [n for n, _ in self._proto_info]))
        parts = []
        for index, item in enumerate(line):
            name, elements = _check_item(item)
            if first:
                self._proto_info.append((name, "uint64"))
            elif name != self._proto_info[index][0]:
                raise ValueError("slot %d is named '%s' but the first sample named it '%s'"
                                 % (index, name, self._proto_info[index][0]))
            parts.append(str(len(elements)))
            for elem in elements:
                if isinstance(elem, float):
                    self._proto_info[index] = (name, "float")
                elif not isinstance(elem, int):
                    raise ValueError("slot '%s': values must be int or float, got %s (%r)"
                                     % (name, type(elem).__name__, elem))
                parts.append(str(elem))
        return " ".join(parts) + "\n"
