"""fluid.log_helper: Paddle 1.8's get_logger."""

import logging

__all__ = ["get_logger"]


def get_logger(name, level, fmt=None):
    """A logger that writes to stderr with `fmt`, not propagated to the root logger (as Paddle's)."""
    logger = logging.getLogger(name)
    logger.setLevel(level)
    handler = logging.StreamHandler()
    if fmt:
        handler.setFormatter(logging.Formatter(fmt=fmt))
    logger.addHandler(handler)
    logger.propagate = False
    return logger
