"""fluid.wrapped_decorator: decorators that keep the wrapped function's signature (Paddle 1.8's helpers)."""

import contextlib
import functools

__all__ = ["wrap_decorator", "signature_safe_contextmanager"]


def wrap_decorator(decorator_func):
    """Turn `decorator_func(func) -> wrapper` into a decorator whose result keeps func's name and docstring."""
    def outer(func):
        return functools.wraps(func)(decorator_func(func))
    return outer


signature_safe_contextmanager = contextlib.contextmanager
