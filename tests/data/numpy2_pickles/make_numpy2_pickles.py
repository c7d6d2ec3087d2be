"""State dicts pickled by NumPy 2 (whose pickles name `numpy._core.*`, a module NumPy 1 lacks), with protocols
2 to 5 (5: arrays as numpy._core.numeric._frombuffer of a buffer). Run with any Python >= 3.8 and numpy >= 2:

    .venv/bin/python tests/data/numpy2_pickles/make_numpy2_pickles.py

tests/unit/test_safe_pickle.py loads them with state() as the expected contents."""

import os
import pickle

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def state():
    """What each file holds (deterministic)."""
    return {
        "fc_0.w_0": (np.arange(12, dtype="float32").reshape(4, 3) / 7),
        "fc_0.b_0": np.array([0.5, -1.25, 3.0], dtype="float32"),
        "@LR_DECAY_COUNTER@": np.array([3], dtype="int64"),
        "mask": np.array([True, False, True]),
        "fortran": np.asfortranarray(np.arange(6, dtype="float64").reshape(2, 3)),
        "big_endian": np.arange(4, dtype=">i4"),
        "empty": np.zeros((0, 5), dtype="float32"),
        "lr": np.float32(0.125),
        "step": np.int64(9),
        "name_table": {"linear_0.w_0": "fc_0.w_0"},
    }


if __name__ == "__main__":
    assert int(np.__version__.split(".")[0]) >= 2, "needs numpy >= 2 (to write numpy._core pickles)"
    for proto in (2, 3, 4, 5):
        with open(os.path.join(HERE, "np2_p%d.pdparams" % proto), "wb") as f:
            pickle.dump(state(), f, protocol=proto)
    print("numpy", np.__version__, sorted(os.listdir(HERE)))
