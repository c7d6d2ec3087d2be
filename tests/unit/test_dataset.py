"""fluid.dataset + Executor.train_from_dataset: a small CTR-like model fed from MultiSlot files that a
data_generator pipe command writes; the losses match feeding the same batches to exe.run."""

import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import paddle_compat as fluid

# a fetched loss as train_from_dataset prints it (Paddle 1.8's tensor dump): its value
LOSS_DUMP = re.compile(r"loss\t[^\t]*\t\tlod: [^\n]*\n\tdim: [^\n]*\n\tlayout: NCHW\n\tdtype: [^\n]*\n"
                       r"\tdata: \[([-0-9.e+]+)\]")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NSPARSE, VOCAB, DENSE, BATCH = 3, 50, 4, 16

GEN = textwrap.dedent("""
    import sys
    sys.path.insert(0, %r)
    import paddle_compat.fluid.incubate.data_generator as dg

    class CTR(dg.MultiSlotDataGenerator):
        def generate_sample(self, line):
            def it():
                f = line.split(";")
                sparse = [[int(x) for x in s.split()] for s in f[0].split("|")]
                dense = [float(x) for x in f[1].split()]
                out = [("s%%d" %% i, ids) for i, ids in enumerate(sparse)]
                yield out + [("dense", dense), ("label", [int(f[2])])]
            return it

    CTR().run_from_stdin()
""") % ROOT


