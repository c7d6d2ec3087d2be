"""Paddle's fleet.base.mode: which fleet a program was built for."""

__all__ = ["Mode"]


class Mode:
    TRANSPILER = 1
    PSLIB = 2
    COLLECTIVE = 3
