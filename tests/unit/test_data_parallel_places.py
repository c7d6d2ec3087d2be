"""Several places in one process (CPU_NUM=2): Paddle's feed split, fetch concatenation, averaged gradients."""

import os
import sys

import numpy as np
import pytest

import paddle_compat as fluid
from paddle_compat.backends.feed_split import split_feed, split_sizes
import dp_reference

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "dist", "scripts"))
import collective_trainer as T  # noqa: E402  (the reference MLP, data and per-worker batches)


@pytest.fixture
def two_cpus(monkeypatch):
    monkeypatch.setenv("CPU_NUM", "2")


def _mean_of_x():
    x = fluid.layers.data(name="x", shape=[1], dtype="float32")
    return x, fluid.layers.mean(x)


def test_split_sizes_rule():
    assert split_sizes(3, 2) == [1, 2]          # Paddle's doc: 3 samples on 2 GPUs -> [0] and [1, 2]
    assert split_sizes(5, 3) == [1, 1, 3]
    assert split_sizes(64, 2) == [32, 32]


def test_dict_feed_is_split_and_fetches_concatenated(two_cpus):
    x, m = _mean_of_x()
    exe = fluid.Executor(fluid.CPUPlace())
    prog = fluid.CompiledProgram(fluid.default_main_program()).with_data_parallel(loss_name=m.name)
    data = np.array([[0.0], [1.0], [2.0]], np.float32)
    got_x, got_m = exe.run(prog, feed={"x": data}, fetch_list=[x, m])
    np.testing.assert_array_equal(got_x, data)                          # concatenated back in order
    np.testing.assert_allclose(got_m, [0.0, 1.5])                      # one mean per place: [0] | [1, 2]
    per_place = exe.run(prog, feed={"x": data}, fetch_list=[m], return_merged=False)
    assert [a.tolist() for a in per_place[0]] == [[0.0], [1.5]]


def _trained_mean_of_x():
    x = fluid.layers.data(name="x", shape=[1], dtype="float32")
    loss = fluid.layers.mean(fluid.layers.fc(x, 1))
    fluid.optimizer.SGD(0.1).minimize(loss)
    return x, loss


def test_fewer_samples_than_places_raises_for_a_training_program(two_cpus):
    x, m = _trained_mean_of_x()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(fluid.default_startup_program())
    prog = fluid.CompiledProgram(fluid.default_main_program()).with_data_parallel(loss_name=m.name)
    # Paddle 1.8.5 raises EnforceNotMet; ours is also a ValueError
    with pytest.raises(fluid.core.EnforceNotMet, match="feed 'x' has 1 samples, fewer than the 2 places"):
        exe.run(prog, feed={"x": np.ones((1, 1), np.float32)}, fetch_list=[m])
    with pytest.raises(ValueError, match="list of 1 dicts but the program runs on 2 places"):
        exe.run(prog, feed=[{"x": np.ones((2, 1), np.float32)}], fetch_list=[m])


def test_an_inference_program_fed_fewer_samples_runs_on_fewer_places(two_cpus):
    # Paddle 1.8's partial feed (its test_parallel_executor_inference_feed_partial_data; 1.8.5 fetches (1, 2)
    # and (1,) from a 4-place fc + reduce_mean fed one sample, both as a dict and as a list of one dict)
    x, m = _mean_of_x()
    exe = fluid.Executor(fluid.CPUPlace())
    prog = fluid.CompiledProgram(fluid.default_main_program()).with_data_parallel(loss_name=m.name)
    got_x, got_m = exe.run(prog, feed={"x": np.full((1, 1), 4.0, np.float32)}, fetch_list=[x, m])
    assert got_x.tolist() == [[4.0]] and got_m.tolist() == [4.0]
    per_place = exe.run(prog, feed=[{"x": np.full((3, 1), 2.0, np.float32)}], fetch_list=[m], return_merged=False)
    assert [a.tolist() for a in per_place[0]] == [[2.0]]
    with pytest.raises(ValueError, match="list of 3 dicts but the program runs on 2 places"):
        exe.run(prog, feed=[{"x": np.ones((1, 1), np.float32)}] * 3, fetch_list=[m])


