"""train_from_dataset(thread=2) locally runs Hogwild: two threads, each reading its own files and running the
program on the one scope's parameters, updated in place without locks. It converges about as well as one
thread, runs every batch once, keeps one copy of each parameter, and an error in one thread stops the run."""

import re

import numpy as np
import pytest

import paddle_compat as fluid
from paddle_compat.fluid.executor import dataset_run as executor_dataset
from paddle_compat.backends.ps.records import PserverPlan, TrainerPlan, set_pserver_plan, set_trainer_plan

# a fetched loss as train_from_dataset prints it (Paddle 1.8's tensor dump): its value
LOSS_DUMP = re.compile(r"loss\t[^\t]*\t\tlod: [^\n]*\n\tdim: [^\n]*\n\tlayout: NCHW\n\tdtype: [^\n]*\n"
                       r"\tdata: \[([-0-9.e+]+)\]")

VOCAB, DENSE, BATCH, PER_FILE, FILES = 40, 6, 8, 64, 4


def write_files(tmp_path):
    """MultiSlot lines (per slot: a count, then the values): ids, dense features, a label that depends on both."""
    rng = np.random.RandomState(3)
    w = rng.uniform(-1, 1, DENSE)
    paths = []
    for f in range(FILES):
        lines = []
        for _ in range(PER_FILE):
            ids = rng.randint(0, VOCAB, size=rng.randint(1, 4))
            dense = rng.uniform(-1, 1, DENSE)
            label = int(dense @ w + np.mean(ids < VOCAB // 2) - 0.5 > 0)
            lines.append("%d %s %d %s 1 %d\n" % (len(ids), " ".join(map(str, ids)), DENSE,
                                                  " ".join("%.4f" % x for x in dense), label))
        p = tmp_path / ("part-%d" % f)
        p.write_text("".join(lines))
        paths.append(str(p))
    return paths


def build(opt):
    main, startup = fluid.Program(), fluid.Program()
    startup.random_seed = main.random_seed = 5
    with fluid.program_guard(main, startup):
        ids = fluid.data("ids", shape=[None, 1], dtype="int64", lod_level=1)
        dense = fluid.data("dense", shape=[None, DENSE], dtype="float32")
        label = fluid.data("label", shape=[None, 1], dtype="int64")
        emb = fluid.layers.sequence_pool(fluid.layers.embedding(ids, size=[VOCAB, 8], is_sparse=True), "sum")
        h = fluid.layers.fc(fluid.layers.concat([emb, dense], axis=1), 16, act="relu")
        predict = fluid.layers.fc(h, 2, act="softmax")
        loss = fluid.layers.mean(fluid.layers.cross_entropy(predict, label))
        (fluid.optimizer.SGD(0.1) if opt == "sgd" else fluid.optimizer.Adam(0.01)).minimize(loss)
    return main, startup, [ids, dense, label], loss


def losses(text):
    return [float(x) for x in LOSS_DUMP.findall(text)]


def train(paths, opt, thread, capsys, epochs=6):
    main, startup, use_vars, loss = build(opt)
    ds = fluid.DatasetFactory().create_dataset("QueueDataset")
    ds.set_use_var(use_vars)
    ds.set_batch_size(BATCH)
    ds.set_filelist(paths)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        exe.run(startup)
        names = [p.name for p in main.all_parameters()]
        ptrs = {n: scope.find_var(n).value.data_ptr() for n in names}
        capsys.readouterr()
        for _ in range(epochs):
            exe.train_from_dataset(main, ds, thread=thread, fetch_list=[loss], fetch_info=["loss"], print_period=1)
    got = losses(capsys.readouterr().out)
    return got, exe, scope, ptrs


@pytest.mark.parametrize("opt", ["sgd", "adam"])
def test_hogwild_converges_like_one_thread(tmp_path, capsys, opt):
    paths = write_files(tmp_path)
    per_epoch = FILES * PER_FILE // BATCH
    one, _, _, _ = train(paths, opt, 1, capsys)
    two, exe, scope, ptrs = train(paths, opt, 2, capsys)
    # thread 0 prints (as in Paddle 1.8) each of its own batches: all of them with one thread, its half with two
    assert len(one) == 6 * per_epoch and len(two) == 6 * per_epoch // 2
    # each thread had a lowering of its own
    assert sorted(k[-1] for k in exe._cache if k[-1] is not None) == [0, 1]
    # both train, and Hogwild ends close to one thread (same updates, in another order, some stale)
    half = per_epoch // 2
    last1, last2 = np.mean(one[-per_epoch:]), np.mean(two[-half:])
    assert last1 < 0.7 * np.mean(one[:per_epoch]), one
    assert last2 < 0.7 * np.mean(two[:half]), two
    assert last2 < 1.25 * last1 + 0.03, (last1, last2)
    # one copy of each parameter, updated in place: the startup program's tensors
    for name, ptr in ptrs.items():
        t = scope.find_var(name).value
        assert t.data_ptr() == ptr, name
        assert np.isfinite(np.array(scope.find_var(name).get_tensor())).all()


def test_hogwild_error_in_one_thread_stops_the_run(tmp_path):
    paths = write_files(tmp_path)
    with open(paths[1], "a") as f:
        f.write("2 1\n")   # two ids announced, one given
    main, startup, use_vars, loss = build("sgd")
    ds = fluid.DatasetFactory().create_dataset("QueueDataset")
    ds.set_use_var(use_vars)
    ds.set_batch_size(BATCH)
    ds.set_filelist(paths)
    exe = fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(fluid.Scope()):
        exe.run(startup)
        with pytest.raises(Exception, match="part-1"):
            exe.train_from_dataset(main, ds, thread=2)


def test_which_programs_run_hogwild():
    main = fluid.Program()
    assert executor_dataset._hogwild(main)
    for mode, want in [("async", True), ("half_async", True), ("sync", False), ("geo", False)]:
        prog = fluid.Program()
        prog.global_block().append_op(type="send", inputs={"X": []}, outputs={})
        set_trainer_plan(prog, TrainerPlan(0, 2, ("127.0.0.1:1",), mode, "d"))
        assert executor_dataset._hogwild(prog) is want, mode
    prog = fluid.Program()
    prog.global_block().append_op(type="listen_and_serv", inputs={"X": []}, outputs={})
    set_pserver_plan(prog, PserverPlan("127.0.0.1:1", 0, ("127.0.0.1:1",), 2, "async", "d"))
    assert not executor_dataset._hogwild(prog)
    assert not executor_dataset._hogwild(fluid.CompiledProgram(fluid.Program()))
