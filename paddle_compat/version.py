"""Version facts in the shape of Paddle 1.8's `paddle.version` (the Fluid API level this package implements).

Scripts compare these against the Paddle release they were written for, so they name Paddle 1.8.5, whose
behaviour the project reproduces; the package's own version is `paddle_compat.__version__`.
"""

import re

full_version = "1.8.5"
major = "1"
minor = "8"
patch = "5"
rc = "0"
istaged = True
commit = "paddle_compat"
with_mkl = "OFF"


def show():
    print("full_version:", full_version)
    print("commit:", commit)


def mkl():
    return with_mkl


def _version(v, arg):
    if not isinstance(v, str):
        raise TypeError("require_version: %s must be a str, got %s" % (arg, type(v).__name__))
    if not re.match(r"^\d+(\.\d+){0,3}$", v):
        raise ValueError("require_version: %s must look like '1.8.0', got %r" % (arg, v))
    parts = [int(p) for p in v.split(".")]
    return parts + [0] * (4 - len(parts))


def require_version(min_version, max_version=None):
    """Raise unless the Fluid API version implemented here (1.8.5) is in [min_version, max_version]."""
    have = _version(full_version, "version")
    lo = _version(min_version, "min_version")
    hi = None if max_version is None else _version(max_version, "max_version")
    if have < lo or (hi is not None and have > hi):
        raise Exception("this script requires Fluid %s%s; paddle_compat implements the Fluid %s API"
                        % (min_version, "" if max_version is None else " to " + max_version, full_version))
