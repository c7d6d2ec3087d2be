"""Paddle's fluid.unique_name (generate('fc') -> fc_0, fc_1, ...; guard() gives a fresh namespace): the IR's
unique names, paddle_compat/ir/unique_name.py, under the module path scripts import them from."""

from ..ir import unique_name as _impl
from ..ir.unique_name import (UniqueNameGenerator, generate, generate_with_ignorable_key, guard,  # noqa: F401
                              switch)

__all__ = ["generate", "generate_with_ignorable_key", "switch", "guard", "UniqueNameGenerator"]


def __getattr__(name):
    # `generator`, the generator in use, is rebound by switch() and guard(): read it where it lives
    if name == "generator":
        return _impl.generator
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
