"""Comparison of recorded JSON results (nested dicts and lists of numbers) with ours: floats within the
caller's tolerances, everything else equal."""

import numpy as np


def nested_close(a, b, rtol, atol):
    if isinstance(a, dict) and isinstance(b, dict):
        return sorted(a) == sorted(b) and all(nested_close(a[k], b[k], rtol, atol) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(nested_close(x, y, rtol, atol) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return bool(np.isclose(a, b, rtol=rtol, atol=atol))
    return a == b