def raw_samples(n, seed):
    """Raw lines: clicks depend on whether sparse ids are below VOCAB/2 and on the dense features."""
    rng = np.random.RandomState(seed)
    lines, samples = [], []
    for _ in range(n):
        sparse = [list(rng.randint(0, VOCAB, size=rng.randint(1, 4))) for _ in range(NSPARSE)]
        dense = np.round(rng.uniform(-1, 1, DENSE), 3)
        score = sum(np.mean(np.array(s) < VOCAB // 2) for s in sparse) + dense[0] - 1.5
        label = int(score > 0)
        lines.append("%s;%s;%d\n" % ("|".join(" ".join(map(str, s)) for s in sparse),
                                     " ".join(map(repr, map(float, dense))), label))
        samples.append((sparse, dense, label))
    return lines, samples


@pytest.fixture
def files(tmp_path):
    paths, samples = [], []
    for i in range(2):
        lines, s = raw_samples(40, seed=i)
        p = tmp_path / ("part-%d" % i)
        p.write_text("".join(lines))
        paths.append(str(p))
        samples.extend(s)
    gen = tmp_path / "gen.py"
    gen.write_text(GEN)
    return paths, samples, "%s %s" % (sys.executable, gen)


def build():
    main, startup = fluid.Program(), fluid.Program()
    startup.random_seed = main.random_seed = 7
    with fluid.program_guard(main, startup):
        slots = [fluid.data("s%d" % i, shape=[None, 1], dtype="int64", lod_level=1) for i in range(NSPARSE)]
        dense = fluid.data("dense", shape=[None, DENSE], dtype="float32")
        label = fluid.data("label", shape=[None, 1], dtype="int64")
        pooled = [fluid.layers.sequence_pool(fluid.layers.embedding(s, size=[VOCAB, 8], is_sparse=True),
                                             "sum") for s in slots]
        h = fluid.layers.fc(fluid.layers.concat(pooled + [dense], axis=1), 16, act="relu")
        predict = fluid.layers.fc(h, 2, act="softmax")
        loss = fluid.layers.mean(fluid.layers.cross_entropy(predict, label))
        fluid.optimizer.SGD(0.1).minimize(loss)
    return main, startup, slots + [dense, label], loss


def printed_losses(text):
    return [float(x) for x in LOSS_DUMP.findall(text)]


def make_dataset(kind, use_vars, paths, pipe):
    ds = fluid.DatasetFactory().create_dataset(kind)
    ds.set_use_var(use_vars)
    ds.set_pipe_command(pipe)
    ds.set_batch_size(BATCH)
    ds.set_thread(1)
    ds.set_filelist(paths)
    return ds


@pytest.mark.parametrize("kind", ["QueueDataset", "InMemoryDataset"])
def test_train_from_dataset_matches_exe_run(files, kind, capsys):
    paths, samples, pipe = files
    main, startup, use_vars, loss = build()
    exe = fluid.Executor(fluid.CPUPlace())
    ds = make_dataset(kind, use_vars, paths, pipe)
    if kind == "InMemoryDataset":
        ds.load_into_memory()
        assert ds.get_memory_data_size() == len(samples)
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        exe.run(startup)
        capsys.readouterr()
        for _ in range(8):
            exe.train_from_dataset(main, ds, thread=1, fetch_list=[loss], fetch_info=["loss"], print_period=1)
    got = printed_losses(capsys.readouterr().out)
    per_epoch = -(-len(samples) // BATCH)
    assert len(got) == 8 * per_epoch
    assert np.mean(got[-per_epoch:]) < 0.8 * np.mean(got[:per_epoch])

    # the same batches, built by hand, through exe.run on a fresh scope
    place = fluid.CPUPlace()
    scope2 = fluid.Scope()
    want = []
    with fluid.scope_guard(scope2):
        exe.run(startup)
        for _ in range(8):
            for i in range(0, len(samples), BATCH):
                b = samples[i:i + BATCH]
                feed = {}
                for k in range(NSPARSE):
                    seqs = [s[0][k] for s in b]
                    if kind == "InMemoryDataset":   # Paddle's in-memory feed drops zero ids; an empty slot gets one 0
                        seqs = [[x for x in q if x != 0] or [0] for q in seqs]
                    feed["s%d" % k] = fluid.create_lod_tensor(
                        np.array([x for q in seqs for x in q], "int64").reshape(-1, 1), [[len(q) for q in seqs]],
                        place)
                feed["dense"] = np.array([s[1] for s in b], "float32")
                feed["label"] = np.array([[s[2]] for s in b], "int64")
                want.append(float(exe.run(main, feed=feed, fetch_list=[loss])[0].reshape(-1)[0]))
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_threads_train_and_shuffle(files, capsys):
    paths, samples, pipe = files
    main, startup, use_vars, loss = build()
    exe = fluid.Executor(fluid.CPUPlace())
    ds = make_dataset("InMemoryDataset", use_vars, paths, pipe)
    ds.set_thread(2)
    ds.load_into_memory()
    ds.global_shuffle()
    assert ds.get_shuffle_data_size() == len(samples) == ds.get_memory_data_size()
    with fluid.scope_guard(fluid.Scope()):
        exe.run(startup)
        capsys.readouterr()
        for _ in range(8):
            exe.train_from_dataset(main, ds, fetch_list=[loss], fetch_info=["loss"], print_period=1)
    got = printed_losses(capsys.readouterr().out)
    # thread 0 prints (as in Paddle 1.8), every one of its own batches: half the shuffled samples each epoch
    per_epoch = -(-len(samples) // 2 // BATCH)
    assert len(got) == 8 * per_epoch
    assert np.mean(got[-per_epoch:]) < 0.8 * np.mean(got[:per_epoch])
    ds.release_memory()
    with pytest.raises(RuntimeError, match="load_into_memory"):
        ds.get_memory_data_size()


def test_bad_line_names_file_line_and_slot(tmp_path):
    _, _, use_vars, _ = build()
    p = tmp_path / "bad.txt"
    p.write_text("1 3 1 4 1 5 4 0.1 0.2 0.3 0.4 1 1\n1 3 1 4 5 5 4\n")
    ds = make_dataset("InMemoryDataset", use_vars, [str(p)], "cat")
    with pytest.raises(ValueError, match=r"bad.txt:2: slot 's2' announces 5 values"):
        ds.load_into_memory()
    p.write_text("1 3 1 4 1 5 4 0.1 0.2 0.3 0.4 1 1\n1 3 1 4 1 5 4 0.1 x 0.3 0.4 1 1\n")
    with pytest.raises(ValueError, match=r"bad.txt:2: slot 'dense' \(float32\) has a bad value 'x'"):
        ds.load_into_memory()
    p.write_text("1 3 1 4 1 5 4 0.1 0.2 0.3 0.4 1 1\n1 3 1 4.5 1 5 4 0.1 0.2 0.3 0.4 1 1\n")
    with pytest.raises(ValueError, match=r"bad.txt:2: slot 's1' \(int64\) has a bad value '4.5'"):
        ds.load_into_memory()
    p.write_text("1 3 1 4 1 5 3 0.1 0.2 0.3 1 1\n")
    ds.load_into_memory()
    exe = fluid.Executor(fluid.CPUPlace())
    with pytest.raises(ValueError, match=r"bad.txt:1: slot 'dense' is dense \(lod_level 0\) with shape \[-1, 4\] "
                                         r"but holds 3 values, not whole rows of 4"):
        exe.train_from_dataset(fluid.Program(), ds)


def test_exact_ids_and_mixed_batches(tmp_path):
    """ids past 2**53 keep every digit (the exact per-line path); a dense slot of varying width is fed as
    Paddle 1.8.5 feeds it: all its values, one per row, with the lines' offsets as LoD."""
    from paddle_compat.fluid.dataset.feed import Rows, SlotSpec, make_batch, parse_text
    _, _, use_vars, _ = build()
    slots = [SlotSpec(v) for v in use_vars]
    big = 2 ** 62 + 1
    rows = Rows.of(parse_text("1 3 2 %d 7 1 5 4 0 0 0 0 1 1\n1 9 1 4 1 5 4 1 1 1 1 1 0\n" % big, slots, "f"))
    feed = make_batch(rows, slots)
    assert np.array(feed["s1"]).reshape(-1).tolist() == [big, 7, 4]
    assert feed["s1"].recursive_sequence_lengths() == [[2, 1]]
    fast = Rows.of(parse_text("1 3 2 8 7 1 5 4 0 0 0 0 1 1\n1 9 1 4 1 5 4 1 1 1 1 1 0\n", slots, "g"))
    both = Rows.concat([fast, rows])
    both.shuffle(np.random.RandomState(0))
    feed = make_batch(both, slots)
    assert sorted(np.array(feed["s0"]).reshape(-1).tolist()) == [3, 3, 9, 9]
    assert feed["dense"].shape == (4, 4) and feed["label"].shape == (4, 1)
    wide = parse_text("1 3 1 4 1 5 2 0 0 1 1\n", [SlotSpec(v) for v in use_vars], "w")
    other = fluid.data("dense", shape=[None, -1], dtype="float32")
    slots2 = slots[:3] + [SlotSpec(other)] + slots[4:]
    mixed = Rows.concat([Rows.of(parse_text("1 3 1 4 1 5 4 0 0 0 0 1 1\n", slots2, "a")),
                         Rows.of(parse_text("1 3 1 4 1 5 2 0 0 1 1\n", slots2, "b"))])
    assert wide.n == 1
    feed = make_batch(mixed, slots2)
    assert feed["dense"].shape() == [6, 1] and feed["dense"].lod() == [[0, 4, 6]]


def test_pipe_failure_and_missing_file(tmp_path):
    _, _, use_vars, _ = build()
    p = tmp_path / "ok.txt"
    p.write_text("1 3 1 4 1 5 4 0.1 0.2 0.3 0.4 1 1\n")
    ds = make_dataset("QueueDataset", use_vars, [str(p)], "echo broken-generator >&2; exit 3")
    with pytest.raises(RuntimeError, match=r"(?s)exit status 3.*broken-generator"):
        exe = fluid.Executor(fluid.CPUPlace())
        exe.train_from_dataset(fluid.Program(), ds)
    ds = make_dataset("InMemoryDataset", use_vars, [str(tmp_path / "nope.txt")], "cat")
    with pytest.raises(FileNotFoundError, match="nope.txt"):
        ds.load_into_memory()


def test_api_errors():
    ds = fluid.DatasetFactory().create_dataset("QueueDataset")
    with pytest.raises(TypeError, match="set_download_cmd: expected a shell command string"):
        ds.set_download_cmd(["cat"])
    with pytest.raises(NotImplementedError, match="InMemoryDataset"):
        ds.local_shuffle()
    with pytest.raises(ValueError, match="unknown dataset 'Foo'"):
        fluid.DatasetFactory().create_dataset("Foo")
    assert fluid.fluid.dataset.InMemoryDataset is type(fluid.DatasetFactory().create_dataset("InMemoryDataset"))


@pytest.mark.parametrize("drop_last,sizes", [(True, [32, 32]), (False, [32, 32, 16])])
def test_data_loader_from_dataset(files, drop_last, sizes):
    paths, samples, pipe = files
    _, _, use_vars, _ = build()
    ds = make_dataset("QueueDataset", use_vars, paths, pipe)
    ds.set_batch_size(32)
    loader = fluid.io.DataLoader.from_dataset(ds, fluid.cpu_places(1), drop_last=drop_last)
    got = [b[0]["dense"].shape()[0] for b in loader]
    assert got == sizes
    first = next(iter(loader))[0]
    # Paddle 1.8.5's loader yields LoDTensors on their places (its test calls .shape() and ._place())
    assert isinstance(first["dense"], fluid.LoDTensor) and first["dense"]._place()._equals(fluid.CPUPlace())
    assert first["s0"].recursive_sequence_lengths()[0] == [len(s[0][0]) for s in samples[:32]]
    np.testing.assert_allclose(first["dense"], [s[1] for s in samples[:32]], rtol=1e-6)


@pytest.mark.parametrize("line,msg", [
    ("1 3 1 4\n", r"f:1: slot 's2' is missing \(the line has 2 slots"),
    ("1 3 0 1 5 4 0 0 0 0 1 1\n", r"f:1: slot 's1' has 0 values"),
    ("1 3 x 4 1 5 4 0 0 0 0 1 1\n", r"f:1: slot 's1': expected a value count, got 'x'"),
    ("1 3 1 4 1 5 4 0 0 0 0 1 1 9\n", r"f:1: 1 tokens left after the last slot 'label'"),
])
def test_malformed_lines(line, msg):
    from paddle_compat.fluid.dataset.feed import SlotSpec, parse_text
    _, _, use_vars, _ = build()
    slots = [SlotSpec(v) for v in use_vars]
    assert len(parse_text("\n1 3 1 4 1 5 4 0 0 0 0 1 1\n", slots, "f").linenos) == 1
    with pytest.raises(ValueError, match=msg):
        parse_text(line, slots, "f")


def test_fetch_handler_sees_parameters(files):
    paths, samples, pipe = files
    main, startup, use_vars, loss = build()
    fc_w = [p for p in main.global_block().all_parameters() if p.name.startswith("fc")][0]
    seen = []

    class Handler(fluid.executor.FetchHandler):
        def handler(self, res_dict):
            seen.append(res_dict["w"].copy())

    exe = fluid.Executor(fluid.CPUPlace())
    ds = make_dataset("QueueDataset", use_vars, paths, pipe)
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        exe.run(startup)
        exe.train_from_dataset(main, ds, fetch_handler=Handler({"w": fc_w}, period_secs=0))
        final = np.array(scope.find_var(fc_w.name).get_tensor())
    assert len(seen) == -(-len(samples) // BATCH)
    assert not np.allclose(seen[0], seen[-1])
    np.testing.assert_allclose(seen[-1], final)
    with pytest.raises(ValueError, match="var_dict"):
        fluid.executor.FetchHandler({})


def test_dataset_config_and_empty_runs_as_paddle(tmp_path, capsys):
    # Paddle 1.8.5: FileInstantDataset exists, parse_ins_id / parse_content are kept, an empty filelist
    # trains on nothing, no dataset is a RuntimeError in its words, FetchHandler takes one name and has help()
    for kind in ("InMemoryDataset", "QueueDataset", "FileInstantDataset"):
        fluid.DatasetFactory().create_dataset(kind)
    with pytest.raises(ValueError):
        fluid.DatasetFactory().create_dataset("MyOwnDataset")
    import paddle_compat.fluid as pfluid   # (Paddle's names: paddle.fluid.InMemoryDataset, .executor)
    ds = pfluid.InMemoryDataset()
    ds.set_parse_ins_id(True)
    ds.set_parse_content(True)
    assert ds.parse_ins_id and ds.parse_content
    x = fluid.layers.data(name="slot1", shape=[1], dtype="int64", lod_level=1)
    q = fluid.DatasetFactory().create_dataset("QueueDataset")
    q.set_use_var([x])
    exe = fluid.Executor(fluid.CPUPlace())
    with pytest.warns(UserWarning, match="filelist is empty"):
        exe.train_from_dataset(fluid.default_main_program(), q)
    with pytest.raises(RuntimeError) as info:
        exe.train_from_dataset(fluid.default_main_program(), None)
    assert str(info.value) == "dataset is need and should be initialized"
    fh = pfluid.executor.FetchHandler(x.name)
    assert fh.var_dict == {x.name: x.name}
    fh.help()
    assert "FetchHandlerExample" in capsys.readouterr().out
