"""Paddle's slicing rule: how a parameter (and its gradient) is cut into row blocks for the pservers.

A block is always a range of rows (dim 0): for rank >= 2 Paddle rounds the block size up to a multiple of
prod(shape[1:]), and for rank 1 a row is an element.

A distributed lookup table (embedding is_distributed=True) is cut by its own rule, `table_rows`: shard i
holds the contiguous rows [i * ceil(H/n), min(H, (i+1) * ceil(H/n))) and lives on pserver i (endpoint
order), whatever the dispatcher; min_block_size does not apply. Contiguous ranges keep each shard a plain
row block (checkpoint shards concatenate back into the table) and make a row's owner a division.
"""

__all__ = ["block_rows", "table_rows", "VarBlock", "block_name", "slice_variable"]


def _prod(xs):
    out = 1
    for x in xs:
        out *= int(x)
    return out


def _ceil_div(a, b):
    return -(-a // b)


def block_rows(shape, slice_count, min_block_size):
    """[(row offset, rows), ...] of the blocks of a variable of `shape` over `slice_count` pservers.

    numel = prod(shape); max = max(1, numel // min_block_size); split = min(slice_count, max);
    block = ceil(numel / split), rounded up to whole rows; split = ceil(numel / block)."""
    shape = [int(d) for d in shape]
    if not shape or any(d <= 0 for d in shape):
        raise ValueError("cannot slice a variable of shape %s into blocks (every dim must be positive)" % shape)
    numel = _prod(shape)
    split = max(1, min(int(slice_count), max(1, numel // int(min_block_size))))
    block = _ceil_div(numel, split)
    width = _prod(shape[1:]) if len(shape) >= 2 else 1
    if block % width:
        block += width - block % width
    split = _ceil_div(numel, block)
    rows = block // width
    return [(i * rows, min(rows, shape[0] - i * rows)) for i in range(split)]


def slice_variable(var_list, slice_count, min_block_size):
    """Paddle's distribute_transpiler.slice_variable: ["<name>:<block index>:<numel of the block>", ...] for
    each variable's blocks, in order (block_rows' rule)."""
    out = []
    for var in var_list:
        width = _prod(var.shape[1:]) if len(var.shape) >= 2 else 1
        for i, (_, rows) in enumerate(block_rows(var.shape, slice_count, min_block_size)):
            out.append("%s:%d:%d" % (var.name, i, rows * width))
    return out


def table_rows(height, pservers):
    """[(row offset, rows), ...] of a distributed table's shards: ceil(H/n) contiguous rows each, shard i
    on pserver i. A table of fewer rows than pservers leaves the last pservers without a shard."""
    height, pservers = int(height), int(pservers)
    if height <= 0 or pservers <= 0:
        raise ValueError("cannot shard a table of %d rows over %d pservers" % (height, pservers))
    section = _ceil_div(height, pservers)
    return [(off, min(section, height - off)) for off in range(0, height, section)]


def block_name(name, index, nblocks):
    """Paddle's block var name: `w.block0` when the variable is cut, else the name itself."""
    return "%s.block%d" % (name, index) if nblocks > 1 else name


class VarBlock:
    """One row block of a parameter: where it lives and what it is called on the trainer and the pserver."""

    __slots__ = ("param", "grad", "index", "nblocks", "offset", "rows", "shape", "endpoint", "table")

    def __init__(self, param, grad, index, nblocks, offset, rows, full_shape, table=False):
        self.param, self.grad = param, grad
        self.index, self.nblocks = index, nblocks
        # a table shard is always named `<table>.block<i>`, even when it is the only one: its checkpoint
        # files are then never confused with a whole table saved by a local program
        self.table = bool(table)
        self.offset, self.rows = offset, rows
        self.shape = [rows] + [int(d) for d in full_shape[1:]]
        self.endpoint = None

    @property
    def split(self):
        return self.nblocks > 1 or self.table

    def _named(self, name):
        return "%s.block%d" % (name, self.index) if self.table else block_name(name, self.index, self.nblocks)

    @property
    def name(self):
        """The param block's name (what the dispatcher hashes and recv asks for)."""
        return self._named(self.param)

    @property
    def merged_grad(self):
        """The gradient block's name on the pserver after the trainers' parts are summed."""
        return self._named(self.grad)

    def state_name(self, var):
        """Name of a per-parameter optimizer state var (moment, beta pow) for this block."""
        return self._named(var)

    def trainer_grad(self, trainer_id, suffixed):
        """The gradient block's name as trainer `trainer_id` sends it (`w@GRAD.block0.trainer_1`)."""
        base = self.merged_grad
        return "%s.trainer_%d" % (base, trainer_id) if suffixed else base

    def __repr__(self):
        return "<VarBlock %s rows %d+%d on %s>" % (self.name, self.offset, self.rows, self.endpoint)
