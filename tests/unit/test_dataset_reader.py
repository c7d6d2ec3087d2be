"""QueueDataset's helper processes (fluid/dataset/reader.py): errors come back as the helper raised them,
helpers are reused after a finished job and killed when the consumer stops early."""

import time

import numpy as np
import pytest

import paddle_compat as fluid
from paddle_compat.fluid.dataset import reader as dataset_reader


def _vars():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        ids = fluid.data("ids", shape=[None, 1], dtype="int64", lod_level=1)
        dense = fluid.data("dense", shape=[None, 2], dtype="float32")
    return [ids, dense]


def _dataset(paths, batch=4, pipe="cat"):
    ds = fluid.DatasetFactory().create_dataset("QueueDataset")
    ds.set_use_var(_vars())
    ds.set_batch_size(batch)
    ds.set_pipe_command(pipe)
    ds.set_filelist([str(p) for p in paths])
    return ds


def _write(path, n, first=0):
    path.write_text("".join("%d %s 2 %d.5 -%d\n" % (i % 3 + 1, " ".join(str(first + i)
                                                                        for _ in range(i % 3 + 1)), i, i)
                            for i in range(n)))
    return path


def _loader(ds, drop_last=False):
    return fluid.io.DataLoader.from_dataset(ds, fluid.cpu_places(1), drop_last=drop_last)


def test_batches_and_values(tmp_path):
    ds = _dataset([_write(tmp_path / "a", 6), _write(tmp_path / "b", 5, first=100)])
    feeds = [b[0] for b in _loader(ds)]
    assert [f["dense"].shape()[0] for f in feeds] == [4, 4, 3]     # a batch spans the two files
    ids = np.concatenate([np.array(f["ids"]).ravel() for f in feeds])
    lens = sum((f["ids"].recursive_sequence_lengths()[0] for f in feeds), [])
    assert lens == [i % 3 + 1 for i in range(6)] + [i % 3 + 1 for i in range(5)]
    assert ids.tolist() == sum(([i] * (i % 3 + 1) for i in range(6)), []) + \
        sum(([100 + i] * (i % 3 + 1) for i in range(5)), [])
    np.testing.assert_array_equal(feeds[0]["dense"], [[0.5, 0], [1.5, -1], [2.5, -2], [3.5, -3]])


def test_errors_name_file_and_line(tmp_path):
    good = _write(tmp_path / "good", 5)
    bad = _write(tmp_path / "bad", 5)
    lines = bad.read_text().splitlines()
    lines[3] = lines[3].replace(".5", ".5x")
    bad.write_text("\n".join(lines) + "\n")
    ds = _dataset([good, bad])
    with pytest.raises(ValueError, match=r"bad:4: slot 'dense' \(float32\) has a bad value '3.5x'"):
        list(_loader(ds))
    with pytest.raises(FileNotFoundError, match="missing.txt"):
        list(_loader(_dataset([tmp_path / "missing.txt"])))
    with pytest.raises(RuntimeError, match=r"(?s)exit status 4.*oops"):
        list(_loader(_dataset([good], pipe="cat >/dev/null; echo oops >&2; exit 4")))


def test_helpers_reused_and_killed_when_abandoned(tmp_path):
    ds = _dataset([_write(tmp_path / "a", 40)])
    assert len(list(_loader(ds))) == 10
    assert dataset_reader._idle
    pid = dataset_reader._idle[-1].proc.pid
    assert len(list(_loader(ds))) == 10
    assert dataset_reader._idle[-1].proc.pid == pid       # the same helper ran the second job
    it = iter(_loader(ds))
    next(it)
    helper = [h for h in dataset_reader._idle if h.proc.pid == pid]
    assert not helper                                     # busy with this job
    it.close()                                            # the consumer stops early
    deadline = time.time() + 30
    while time.time() < deadline and not [h for h in dataset_reader._idle if h.proc.pid == pid]:
        try:
            import os
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail("the abandoned helper %d is still running" % pid)
    assert len(list(_loader(ds))) == 10                   # a fresh helper


def test_reads_in_process_when_no_helper_starts(tmp_path, monkeypatch):
    def fail():
        raise OSError("no interpreter")
    monkeypatch.setattr(dataset_reader, "_take", fail)
    ds = _dataset([_write(tmp_path / "a", 6)])
    assert [b[0]["dense"].shape()[0] for b in _loader(ds)] == [4, 2]


def test_dense_slot_of_wrong_width_is_named(tmp_path):
    p = _write(tmp_path / "a", 6)
    lines = p.read_text().splitlines()
    lines[2] = lines[2].rsplit(" 2 ", 1)[0] + " 3 1 2 3"
    p.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=r"a:3: slot 'dense' is dense \(lod_level 0\) with shape \[-1, 2\] "
                                         r"but holds 3 values, not whole rows of 2"):
        list(_loader(_dataset([p])))
