"""One Hogwild policy for every optimizer kernel (backends/lowering/kernels/optimizer_ops.py): when threads share
the parameters (train_from_dataset with thread > 1), an update that keeps state holds its parameter's lock;
sgd and dpsgd, whose only read-modify-write is the parameter itself, stay lock-free as Hogwild is."""

import threading

import pytest
import torch

import paddle_compat as fluid
from paddle_compat.backends.lowering.codegen import lower_block
from paddle_compat.backends.lowering.kernels import optimizer_ops

O = fluid.optimizer
STATEFUL = [
    ("momentum", lambda: O.Momentum(0.1, momentum=0.9)),
    ("adam", lambda: O.Adam(0.1)),
    ("adagrad", lambda: O.Adagrad(0.1)),
    ("rmsprop", lambda: O.RMSProp(0.1)),
    ("adamax", lambda: O.Adamax(0.1)),
    ("ftrl", lambda: O.Ftrl(0.1)),
    ("decayed_adagrad", lambda: O.DecayedAdagrad(0.1)),
    ("adadelta", lambda: O.Adadelta(0.1)),
    ("lamb", lambda: O.Lamb(0.1)),
    ("lars_momentum", lambda: O.LarsMomentum(0.1, momentum=0.9)),
]
STATELESS = [("sgd", lambda: O.SGD(0.1)), ("dpsgd", lambda: O.Dpsgd(0.1, sigma=0.0))]


def _lowered(make_opt, shared):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data("x", shape=[3])
        loss = fluid.layers.mean(fluid.layers.fc(x, 2, bias_attr=False))
        make_opt().minimize(loss)
    scope = fluid.Scope()
    fluid.Executor(fluid.CPUPlace()).run(startup, scope=scope)
    param = main.global_block().all_parameters()[0].name
    run = lower_block(main, 0, scope, "cpu", ["x"], [loss.name], shared_params=shared)
    return run, scope, param


def _lock_of(scope, param):
    return optimizer_ops._HOGWILD_LOCKS.get((scope._uid, param))


@pytest.mark.parametrize("op_type,make_opt", STATEFUL + STATELESS, ids=[t for t, _ in STATEFUL + STATELESS])
def test_stateful_updates_hold_the_parameters_lock(op_type, make_opt):
    run, scope, param = _lowered(make_opt, shared=True)
    lock = _lock_of(scope, param)
    assert (lock is not None) == (op_type not in dict(STATELESS)), op_type
    feed = [torch.ones(4, 3)]
    if lock is None:
        run(feed)
        return
    # while another thread holds the parameter's lock, the step waits for it; then it runs
    lock.acquire()
    done = threading.Event()
    t = threading.Thread(target=lambda: (run(feed), done.set()), daemon=True)
    t.start()
    assert not done.wait(0.3), "%s updated its parameter without taking the lock" % op_type
    lock.release()
    t.join(60)
    assert done.is_set()


def test_no_locks_without_shared_parameters():
    run, scope, param = _lowered(lambda: O.Adam(0.1), shared=False)
    assert _lock_of(scope, param) is None
    run([torch.ones(4, 3)])
