"""Loads a family's recorded Paddle 1.8.5 cases (tests/data/paddle18/make_<family>.py + <family>.npz)."""

import importlib.util
import os
import sys

import numpy as np

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


def load_recorded(family):
    """-> (make_<family> module, its <family>.npz) for families whose make script has run_case()."""
    spec = importlib.util.spec_from_file_location("make_" + family, os.path.join(DATA, "make_%s.py" % family))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod, np.load(os.path.join(DATA, family + ".npz"))


def check_recorded_case(fluid, mk, ref_npz, name):
    """Runs case `name` with Paddle's recorded parameters and compares every recorded output and gradient:
    integers exactly, floats to 1e-4 relative; no gradient may appear that Paddle did not record."""
    ref = {k.split("|", 1)[1]: ref_npz[k] for k in ref_npz.files if k.startswith(name + "|")}
    got = mk.run_case(fluid, name, {k: v for k, v in ref.items() if k.startswith("param/")})
    for k, v in ref.items():
        if k.startswith("param/") or k == "ops":
            continue
        assert k in got, "%s: no %s (got %s)" % (name, k, sorted(got))
        g = got[k].reshape(v.shape)
        if v.dtype.kind in "biu":
            np.testing.assert_array_equal(g, v, err_msg="%s %s" % (name, k))
        else:
            np.testing.assert_allclose(g, v, rtol=1e-4, atol=1e-5, err_msg="%s %s" % (name, k))
    extra = [k for k in got if k.startswith("grad/") and k not in ref]
    assert not extra, extra
