"""Record model files written by real Paddle 1.8.5 in every format, and what Paddle reads back from them
(run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_roundtrip.py

For each model of roundtrip_cases.py (an MLP, a conv net with batch_norm, a CTR model with a LoD slot):
trains it with Adam, saves it under roundtrip/<model>/ (persistables, combined params and persistables files,
inference model, fluid.save state; the state's .pdmodel is not kept), and writes roundtrip/<model>.npz:
the prediction right after training (pred), the losses of the training steps (train_losses) and of the steps
that follow without saving (straight_losses), and, loading each format in a fresh scope, the prediction
(pred_<format>) and the losses when Paddle continues training from it (loss_<format>)."""

import os
import shutil
import sys

import numpy as np
import paddle.fluid as fluid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import roundtrip_cases as R  # noqa: E402

OUT = os.path.join(HERE, "roundtrip")

if __name__ == "__main__":
    for name in sys.argv[1:] or R.MODELS:
        d = os.path.join(OUT, name)
        shutil.rmtree(d, ignore_errors=True)
        rec = R.train_and_save(fluid, name, d)
        os.remove(os.path.join(d, "state.pdmodel"))
        rec.update(R.read_back(fluid, name, d))
        np.savez(os.path.join(OUT, name + ".npz"), **{k: np.asarray(v) for k, v in rec.items()})
        print(name, rec["train_losses"], rec["straight_losses"], rec.get("loss_state"))
