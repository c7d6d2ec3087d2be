"""The detection_map op and fluid.metrics.DetectionMAP against Paddle 1.8.5
(tests/data/paddle18/make_detection_map.py runs the same batches there): the batch and accumulated mAP of
three batches ('integral' and '11point', difficult boxes evaluated or not), the accumulated states (positive
counts, true / false positives and their per-class LoD) and the ops DetectionMAP records."""

import importlib.util
import json
import os

import numpy as np
import pytest

import paddle_compat.fluid as fluid

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18")
with open(os.path.join(DATA, "detection_map.json")) as _fh:
    REF = json.load(_fh)
_spec = importlib.util.spec_from_file_location("make_detection_map", os.path.join(DATA, "make_detection_map.py"))
MK = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(MK)


@pytest.fixture(scope="module", params=sorted(MK.CASES))
def case(request):
    return MK.run(fluid, request.param), REF[request.param]


def test_recorded_cases():
    assert sorted(REF) == sorted(MK.CASES)


def test_maps_match_paddle18(case):
    got, want = case
    np.testing.assert_allclose(got["maps"], want["maps"], rtol=1e-5, atol=1e-7)
    assert any(a != b for a, b in want["maps"])      # the accumulated mAP is not the batch's


def test_states_match_paddle18(case):
    got, want = case
    assert got["states"] == want["states"]


def test_ops_match_paddle18(case):
    got, want = case
    assert got["ops"] == want["ops"]


def test_layer_checks():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        det = fluid.layers.data(name="det", shape=[6], dtype="float32", lod_level=1)
        lab = fluid.layers.data(name="lab", shape=[6], dtype="float32", lod_level=1)
        s = [main.global_block().create_var(name="s%d" % i, persistable=True) for i in range(3)]
        with pytest.raises(ValueError, match="input_states"):
            fluid.layers.detection.detection_map(det, lab, 3, input_states=s)
        fluid.layers.detection.detection_map(det, lab, 3, ap_version="bad")
    exe = fluid.Executor(fluid.CPUPlace())
    t = fluid.LoDTensor()
    t.set(np.zeros((1, 6), "float32"), fluid.CPUPlace())
    t.set_lod([[0, 1]])
    with pytest.raises(Exception, match="ap_type"):
        exe.run(main, feed={"det": t, "lab": t}, fetch_list=[])
