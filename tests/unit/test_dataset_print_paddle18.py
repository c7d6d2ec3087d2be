"""train_from_dataset / infer_from_dataset print their fetch_list as Paddle 1.8.5 does (tests/data/paddle18/
make_dataset_print.py): each fetched tensor's dump (info, name, lod, dim, layout, dtype, data), every print_period
batches of thread 0; and str(LoDTensor) gives the same dump. Numbers printed with 6 digits are compared to 1e-4
relative (the last digit may round the other way), everything else character for character."""

import importlib.util
import json
import os
import re

import numpy as np
import pytest

import paddle.fluid as fluid

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18")
with open(os.path.join(DATA, "dataset_print.json")) as _fh:
    REF = json.load(_fh)
_spec = importlib.util.spec_from_file_location("make_dataset_print", os.path.join(DATA, "make_dataset_print.py"))
MK = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(MK)
_DATA_RE = re.compile(r"data: \[([^\]]*)\]")


def _same_dump(got, want):
    assert _DATA_RE.sub("data: []", got) == _DATA_RE.sub("data: []", want)
    g, w = _DATA_RE.findall(got), _DATA_RE.findall(want)
    assert len(g) == len(w)
    for gs, ws in zip(g, w):
        gv, wv = gs.split(), ws.split()
        assert len(gv) == len(wv)
        if all(re.fullmatch(r"-?\d+", v) for v in wv) and all(re.fullmatch(r"-?\d+", v) for v in gv):
            assert gv == wv
        else:
            np.testing.assert_allclose(np.array(gv, float), np.array(wv, float), rtol=1e-4, atol=1e-6)


def _dumps(text):
    """The text split into one dump per fetched variable (each ends with a line holding a tab)."""
    parts = text.split("\n\t\n")
    assert parts[-1] == ""
    return [p + "\n\t\n" for p in parts[:-1]]


@pytest.mark.parity
@pytest.mark.parametrize("period", [1, 2, 3, 6])
@pytest.mark.parametrize("name", sorted(MK.CASES))
def test_dataset_run_prints_as_paddle18(name, period, tmp_path, capsys):
    MK.run_case(fluid, name, str(tmp_path), period)
    got = capsys.readouterr().out
    nfetch = len(MK.CASES[name][1])
    recorded = _dumps(REF["cases"][name])
    assert len(recorded) == MK.BATCHES * nfetch
    # batches period, 2*period, ... of the period-1 record (1-based)
    want = "".join(d for i, d in enumerate(recorded) if (i // nfetch + 1) % period == 0)
    assert len(_dumps(got)) == len(_dumps(want)) if want else got == ""
    _same_dump(got, want)


@pytest.mark.parity
def test_lod_tensor_str_is_paddle18s_dump():
    assert MK.tensor_texts(fluid) == REF["tensors"]


def test_only_thread_zero_prints_its_own_batches(tmp_path, capsys):
    # Paddle 1.8: thread 0 prints every print_period of its own batches (the other threads print nothing)
    lines = MK._lines()
    files = []
    for k, n in enumerate((20, 8)):      # 5 and 2 batches of 4
        files.append(str(tmp_path / ("f%d.txt" % k)))
        with open(files[-1], "w") as f:
            f.writelines(lines[:n])
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        slots = [fluid.data("s%d" % i, [None, 1], "int64", lod_level=1) for i in range(2)]
        dense = fluid.data("dense", [None, 3], "float32")
        label = fluid.data("label", [None, 1], "int64")
        emb = [fluid.layers.sequence_pool(fluid.layers.embedding(x, [20, 4], param_attr="emb"), "sum")
               for x in slots]
        pred = fluid.layers.fc(fluid.layers.concat(emb + [dense], axis=1), 2, act="softmax")
        loss = fluid.layers.mean(fluid.layers.cross_entropy(pred, label))
        fluid.optimizer.SGD(0.1).minimize(loss)
    exe = fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(fluid.Scope()):
        exe.run(startup)
        ds = fluid.DatasetFactory().create_dataset("QueueDataset")
        ds.set_use_var(slots + [dense, label])
        ds.set_pipe_command("cat")
        ds.set_batch_size(4)
        ds.set_thread(2)
        ds.set_filelist(files)
        exe.train_from_dataset(main, ds, thread=2, fetch_list=[loss], fetch_info=["loss"], print_period=2)
    printed = capsys.readouterr().out.count("loss\t")
    # 7 batches in all; a global count would print 3 times. Thread 0 reads one file: 5 batches -> 2, 2 -> 1
    assert printed in (1, 2)