def test_a_persistable_feed_of_one_sample_is_copied_to_every_place(two_cpus):
    x, m = _trained_mean_of_x()
    lr = fluid.layers.create_global_var(name="lr", shape=[1], value=1.0, dtype="float32", persistable=True)
    out = fluid.layers.elementwise_mul(m, lr)
    block = fluid.default_main_program().global_block()
    a, b = split_feed({"x": np.ones((2, 1), np.float32), "lr": np.array([0.5], np.float32)}, 2, block)
    assert a["lr"].tolist() == b["lr"].tolist() == [0.5] and a["lr"] is not b["lr"]
    assert split_feed({"lr": np.array([0.5, 0.25], np.float32)}, 2, block)[1]["lr"].tolist() == [0.25]
    with pytest.raises(fluid.core.EnforceNotMet, match="'lr' is persistable and has 2 samples for 4 places"):
        split_feed({"lr": np.array([0.5, 0.25], np.float32)}, 4, block)
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(fluid.default_startup_program())
    prog = fluid.CompiledProgram(fluid.default_main_program()).with_data_parallel(loss_name=m.name)
    got = exe.run(prog, feed={"x": np.ones((2, 1), np.float32), "lr": np.array([0.5], np.float32)},
                  fetch_list=[out, m])
    np.testing.assert_allclose(got[0], got[1] * 0.5)
    # Paddle 1.8.5: the fed value is written into the scope, where the optimizer ops read it too
    assert np.array(fluid.global_scope().find_var("lr").get_tensor()).tolist() == [0.5]


def test_lod_feed_splits_by_sequence():
    block = fluid.Program().global_block()
    t = fluid.create_lod_tensor(np.arange(6, dtype=np.float32).reshape(6, 1), [[1, 2, 3]], fluid.CPUPlace())
    a, b = split_feed({"s": t}, 2, block)
    assert a["s"].lod() == [[0, 1]] and np.array(a["s"]).ravel().tolist() == [0.0]
    assert b["s"].lod() == [[0, 2, 5]] and np.array(b["s"]).ravel().tolist() == [1.0, 2.0, 3.0, 4.0, 5.0]


def _train(runner_of, steps):
    main, start, loss = T.build()
    with fluid.program_guard(main, start):
        fluid.optimizer.SGD(0.1).minimize(loss)
    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(start, scope=scope)
    run = runner_of(main, loss, exe, scope)
    losses = []
    for s in range(steps):
        both = {k: np.concatenate([T.feed(s, 0)[k], T.feed(s, 1)[k]]) for k in ("img", "label")}
        losses.append(np.asarray(run(both, [loss.name]))[0])
    params = {p: np.array(scope.find_var(p).get_tensor()) for p in T.PARAMS}
    return np.array(losses), params


def _check_against_reference(losses, params, steps):
    ref_losses, ref_params = dp_reference.averaged_sgd(T.build, lambda s: [T.feed(s, 0), T.feed(s, 1)], steps, 0.1)
    assert losses.shape == (steps, 2)                                   # one mean loss per place
    np.testing.assert_allclose(losses, ref_losses, rtol=0, atol=1e-5)
    for p in T.PARAMS:
        np.testing.assert_allclose(params[p], ref_params[p], rtol=0, atol=1e-5, err_msg=p)


def test_compiled_program_on_two_cpu_places_averages_gradients(two_cpus):
    def runner(main, loss, exe, scope):
        prog = fluid.CompiledProgram(main).with_data_parallel(loss_name=loss.name)
        return lambda feed, fetch: exe.run(prog, feed=feed, fetch_list=fetch, scope=scope)
    losses, params = _train(runner, 3)
    _check_against_reference(losses, params, 3)


def test_parallel_executor_on_two_cpu_places(two_cpus):
    def runner(main, loss, exe, scope):
        pe = fluid.ParallelExecutor(False, loss_name=loss.name, main_program=main, scope=scope)
        assert pe.device_count == 2
        return lambda feed, fetch: pe.run(fetch_list=fetch, feed=feed)
    losses, params = _train(runner, 3)
    _check_against_reference(losses, params, 3)


def test_lr_counter_advances_once_per_step(two_cpus):
    x = fluid.layers.data(name="x", shape=[4], dtype="float32")
    loss = fluid.layers.mean(fluid.layers.fc(x, 1))
    lr = fluid.layers.exponential_decay(0.1, decay_steps=1, decay_rate=0.5)
    fluid.optimizer.SGD(lr).minimize(loss)
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(fluid.default_startup_program())
    prog = fluid.CompiledProgram(fluid.default_main_program()).with_data_parallel(loss_name=loss.name)
    for _ in range(3):
        got_lr, = exe.run(prog, feed={"x": np.ones((4, 4), np.float32)}, fetch_list=[lr])
    np.testing.assert_allclose(got_lr, [0.025, 0.025])   # step 2 on both places: 0.1 * 0.5^2
    counter = fluid.global_scope().find_var("@LR_DECAY_COUNTER@")
    assert int(np.array(counter.get_tensor()).reshape(-1)[0]) == 2


