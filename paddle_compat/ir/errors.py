"""Exceptions the runtime raises under Paddle's names."""

__all__ = ["EOFException"]


class EOFException(Exception):
    """Raised by Executor.run when a non-iterable DataLoader / PyReader has no more batches
    (Paddle's fluid.core.EOFException); call loader.reset() and start() again for the next pass."""
