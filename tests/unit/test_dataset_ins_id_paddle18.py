"""InMemoryDataset against Paddle 1.8.5: ins id / content columns, the download command, slots_shuffle and
core.Dataset (recorded by tests/data/paddle18/make_dataset_ins_id.py); merge_by_lineid by its rules."""

import json
import os
import sys

import numpy as np
import pytest

import paddle_compat.fluid as fluid
from paddle_compat.fluid.dataset import core_dataset

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18")
sys.path.insert(0, DATA)
from dataset_ins_id_cases import (CASES, MIXED, _collect, _dataset, _slots,  # noqa: E402
                                  slots_shuffle)

with open(os.path.join(DATA, "dataset_ins_id.json")) as _f:
    REF = json.load(_f)


@pytest.fixture(autouse=True)
def _fresh_fs():
    saved = dict(core_dataset._fs)
    yield
    core_dataset._fs.update(saved)


@pytest.mark.parametrize("case", [c for c in CASES if c is not slots_shuffle], ids=lambda c: c.__name__)
def test_matches_paddle18(case, tmp_path):
    assert case(fluid, str(tmp_path)) == REF[case.__name__]


def _reservoir_ok(got):
    """Every record keeps slots 2-4; its slot1 is the slot1 of itself or of a record before it."""
    b = got["batches"][0]
    s1 = b["slot1"]["vals"]
    assert [b["slot%d" % k]["vals"] for k in (2, 3, 4)] == \
        [[100.0 * (k - 1) + i for i in range(1, 9)] for k in (2, 3, 4)]
    return all(1 <= v <= i + 1 for i, v in enumerate(s1)) and s1[0] == 1.0


def test_slots_shuffle_draws_as_paddle18(tmp_path):
    assert _reservoir_ok(REF["slots_shuffle"])   # the rule holds for Paddle's own draw
    np.random.seed(3)
    got = slots_shuffle(fluid, str(tmp_path))
    assert _reservoir_ok(got)
    assert got["batches"][0]["slot1"]["vals"] != [float(i) for i in range(1, 9)]


def test_slots_shuffle_starts_from_the_loaded_records(tmp_path):
    vs = _slots(fluid, ["int64"] * 4)
    text = "".join("1 %d 1 %d 1 %d 1 %d\n" % (i, 100 + i, 200 + i, 300 + i) for i in range(1, 41))
    ds = _dataset(fluid, str(tmp_path), [text], vs)
    ds.load_into_memory()
    ds.set_batch_size(64)
    ds.set_fea_eval(4, True)   # a reservoir of 4: later records draw from a sample of those before
    np.random.seed(0)
    ds.slots_shuffle(["slot2", "slot3"])
    first = _collect(fluid, ds, vs)[0]
    ds.slots_shuffle(["slot1"])
    second = _collect(fluid, ds, vs)[0]
    assert second["slot2"]["vals"] == [100.0 + i for i in range(1, 41)]   # back to the loaded values
    assert first["slot1"]["vals"] == [float(i) for i in range(1, 41)]
    assert first["slot2"]["vals"] != [100.0 + i for i in range(1, 41)]
    assert [v - 100 for v in first["slot2"]["vals"]] == [v - 200 for v in first["slot3"]["vals"]]


def test_merge_by_lineid(tmp_path):
    """Groups of merge_size records of one ins id merge when no slot is carried twice (a lod slot of only
    zeros is not carried); other groups are dropped (Paddle's MergeByInsId rules)."""
    vs = _slots(fluid, MIXED)
    text = ("1 id1 1 1 2 3 3 4 5 5 5 5 1 1\n1 id1 1 2 2 3 4 4 6 6 6 6 1 2\n"   # slot1 twice: dropped
            "1 id2 1 1 1 1 1 0 1 0\n"                                          # alone: dropped
            "1 id3 1 0 1 0 1 1 1 1\n1 id3 1 7 2 8 0 1 0 1 0\n"                  # merged
            "1 id6 1 4 2 3 3 4 5 5 5 5 1 4\n1 id6 1 1 2 3 4 4 6 6 6 6 1 5\n1 id6 1 6 1 1 1 1 1 1\n")
    ds = _dataset(fluid, str(tmp_path), [text], vs)
    ds.set_merge_by_lineid(2)
    assert ds.parse_ins_id
    ds.load_into_memory()
    ds.dataset.merge_by_lineid()
    assert ds.get_memory_data_size() == 1
    b = _collect(fluid, ds, vs)[0]
    assert {k: b[k]["vals"] for k in b} == {"slot1": [7.0], "slot2": [8.0], "slot3": [1.0], "slot4": [1.0]}
    ds.set_merge_by_lineid(3)
    ds.load_into_memory()
    ds.dataset.merge_by_lineid()
    assert ds.get_memory_data_size() == 0   # id6's three records also carry slot1 twice