def test_gradient_scale_one_sums_gradients(two_cpus):
    """GradientScaleStrategy.One: per-place gradients are summed, i.e. averaging with twice the rate."""
    def runner(main, loss, exe, scope):
        bs = fluid.BuildStrategy()
        bs.gradient_scale_strategy = fluid.BuildStrategy.GradientScaleStrategy.One
        prog = fluid.CompiledProgram(main).with_data_parallel(loss_name=loss.name, build_strategy=bs)
        return lambda feed, fetch: exe.run(prog, feed=feed, fetch_list=fetch, scope=scope)
    losses, params = _train(runner, 2)
    ref_losses, ref_params = dp_reference.averaged_sgd(T.build, lambda s: [T.feed(s, 0), T.feed(s, 1)], 2, 0.2)
    np.testing.assert_allclose(losses, ref_losses, rtol=0, atol=1e-5)
    for p in T.PARAMS:
        np.testing.assert_allclose(params[p], ref_params[p], rtol=0, atol=1e-5, err_msg=p)


def test_test_program_shares_the_places_of_the_training_program(two_cpus):
    main, start, loss = T.build()
    test_prog = main.clone(for_test=True)
    with fluid.program_guard(main, start):
        fluid.optimizer.SGD(0.1).minimize(loss)
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(start)
    train = fluid.ParallelExecutor(False, loss_name=loss.name, main_program=main)
    test = fluid.ParallelExecutor(False, main_program=test_prog, share_vars_from=train)
    both = {k: np.concatenate([T.feed(0, 0)[k], T.feed(0, 1)[k]]) for k in ("img", "label")}
    before = test.run(fetch_list=[loss.name], feed=both)[0]      # evaluating first sets up the shared places
    train.run(fetch_list=[loss.name], feed=both)
    got = test.run(fetch_list=[loss.name], feed=both)[0]
    assert not np.allclose(before, got)
    # the same evaluation in one place, on the updated parameters
    want = [exe.run(test_prog, feed=T.feed(0, t), fetch_list=[loss.name])[0][0] for t in (0, 1)]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)
    assert test._compiled_program._runner._scopes == train._compiled_program._runner._scopes


def test_several_trainers_need_the_nccl2_startup_or_endpoints():
    x, m = _mean_of_x()
    pe = fluid.ParallelExecutor(False, loss_name=m.name, num_trainers=2, trainer_id=1)
    with pytest.raises(RuntimeError, match="no NCCLID: run the startup program transpiled in nccl2 mode"):
        pe.run(fetch_list=[m], feed={"x": np.ones((2, 1), np.float32)})
    bs = fluid.BuildStrategy()
    bs.num_trainers, bs.trainer_id, bs.trainers_endpoints = 2, 0, ["127.0.0.1:6170"]
    prog = fluid.CompiledProgram(fluid.default_main_program()).with_data_parallel(build_strategy=bs)
    with pytest.raises(ValueError, match="trainers_endpoints lists 1 endpoints but num_trainers is 2"):
        fluid.Executor(fluid.CPUPlace()).run(prog, feed={"x": np.ones((2, 1), np.float32)}, fetch_list=[m])
    with pytest.raises(ValueError, match="trainer_id 2 is out of range for num_trainers 2"):
        fluid.ParallelExecutor(False, loss_name=m.name, num_trainers=2, trainer_id=2)


def test_lod_fetch_is_merged_across_places(two_cpus):
    s = fluid.layers.data(name="s", shape=[1], dtype="float32", lod_level=1)
    prog = fluid.CompiledProgram(fluid.default_main_program()).with_data_parallel()
    t = fluid.create_lod_tensor(np.arange(6, dtype=np.float32).reshape(6, 1), [[1, 2, 3]], fluid.CPUPlace())
    exe = fluid.Executor(fluid.CPUPlace())
    got, = exe.run(prog, feed={"s": t}, fetch_list=[s], return_numpy=False)
    assert got.lod() == [[0, 1, 3, 6]] and np.array(got).ravel().tolist() == [0, 1, 2, 3, 4, 5]
    with pytest.raises(RuntimeError, match="holds LoD information"):
        exe.run(prog, feed={"s": t}, fetch_list=[s])


