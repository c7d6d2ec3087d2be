"""train_from_dataset against Paddle 1.8.5's (dataset_train.json, make_dataset_train.py): the same files,
fixed weights, QueueDataset with batches across the file boundary, thread=1, two passes: the printed losses
and the trained parameters agree."""

import json
import os
import re

import numpy as np

import paddle_compat as fluid

# a fetched loss as train_from_dataset prints it (Paddle 1.8's tensor dump): its value
LOSS_DUMP = re.compile(r"loss\t[^\t]*\t\tlod: [^\n]*\n\tdim: [^\n]*\n\tlayout: NCHW\n\tdtype: [^\n]*\n"
                       r"\tdata: \[([-0-9.e+]+)\]")

REF = json.load(open(os.path.join(os.path.dirname(__file__), "..", "data", "paddle18", "dataset_train.json")))


def test_train_from_dataset_matches_paddle(tmp_path, capsys):
    files = [tmp_path / "a.txt", tmp_path / "b.txt"]
    files[0].write_text("".join(REF["lines"][:REF["split"]]))
    files[1].write_text("".join(REF["lines"][REF["split"]:]))
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        slots = [fluid.data("s%d" % i, [None, 1], "int64", lod_level=1) for i in range(2)]
        dense = fluid.data("dense", [None, 3], "float32")
        label = fluid.data("label", [None, 1], "int64")
        E, W = np.array(REF["E"], "float32"), np.array(REF["W"], "float32")
        pooled = [fluid.layers.sequence_pool(fluid.layers.embedding(
            x, [20, 4], is_sparse=True, param_attr=fluid.ParamAttr(
                name="emb", initializer=fluid.initializer.NumpyArrayInitializer(E))), "sum") for x in slots]
        pred = fluid.layers.fc(fluid.layers.concat(pooled + [dense], axis=1), 2, act="softmax",
                               param_attr=fluid.ParamAttr(name="fc_w",
                                                          initializer=fluid.initializer.NumpyArrayInitializer(W)),
                               bias_attr=fluid.ParamAttr(name="fc_b"))
        loss = fluid.layers.mean(fluid.layers.cross_entropy(pred, label))
        fluid.optimizer.SGD(0.5).minimize(loss)
    exe = fluid.Executor(fluid.CPUPlace())
    ds = fluid.DatasetFactory().create_dataset("QueueDataset")
    ds.set_use_var(slots + [dense, label])
    ds.set_pipe_command("cat")
    ds.set_batch_size(8)
    ds.set_thread(1)
    ds.set_filelist([str(f) for f in files])
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        exe.run(startup)
        capsys.readouterr()
        for _ in range(2):
            exe.train_from_dataset(main, ds, thread=1, fetch_list=[loss], fetch_info=["loss"], print_period=1)
        got = [float(x) for x in LOSS_DUMP.findall(capsys.readouterr().out)]
        assert len(REF["losses"]) == 10
        np.testing.assert_allclose(got, REF["losses"], rtol=1e-4)
        for name, want in REF["params"].items():
            np.testing.assert_allclose(np.array(scope.find_var(name).get_tensor()), want, rtol=1e-4, atol=1e-6)


def test_uint64_ids_wrap_as_in_paddle(tmp_path):
    """Ids of 2**63 and more (hashed 64-bit feasigns) keep their bits as int64, as Paddle's uint64 feed
    (dataset_uint64.json, make_dataset_uint64.py)."""
    ref = json.load(open(os.path.join(os.path.dirname(__file__), "..", "data", "paddle18", "dataset_uint64.json")))
    p = tmp_path / "d.txt"
    p.write_text("".join(ref["lines"]))
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.data("x", [None, 1], "int64", lod_level=1)
    ds = fluid.DatasetFactory().create_dataset("QueueDataset")
    ds.set_use_var([x])
    ds.set_batch_size(len(ref["lines"]))
    ds.set_filelist([str(p)])
    (feed,), = list(fluid.io.DataLoader.from_dataset(ds, fluid.cpu_places(1)))
    assert np.array(feed["x"]).ravel().tolist() == ref["ids"]
