"""The local CTR example runs end to end (small), learns, and its two reader paths feed the same batches."""

import os
import sys

import numpy as np

import paddle_compat as fluid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples"))
import ctr_local  # noqa: E402
from ctr_data import SyntheticCTR  # noqa: E402

SMALL = ["--steps", "60", "--batch", "32", "--slots", "5", "--emb-dim", "4", "--table-height", "5003",
         "--hidden", "16,8", "--test-samples", "1024", "--log-every", "1000"]


def test_ctr_local_learns(capsys):
    out = ctr_local.main(SMALL + ["--optimizer", "adagrad"])
    printed = capsys.readouterr().out
    assert "samples/s" in printed and "test: loss" in printed
    assert np.isfinite(out["test_loss"]) and out["test_loss"] < out["first_loss"]
    assert out["test_auc"] > 0.6


def test_sample_and_batch_readers_agree():
    data = SyntheticCTR(num_samples=64, num_slots=3, table_height=101, seed=4)
    names = ["dense_input", "C1", "C2", "C3", "label"]
    prog = fluid.Program()
    with fluid.program_guard(prog):
        feed_list = [fluid.layers.data(name="dense_input", shape=[13], dtype="float32")]
        feed_list += [fluid.layers.data(name=n, shape=[1], dtype="int64", lod_level=1) for n in names[1:4]]
        feed_list.append(fluid.layers.data(name="label", shape=[1], dtype="int64"))
    feeder = fluid.DataFeeder(feed_list, fluid.CPUPlace(), program=prog)
    samples = list(data.samples())
    for b, fields in enumerate(data.batches(16, fluid.CPUPlace())):
        by_sample = feeder.feed(samples[16 * b:16 * b + 16])
        for name, f in zip(names, fields):
            np.testing.assert_array_equal(np.array(by_sample[name]), np.array(f))
            if name.startswith("C"):
                assert by_sample[name].lod() == f.lod()
    again = SyntheticCTR(num_samples=64, num_slots=3, table_height=101, seed=4)
    assert all(np.array_equal(a, b) for a, b in zip(data.ids, again.ids))      # deterministic per seed
    assert 0.2 < data.label.mean() < 0.3
