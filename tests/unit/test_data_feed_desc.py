"""fluid.DataFeedDesc reads, edits and prints the text form exactly as Paddle 1.8.5 (make_data_feed_desc.py)."""

import json
import os

import pytest

import paddle_compat as fluid
from paddle_compat.fluid.dygraph import DygraphUnsupportedError

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18", "data_feed_desc.json")


def test_desc_matches_paddle18(tmp_path):
    with open(DATA) as f:
        rec = json.load(f)
    path = tmp_path / "data.proto"
    path.write_text(rec["proto"])
    for (bs, dense, used), want in zip(rec["edits"], rec["desc"]):
        feed = fluid.DataFeedDesc(str(path))
        if bs is not None:
            feed.set_batch_size(bs)
        feed.set_dense_slots(dense)
        feed.set_use_slots(used)
        assert feed.desc() == want


def test_errors_name_the_file_and_field(tmp_path):
    path = tmp_path / "bad.proto"
    path.write_text('name: "MultiSlotDataFeed"\nbatchsize: 3\n')
    with pytest.raises(ValueError, match="bad.proto.*batchsize"):
        fluid.DataFeedDesc(str(path))
    path.write_text('name: "MultiSlotDataFeed"\nmulti_slot_desc { slots { name: "a" type: "uint64" } }\n')
    feed = fluid.DataFeedDesc(str(path))
    with pytest.raises(KeyError, match="'b'"):
        feed.set_use_slots(["b"])


def test_top_level_names():
    with pytest.raises(DygraphUnsupportedError):
        fluid.enable_dygraph()
    with pytest.raises(DygraphUnsupportedError):
        fluid.enable_imperative()
    assert fluid.disable_dygraph() is None and fluid.disable_imperative() is None   # static is the mode here
    assert not isinstance(fluid.layers.fill_constant([1], "float32", 1.0), fluid.VarBase)
    with pytest.raises(DygraphUnsupportedError):
        fluid.VarBase()
    with pytest.raises(NotImplementedError, match="custom C\\+\\+ operators"):
        fluid.load_op_library("my_op.so")
    arr = fluid.LoDTensorArray()
    arr.append(__import__("numpy").ones((2, 3), "float32"))
    assert isinstance(arr[0], fluid.LoDTensor) and len(arr._move_to_list()) == 1
