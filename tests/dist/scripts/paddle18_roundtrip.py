"""Run with Paddle 1.8.5's Python: load a model saved by paddle_compat in every format (roundtrip_cases.py)
and write what Paddle predicts from each (pred_<format>) and its losses continuing training from the ones
holding optimizer state (loss_<format>).     paddle18_roundtrip.py MODEL_NAME MODEL_DIR OUT.npz"""

import os
import sys

import numpy as np
import paddle.fluid as fluid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data", "paddle18"))
import roundtrip_cases as R  # noqa: E402

if __name__ == "__main__":
    name, d, out = sys.argv[1:4]
    np.savez(out, **R.read_back(fluid, name, d))
