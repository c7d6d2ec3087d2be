"""Exceptions the runtime raises under Paddle's names."""

__all__ = ["EOFException", "EnforceNotMet", "unittest_throw_exception"]


class EOFException(Exception):
    """Raised by Executor.run when a non-iterable DataLoader / PyReader has no more batches
    (Paddle's fluid.core.EOFException); call loader.reset() and start() again for the next pass."""


class EnforceNotMet(RuntimeError):
    """The error Paddle's C++ checks raise (fluid.core.EnforceNotMet). Here the lowering's errors (a program that
    cannot run as given, an op failing while it runs) derive from it, so scripts and tests that catch
    core.EnforceNotMet catch them; it is a RuntimeError, as Paddle's is an Exception its scripts catch broadly."""


def unittest_throw_exception():
    """core.__unittest_throw_exception__: Paddle's test of its error type."""
    raise EnforceNotMet("test exception")
