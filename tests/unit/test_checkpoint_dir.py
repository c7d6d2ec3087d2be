"""Crash-safe checkpoint directories (no processes): a staged save switches in only when committed, the
previous checkpoint survives an abandoned one, loaders refuse incomplete or damaged checkpoints naming the
parts, and directories without a manifest (local saves, Paddle's, older versions') load as before."""

import json
import os

import numpy as np
import pytest

import paddle_compat as fluid
from paddle_compat.backends import checkpoint_dir as cd
from paddle_compat.ir.tensor_format import atomic_write, write_lod_tensor


def _stage(dirname, values, commit=True, parts=None):
    st = cd.Staging(dirname, parts or {n: "trainer 0" for n in values})
    recs = {}
    for name, arr in values.items():
        path = os.path.join(st.path, name)
        atomic_write(path, lambda f, a=arr: write_lod_tensor(f, a, None))
        recs[name] = cd.file_record(path, arr.shape, arr.dtype, "pserver 0 (127.0.0.1:1)")
    if commit:
        st.commit(recs)
    return st


def _model():
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start), fluid.unique_name.guard():
        x = fluid.layers.data(name="x", shape=[3], dtype="float32")
        fluid.layers.fc(x, size=2, param_attr=fluid.ParamAttr(name="w"), bias_attr=fluid.ParamAttr(name="b"))
    return main, start


def test_commit_switches_and_an_abandoned_save_leaves_the_previous_checkpoint(tmp_path):
    d = str(tmp_path / "ck")
    one = {"w": np.ones((3, 2), np.float32), "b": np.zeros(2, np.float32)}
    _stage(d, one)
    m1 = cd.verify(d)
    assert sorted(m1["files"]) == ["b", "w"] and m1["files"]["w"]["shape"] == [3, 2]
    assert m1["files"]["w"]["from"] == "pserver 0 (127.0.0.1:1)"
    # a second save that never commits (its process was killed): the first is what `d` holds
    st = _stage(d, {"w": np.full((3, 2), 7, np.float32)}, commit=False,
                parts={"w": "trainer 0", "b": "pserver 1 (127.0.0.1:2)"})
    assert cd.verify(d) == m1
    with pytest.raises(cd.IncompleteCheckpoint, match=r"b \(pserver 1 \(127.0.0.1:2\)\), w \(trainer 0\)"):
        cd.verify(st.path)
    # the next committed save replaces `d` (an existing directory: exchanged in one rename) and clears
    # the abandoned staging directory
    _stage(d, {"w": np.full((3, 2), 2, np.float32), "b": np.ones(2, np.float32)})
    assert not os.path.exists(st.path)
    assert sorted(os.listdir(str(tmp_path))) == ["ck"]
    main, start = _model()
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        exe.run(start)
        fluid.io.load_persistables(exe, d, main)
        assert float(np.array(scope.find_var("w").get_tensor())[0, 0]) == 2.0


def test_commit_refuses_a_save_missing_a_part(tmp_path):
    st = cd.Staging(str(tmp_path / "ck"), {"w": "trainer 0", "emb.block1": "pserver 1 (e)"})
    with pytest.raises(cd.IncompleteCheckpoint, match=r"parts \['emb.block1', 'w'\] were never written"):
        st.commit({})
    assert not os.path.exists(str(tmp_path / "ck"))


def test_load_refuses_missing_truncated_or_damaged_files(tmp_path):
    d = str(tmp_path / "ck")
    _stage(d, {"w": np.ones((3, 2), np.float32), "b": np.zeros(2, np.float32)})
    main, start = _model()
    exe = fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(fluid.Scope()):
        exe.run(start)
        with open(os.path.join(d, "w"), "r+b") as f:       # same size, one byte flipped
            f.seek(-1, 2)
            last = f.read(1)
            f.seek(-1, 2)
            f.write(bytes([last[0] ^ 1]))
        with pytest.raises(cd.IncompleteCheckpoint, match="w in checkpoint .* is damaged"):
            fluid.io.load_persistables(exe, d, main)
        with open(os.path.join(d, "w"), "ab") as f:
            f.write(b"x")
        with pytest.raises(cd.IncompleteCheckpoint, match=r"w \(\d+ bytes, the manifest says \d+"):
            fluid.io.load_persistables(exe, d, main)
        os.remove(os.path.join(d, "w"))
        with pytest.raises(cd.IncompleteCheckpoint, match=r"incomplete checkpoint: w \(missing; from pserver 0"):
            fluid.io.load_persistables(exe, d, main)


def test_directories_without_a_manifest_load_as_before(tmp_path):
    main, start = _model()
    exe = fluid.Executor(fluid.CPUPlace())
    d = str(tmp_path / "local")
    with fluid.scope_guard(fluid.Scope()):
        exe.run(start)
        fluid.io.save_persistables(exe, d, main)
    assert sorted(os.listdir(d)) == ["b", "w"]           # a local save writes no manifest
    assert cd.verify(d) is None
    with fluid.scope_guard(fluid.Scope()):
        exe.run(start)
        fluid.io.load_persistables(exe, d, main)
    # a local save over a pserver job's checkpoint drops the manifest that no longer describes the files
    job = str(tmp_path / "job")
    _stage(job, {"w": np.ones((3, 2), np.float32), "b": np.zeros(2, np.float32)})
    with fluid.scope_guard(fluid.Scope()):
        exe.run(start)
        fluid.io.save_persistables(exe, job, main)
        fluid.io.load_persistables(exe, job, main)
    assert cd.MANIFEST not in os.listdir(job)


def test_an_interrupted_switch_names_the_complete_checkpoint_beside_it(tmp_path):
    d = str(tmp_path / "ck")
    _stage(d, {"w": np.ones((3, 2), np.float32)})
    os.rename(d, d + ".old-1-abc")        # what the two-rename fallback leaves if killed between renames
    with pytest.raises(cd.IncompleteCheckpoint, match=r"ck.old-1-abc beside it"):
        cd.verify(d)


def test_manifest_lists_shape_dtype_size_and_checksum(tmp_path):
    d = str(tmp_path / "ck")
    _stage(d, {"w": np.ones((3, 2), np.float32)})
    with open(os.path.join(d, cd.MANIFEST)) as f:
        rec = json.load(f)["files"]["w"]
    assert rec["shape"] == [3, 2] and rec["dtype"] == "float32" and len(rec["sha256"]) == 64
    assert rec["bytes"] == os.path.getsize(os.path.join(d, "w"))


def test_switch_without_rename_exchange_uses_two_renames(tmp_path, monkeypatch):
    monkeypatch.setattr(cd, "_rename_exchange", lambda a, b: False)
    d = str(tmp_path / "ck")
    _stage(d, {"w": np.ones((3, 2), np.float32)})
    _stage(d, {"w": np.full((3, 2), 3, np.float32)})
    assert sorted(os.listdir(str(tmp_path))) == ["ck"]
    assert cd.verify(d)["files"]["w"]["bytes"] > 0