def test_bad_ins_id_column_is_named(tmp_path):
    vs = _slots(fluid, ["int64"] * 4)
    ds = _dataset(fluid, str(tmp_path), ["1 a 1 1 1 1 1 1 1 1\n2 a b 1 1 1 1 1 1 1 1\n"], vs)
    ds.set_parse_ins_id(True)
    with pytest.raises(ValueError, match=r"part0.txt:2: the line must start with '1 <ins_id>'"):
        ds.load_into_memory()


def test_queue_dataset_strips_ins_id_and_fetches_remote_files(tmp_path):
    """QueueDataset reads past the ins id too (in its reading helper process), and fetches an "hdfs:" file
    with the download command."""
    fetch = tmp_path / "fetch"
    fetch.write_text("#!/bin/sh\ncat \"${1#hdfs:}\"\n")
    fetch.chmod(0o755)
    data = tmp_path / "d.txt"
    data.write_text("1 x 1 5 1 6 1 7 1 8\n1 y 1 9 1 10 1 11 1 12\n")
    prog, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(prog, start):
        vs = [fluid.layers.data(name="s%d" % i, shape=[1], dtype="int64", lod_level=1) for i in range(4)]
    ds = fluid.DatasetFactory().create_dataset("QueueDataset")
    ds.set_batch_size(8)
    ds.set_use_var(vs)
    ds.set_parse_ins_id(True)
    ds.set_download_cmd(str(fetch))
    ds.set_filelist(["hdfs:" + str(data)])
    loader = fluid.io.DataLoader.from_dataset(ds, fluid.cpu_places(1), False)
    assert [np.array(d[0]["s3"]).ravel().tolist() for d in loader()] == [[8, 12]]


def test_hdfs_command():
    """Without a download command, remote files go through set_hdfs_config's hadoop command, as Paddle's
    fs layer builds it (-text for .gz files)."""
    ds = fluid.DatasetFactory().create_dataset("InMemoryDataset")
    ds.set_hdfs_config("my_fs", "u,p")
    opts = ds._opts()
    assert opts.fetch_command("local.txt") is None
    assert opts.fetch_command("hdfs:/a/b.txt") == \
        "hadoop fs -D fs.default.name=my_fs -D hadoop.job.ugi=u,p -cat hdfs:/a/b.txt"
    assert opts.fetch_command("afs:/a/b.gz").endswith(" -text afs:/a/b.gz")
    ds.set_download_cmd("./get")
    assert ds._opts().fetch_command("afs:/x y") == "./get 'afs:/x y'"


def test_global_shuffle_carries_ins_ids_and_routes_by_them(tmp_path):
    """Records travel with their ins ids (as str: no pickle), and with merge_by_lineid a record goes to the
    trainer of its ins id, so that the records of one id meet there."""
    from paddle_compat.fluid.dataset.records import record_ins_ids
    from paddle_compat.fluid.dataset.shuffle import decode, encode, ins_id_trainers
    vs = _slots(fluid, MIXED)
    ds = _dataset(fluid, str(tmp_path), ["1 id1 1 1 1 2 1 3 1 4\n1 id2 1 5 1 6 1 7 1 8\n1 id1 1 9 1 0 1 0 1 0\n"], vs)
    ds.set_parse_ins_id(True)
    ds.load_into_memory()
    recs = ds._records
    back = decode(encode(recs[np.array([2, 0])], 4), 4, sender=1)
    assert list(record_ins_ids(back)) == ["id1", "id1"]
    assert back.blocks[0].origin.endswith("(from trainer 1)")
    dest = ins_id_trainers(record_ins_ids(recs), 3)
    assert dest[0] == dest[2] and list(dest) == list(ins_id_trainers(["id1", "id2", "id1"], 3))
    plain = _dataset(fluid, str(tmp_path), ["1 1 1 2 1 3 1 4\n"], vs)
    plain.load_into_memory()
    assert list(record_ins_ids(decode(encode(plain._records, 4), 4, sender=0))) == [""]
