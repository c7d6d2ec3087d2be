"""EnforceNotMet: the error Paddle's C++ checks raise (fluid.core.EnforceNotMet). Here the lowering's errors
(a program that cannot run as given, an op failing while it runs) derive from it, so scripts and tests that
catch core.EnforceNotMet catch them; it is a RuntimeError, as Paddle's is an Exception its scripts catch
broadly. Lives below the backends so both they and fluid.core can name it."""

__all__ = ["EnforceNotMet"]


class EnforceNotMet(RuntimeError):
    pass
