"""Paddle's slicing rule: how a parameter (and its gradient) is cut into row blocks for the pservers.

A block is always a range of rows (dim 0): for rank >= 2 Paddle rounds the block size up to a multiple of
prod(shape[1:]), and for rank 1 a row is an element.
"""

__all__ = ["block_rows", "VarBlock", "block_name"]


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


def block_name(name, index, nblocks):
    """Paddle's block var name: `w.block0` when the variable is cut, else the name itself."""
    return "%s.block%d" % (name, index) if nblocks > 1 else name


class VarBlock:
    """One row block of a parameter: where it lives and what it is called on the trainer and the pserver."""

    __slots__ = ("param", "grad", "index", "nblocks", "offset", "rows", "shape", "endpoint")

    def __init__(self, param, grad, index, nblocks, offset, rows, full_shape):
        self.param, self.grad = param, grad
        self.index, self.nblocks = index, nblocks
        self.offset, self.rows = offset, rows
        self.shape = [rows] + [int(d) for d in full_shape[1:]]
        self.endpoint = None

    @property
    def split(self):
        return self.nblocks > 1

    @property
    def name(self):
        """The param block's name (what the dispatcher hashes and recv asks for)."""
        return block_name(self.param, self.index, self.nblocks)

    @property
    def merged_grad(self):
        """The gradient block's name on the pserver after the trainers' parts are summed."""
        return block_name(self.grad, self.index, self.nblocks)

    def state_name(self, var):
        """Name of a per-parameter optimizer state var (moment, beta pow) for this block."""
        return block_name(var, self.index, self.nblocks)

    def trainer_grad(self, trainer_id, suffixed):
        """The gradient block's name as trainer `trainer_id` sends it (`w@GRAD.block0.trainer_1`)."""
        base = self.merged_grad
        return "%s.trainer_%d" % (base, trainer_id) if suffixed else base

    def __repr__(self):
        return "<VarBlock %s rows %d+%d on %s>" % (self.name, self.offset, self.rows, self.endpoint)