def test_data_feeder_groups_one_minibatch_per_place_of_cpu_num(two_cpus):
    x = fluid.layers.data(name="x", shape=[1], dtype="float32")
    feeder = fluid.DataFeeder(place=fluid.CPUPlace(), feed_list=[x])

    def reader():
        for i in range(5):
            yield [(np.array([float(i)], "float32"),)]

    groups = list(feeder.decorate_reader(reader, multi_devices=True)())
    assert [len(g) for g in groups] == [2, 2]     # CPU_NUM=2 places; the fifth minibatch is dropped
    assert np.array(groups[1][1]["x"]).tolist() == [[3.0]]


def test_a_non_iterable_loader_keeping_its_last_batch_runs_it_on_fewer_places(two_cpus):
    # inference with drop_last=False: 3 batches on 2 places are 2 steps, the second on one place (Paddle 1.8.5)
    x = fluid.data(name="x", shape=[None, 1], dtype="float32")
    loader = fluid.io.DataLoader.from_generator(feed_list=[x], capacity=4, iterable=False, drop_last=False)
    y = fluid.layers.scale(x, scale=2.0)
    loader.set_batch_generator(lambda: iter([(np.full([2, 1], float(i), "float32"),) for i in range(3)]))
    exe = fluid.Executor(fluid.CPUPlace())
    prog = fluid.CompiledProgram(fluid.default_main_program()).with_data_parallel()
    loader.start()
    got = []
    with pytest.raises(fluid.core.EOFException):
        while True:
            got.append(exe.run(prog, fetch_list=[y])[0].ravel().tolist())
    assert got == [[0.0, 0.0, 2.0, 2.0], [4.0, 4.0]]


def test_a_lod_tensor_array_fetched_from_each_place(two_cpus):
    # Paddle 1.8.5 (its test_fetch_lod_tensor_array): unmerged, one list per place; merged, element-wise concat
    x = fluid.data(name="x", shape=[-1, 3], dtype="float32")
    loss = fluid.layers.mean(fluid.layers.fc(x, 1))
    fluid.optimizer.SGD(0.1).minimize(loss)
    i = fluid.layers.zeros(shape=[1], dtype="int64")
    arr = fluid.layers.array_write(x=x, i=i)
    fluid.layers.array_write(x=loss, i=fluid.layers.increment(i), array=arr)
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(fluid.default_startup_program())
    prog = fluid.CompiledProgram(fluid.default_main_program()).with_data_parallel(loss_name=loss.name)
    data = np.arange(12, dtype="float32").reshape(4, 3)
    loss_v, arr_v = exe.run(prog, feed={"x": data}, fetch_list=[loss, arr], return_merged=False)
    assert np.array(loss_v).shape == (2, 1) and len(arr_v) == 2
    assert [np.array(a[0]).tolist() for a in arr_v] == [data[:2].tolist(), data[2:].tolist()]
    loss_v, arr_v = exe.run(prog, feed={"x": data}, fetch_list=[loss, arr], return_merged=True)
    assert np.array(arr_v[0]).tolist() == data.tolist() and np.allclose(loss_v, arr_v[1])


def test_parallel_executor_reports_when_its_local_exe_scopes_are_made_anew(two_cpus):
    # Paddle 1.8.5's bookkeeping: made by a run, dropped every num_iteration_per_drop_scope runs or on request
    x = fluid.layers.data(name="x", shape=[1], dtype="float32")
    loss = fluid.layers.mean(fluid.layers.fc(x, 2))
    fluid.optimizer.SGD(0.01).minimize(loss)
    fluid.Executor(fluid.CPUPlace()).run(fluid.default_startup_program())
    strategy = fluid.ExecutionStrategy()
    strategy.num_iteration_per_drop_scope = 2
    pe = fluid.ParallelExecutor(use_cuda=False, main_program=fluid.default_main_program(), loss_name=loss.name,
                                exec_strategy=strategy)
    feed = {"x": np.ones((4, 1), "float32")}
    assert pe._need_create_local_exe_scopes()
    seen = []
    for _ in range(3):
        pe.run(feed=feed, fetch_list=[loss.name])
        seen.append(pe._need_create_local_exe_scopes())
    assert seen == [False, True, False]
    pe.drop_local_exe_scopes()
    assert pe._need_create_local_exe_scopes()
