"""Math layers whose ops are defined in paddle_compat/ops/defs (shapes, kernel and grad facts there)."""

from .helpers import append_defined, check_variable, single

__all__ = ["cumsum"]


def cumsum(x, axis=None, exclusive=None, reverse=None):
    check_variable(x, "x", "cumsum")
    attrs = {"axis": -1 if axis is None else int(axis), "exclusive": bool(exclusive), "reverse": bool(reverse)}
    return single(append_defined("cumsum", {"X": x}, attrs))
