"""read: the head op a non-iterable DataLoader / PyReader puts in the main program; each run takes the
loader's next batch (fluid.core.EOFException after the last one)."""

from ...feeds import FeedSpec
from ...loaders import loader_for
from ....ops import kernel
from .common import attr


@kernel("read")
def read(op, ctx):
    reader_id = attr(op, "reader_id")
    specs = [FeedSpec(ctx.var(n), ctx.device) for n in op.output("Out")]   # the executor's feed checks, reused

    def k():
        feed = loader_for(reader_id)._next_feed()
        values, lods = [], []
        for spec in specs:
            if spec.name not in feed:
                raise ValueError("read: the DataLoader's batch has no value for %s" % spec.name)
            v = spec.convert(feed[spec.name])
            t, lod = v if spec.lod else (v, None)
            values.append(t)
            lods.append(lod)
        return values, lods
    return k


@kernel("create_double_buffer_reader")
def create_double_buffer_reader(op, ctx):
    """Paddle's prefetching wrapper around a reader; the DataLoader behind `read` prefetches already, so
    its Out (the reader `read` names) holds nothing."""
    return lambda: None
