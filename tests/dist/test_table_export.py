"""A model trained with its embedding as a distributed lookup table (2 pservers + 2 sync trainers on
127.0.0.1, tests/dist/scripts/table_export_node.py) exports for local inference: save_inference_model on the
trainer program gathers the table from the pservers' shards into one local lookup_table parameter, and the
exported model predicts what the trainer's test programs (which look rows up through the pservers) predict."""

import os
import subprocess

import numpy as np
import pytest

import paddle_compat as fluid
from paddle_compat import core
from paddle_compat.ir.tensor_format import read_lod_tensor
from ps_cluster import run_ok

pytestmark = [pytest.mark.dist, pytest.mark.timeout(300)]

SCRIPT = os.path.join("tests", "dist", "scripts", "table_export_node.py")
PADDLE18 = os.environ.get("PADDLE18_PYTHON", "/work/paddle18/bin/python")
PREDICT18 = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scripts", "paddle18_predict.py")


def _read(path):
    with open(path, "rb") as f:
        return read_lod_tensor(f, path)[0]


def _feed(ref, feeds):
    return {n: (fluid.create_lod_tensor(ref["in_" + n], [ref["lod_" + n].tolist()], fluid.CPUPlace())
                if "lod_" + n in ref else ref["in_" + n]) for n in feeds}


def test_exported_table_model_predicts_what_the_trainer_predicts(tmp_path):
    out = str(tmp_path / "out")
    os.makedirs(out)
    # a small chunk: the 1003-row table crosses several export RPCs per shard
    got = run_ok(tmp_path / "job", {"out": out, "steps": 6}, trainers=2, script=SCRIPT,
                 extra_env={"FLAGS_table_export_chunk_rows": 97})
    assert len(got[(0, 0)]) == 7 and all(np.isfinite(got[(0, t)]).all() for t in range(2))
    ref = np.load(os.path.join(out, "trainer_predictions.npz"))
    # the two test programs on the trainer (rows through the pservers) agree
    np.testing.assert_allclose(ref["pred_before"], ref["pred_after"], rtol=0, atol=1e-6)
    # the exported table is the pservers' shards, concatenated
    table = _read(os.path.join(out, "model", "table"))
    shards = np.concatenate([_read(os.path.join(out, "ckpt", "table.block%d" % i)) for i in range(2)])
    assert table.shape == (1003, 8)
    np.testing.assert_array_equal(table, shards)
    for sub, params in (("model", None), ("model_combined", "params"), ("model_from_test", None)):
        d = os.path.join(out, sub)
        exe = fluid.Executor(fluid.CPUPlace())
        with fluid.scope_guard(fluid.Scope()):
            prog, feeds, fetches = fluid.io.load_inference_model(d, exe, params_filename=params)
            types = [op.type for op in prog.global_block().ops]
            assert "prefetch" not in types and "split_ids" not in types and types.count("lookup_table") == 2
            pred = exe.run(prog, feed=_feed(ref, feeds), fetch_list=fetches)[0]
        np.testing.assert_allclose(pred, ref["pred_after"], rtol=0, atol=1e-6)
        cfg = core.AnalysisConfig(d) if params is None else core.AnalysisConfig(os.path.join(d, "__model__"),
                                                                                 os.path.join(d, params))
        p = core.create_paddle_predictor(cfg)
        ins = [core.PaddleTensor(ref["in_" + n], n, [[0] + np.cumsum(ref["lod_" + n]).tolist()]
                                 if "lod_" + n in ref else []) for n in p.get_input_names()]
        np.testing.assert_allclose(p.run(ins)[0].as_ndarray(), ref["pred_after"], rtol=0, atol=1e-6)

    # where a Paddle 1.8.5 Python is installed: Paddle loads the exported models and predicts the same
    if not os.path.exists(PADDLE18):
        return
    np.savez(os.path.join(out, "in18.npz"), **{k[3:]: ref[k] for k in ref.files if k.startswith("in_")},
             **{k: ref[k] for k in ref.files if k.startswith("lod_")})
    env = dict(os.environ, GLOG_v="0", OMP_NUM_THREADS="1", CPU_NUM="1")
    env.pop("PYTHONPATH", None)
    for sub, params in (("model", "-"), ("model_combined", "params")):
        res = os.path.join(out, sub + "_paddle18.npz")
        r = subprocess.run([PADDLE18, PREDICT18, os.path.join(out, sub), params, os.path.join(out, "in18.npz"), res],
                           env=env, capture_output=True, text=True, timeout=200, cwd=out)
        assert r.returncode == 0, r.stderr[-4000:]
        np.testing.assert_allclose(np.load(res)["out_0"], ref["pred_after"], rtol=0, atol=1e-6)
