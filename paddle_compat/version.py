"""Version facts in the shape of Paddle 1.8's `paddle.version` (the Fluid API level this package implements).

Scripts compare these against the Paddle release they were written for, so they name Paddle 1.8.5, whose
behaviour the project reproduces; the package's own version is `paddle_compat.__version__`.
"""

import re
import warnings

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
    """Raise unless the Fluid API version implemented here (1.8.5) is in [min_version, max_version].

    The version is read from this module's major/minor/patch/rc at each call (Paddle's own test patches them);
    0.0.0.0, a development build in Paddle, warns and checks nothing."""
    lo = _version(min_version, "min_version")
    hi = None if max_version is None else _version(max_version, "max_version")
    have = [int(major), int(minor), int(patch), int(rc)]
    if have == [0, 0, 0, 0]:
        warnings.warn("PaddlePaddle version %s%s required, but %s installed (a development version): not checked"
                      % (min_version, " or higher" if max_version is None else " to " + max_version, full_version))
        return
    if have < lo or (hi is not None and have > hi):
        raise Exception("VersionError: this script requires Fluid %s%s; paddle_compat implements the Fluid %s API"
                        % (min_version, " or higher" if max_version is None else " to " + max_version, full_version))
