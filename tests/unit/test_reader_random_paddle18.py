"""paddle.reader's decorators draw from Python's `random` exactly as Paddle 1.8.5's (same sample orders for the
same seed, and the same number of draws: the next random.random() after a spent reader agrees), and random_crop /
shuffle_batch take their default seeds from numpy's global RNG as 1.8.5 does. Recorded by
tests/data/paddle18/make_reader_random.py."""

import importlib.util
import json
import os
import random

import numpy as np
import pytest

import paddle
import paddle.fluid as fluid

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18")
with open(os.path.join(DATA, "reader_random.json")) as _fh:
    REF = json.load(_fh)
_spec = importlib.util.spec_from_file_location("make_reader_random", os.path.join(DATA, "make_reader_random.py"))
MK = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(MK)


@pytest.fixture(autouse=True)
def _keep_global_rngs():
    state, np_state = random.getstate(), np.random.get_state()
    yield
    random.setstate(state)
    np.random.set_state(np_state)


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(MK.CASES))
def test_reader_order_and_draws_match_paddle18(name):
    got = json.loads(json.dumps(MK.run_case(paddle, fluid, name)))
    want = REF[name]
    assert got["after"] == want["after"], "%s drew from random a different number of times" % name
    assert got["again"] == want["again"]
    if name in MK.UNORDERED:
        assert sorted(got["samples"]) == sorted(want["samples"])
        assert [s // 100 for s in got["samples"]] == [s // 100 for s in want["samples"]]
    else:
        assert got["samples"] == want["samples"]


@pytest.mark.parity
def test_layer_default_seeds_come_from_numpy_as_paddle18():
    assert json.loads(json.dumps(MK.build_seeds(fluid))) == REF["build_seeds"]


def test_multiprocess_reader_refuses_none_and_names_the_reader():
    def bad():
        yield 1
        yield None
    r = paddle.reader.multiprocess_reader([MK._count(3), bad])
    with pytest.raises(RuntimeError, match="reader 1 failed.*None"):
        list(r())


def test_multiprocess_reader_queue_mode_yields_every_sample():
    r = paddle.reader.multiprocess_reader([MK._count(4), MK._count(3, 100)], use_pipe=False)
    assert sorted(r()) == [0, 1, 2, 3, 100, 101, 102]
