"""Pickles written by Python 2.7 with numpy 1.16 (run outside CI, with a Python 2 that has numpy):

    python2.7 tests/data/python2_pickles/make_python2_pickles.py

- state_p2.pdparams: a state dict as Python 2 builds of Paddle's fluid.save wrote it (cPickle, protocol 2);
  Python 3 reads it with encoding="latin1" (array bytes arrive as str).
- cifar_p0.pkl, cifar_p2.pkl: a batch shaped like CIFAR's python batches ({"data": uint8 [n, 3072],
  "labels": [...]}, str keys), protocols 0 and 2; paddle.dataset.cifar reads them with encoding="bytes".
tests/unit/test_safe_pickle.py checks the contents against expected() (this file is Python 2 and 3 code)."""

import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def expected():
    state = {"fc_0.w_0": (np.arange(6, dtype="float32").reshape(2, 3) / 4),
             "fc_0.b_0": np.array([1.5, -2.0, 0.25], dtype="float32"),
             "learning_rate_0": np.array([0.1], dtype="float64"),
             "counter": np.array([5], dtype="int64"),
             "step": np.int64(5)}
    batch = {"data": (np.arange(2 * 3072) % 251).astype(np.uint8).reshape(2, 3072), "labels": [3, 7],
             "batch_label": "training batch 1 of 5"}
    return state, batch


if __name__ == "__main__":
    import cPickle
    state, batch = expected()
    with open(os.path.join(HERE, "state_p2.pdparams"), "wb") as f:
        cPickle.dump(state, f, protocol=2)
    for proto in (0, 2):
        with open(os.path.join(HERE, "cifar_p%d.pkl" % proto), "wb") as f:
            cPickle.dump(batch, f, protocol=proto)
    print(sorted(os.listdir(HERE)))
