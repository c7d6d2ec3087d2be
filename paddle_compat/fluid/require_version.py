"""fluid.require_version: checks the Paddle API level this package implements (paddle_compat.version)."""

import re

from .. import version

__all__ = ["require_version"]


def _parse(v, what):
    if not isinstance(v, str) or not re.match(r"^\d+(\.\d+){0,3}$", v):
        raise ValueError("require_version: %s must look like '1.8' or '1.8.5', got %r" % (what, v))
    parts = [int(x) for x in v.split(".")]
    return parts + [0] * (4 - len(parts))


def require_version(min_version, max_version=None):
    lo = _parse(min_version, "min_version")
    hi = _parse(max_version, "max_version") if max_version is not None else None
    have = _parse(version.full_version, "installed version")
    if have < lo or (hi is not None and have > hi):
        raise Exception("this script requires Paddle %s%s; paddle_compat implements Paddle %s's Fluid API"
                        % (min_version, " to %s" % max_version if max_version else " or later",
                           version.full_version))
