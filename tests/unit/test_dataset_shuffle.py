"""global_shuffle's record codec: records sent between trainers come back as the same samples (LoD id slots,
dense floats, labels, file line numbers), with no pickle; a garbled payload is refused naming its sender; with
one trainer (or no fleet) global_shuffle is a local shuffle. The exchange itself runs in
tests/dist/test_dataset_global_shuffle.py."""

import numpy as np
import pytest

import paddle_compat as fluid
from paddle_compat.fluid.dataset.feed import make_batch
from paddle_compat.fluid.dataset.shuffle import decode, encode


def _dataset(tmp_path, nfiles=2, lines=30):
    rs = np.random.RandomState(0)
    files = []
    for f in range(nfiles):
        out = []
        for i in range(lines):
            ids = rs.randint(0, 100, size=rs.randint(1, 4))
            out.append("%d %s 2 %.3f %.3f 1 %d\n" % (len(ids), " ".join(map(str, ids)), rs.rand(), rs.rand(),
                                                   f * 1000 + i))
        p = tmp_path / ("part-%d" % f)
        p.write_text("".join(out))
        files.append(str(p))
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        ids = fluid.layers.data("ids", [1], dtype="int64", lod_level=1)
        dense = fluid.layers.data("dense", [2], dtype="float32")
        tag = fluid.layers.data("tag", [1], dtype="int64")
    ds = fluid.DatasetFactory().create_dataset("InMemoryDataset")
    ds.set_use_var([ids, dense, tag])
    ds.set_batch_size(8)
    ds.set_filelist(files)
    ds.load_into_memory()
    return ds


def _feed_equal(a, b):
    for k in a:
        x, y = a[k], b[k]
        if hasattr(x, "lod"):
            assert x.lod() == y.lod(), k
            x, y = np.array(x), np.array(y)
        np.testing.assert_array_equal(x, y)


def test_records_survive_encode_decode(tmp_path):
    ds = _dataset(tmp_path)
    slots = ds._slots()
    recs = ds._records
    recs.shuffle(np.random.RandomState(1))                 # records from both files, interleaved
    pick = recs[np.random.RandomState(2).rand(len(recs)) < 0.5]
    data = encode(pick, len(slots))
    assert b"pickle" not in data
    back = decode(data, len(slots), sender=1)
    assert len(back) == len(pick)
    _feed_equal(make_batch(back, slots), make_batch(pick, slots))
    block = back.blocks[0]
    assert "part-0" in block.origin and "part-1" in block.origin and "trainer 1" in block.origin
    want = np.concatenate([b.linenos[r] for b, r in pick.groups()])
    np.testing.assert_array_equal(block.linenos, want)


def test_empty_share_round_trips(tmp_path):
    ds = _dataset(tmp_path)
    none = ds._records[np.zeros(len(ds._records), bool)]
    assert len(decode(encode(none, 3), 3, sender=0)) == 0


def test_garbled_payload_names_the_sender():
    with pytest.raises(ValueError, match="trainer 3 sent are unreadable"):
        decode(b"not an npz", 3, sender=3)


def test_one_trainer_is_a_local_shuffle(tmp_path):
    ds = _dataset(tmp_path)
    before = sorted(np.array(make_batch(ds._records, ds._slots())["tag"]).ravel())

    class OneWorker:
        def worker_num(self):
            return 1
    np.random.seed(5)
    ds.global_shuffle(OneWorker())
    after = np.array(make_batch(ds._records, ds._slots())["tag"]).ravel()
    assert sorted(after) == before and list(after) != before
    assert ds.get_shuffle_data_size(OneWorker()) == len(before) == ds.get_memory_data_size()


def test_several_trainers_without_a_job_is_a_clear_error(tmp_path):
    ds = _dataset(tmp_path)

    class TwoWorkers:
        def worker_num(self):
            return 2
    with pytest.raises(Exception, match="needs this trainer joined to its pserver job"):
        ds.global_shuffle(TwoWorkers())
    assert len(ds._records) == 60          # nothing lost
