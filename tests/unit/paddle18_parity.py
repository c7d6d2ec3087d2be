"""Loads a family's recorded Paddle 1.8.5 cases (tests/data/paddle18/make_<family>.py + <family>.npz)."""

import importlib.util
import os
import sys

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18")


def load_family(family):
    """-> (cases, harness module, npz path)."""
    if DATA not in sys.path:
        sys.path.insert(0, DATA)
    harness = importlib.import_module("parity_harness")
    spec = importlib.util.spec_from_file_location("make_" + family, os.path.join(DATA, "make_%s.py" % family))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.CASES, harness, os.path.join(DATA, family + ".npz")
