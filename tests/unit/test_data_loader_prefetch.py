"""DataLoader/PyReader `capacity`: a background thread keeps up to `capacity` batches ready (readers/prefetch.py).

Checked by behaviour, not timing: how far the generator runs ahead of the consumer, that reset() and an early
break stop the thread, that a generator's exception reaches the training thread with its own type and message,
and that a silent generator is reported after FLAGS_reader_queue_timeout_ms."""

import threading
import time

import numpy as np
import pytest

import paddle_compat as fluid
from paddle_compat.readers.prefetch import Prefetcher

PLACE = fluid.CPUPlace()


def _wait_for(pred, timeout=10.0):
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return True
        time.sleep(0.01)
    return pred()


def _loader(capacity, iterable, produced, n=20, fail_at=None):
    x = fluid.layers.data(name="x", shape=[1], dtype="float32")
    y = fluid.layers.scale(x, 2.0)

    def batches():
        for i in range(n):
            if fail_at is not None and i == fail_at:
                raise KeyError("bad sample %d" % i)
            produced.append(threading.current_thread().name)
            yield [np.full((2, 1), i, "float32")]
    loader = fluid.io.DataLoader.from_generator(feed_list=[x], capacity=capacity, iterable=iterable)
    loader.set_batch_generator(batches, places=PLACE)
    return loader, y


def test_generator_runs_ahead_by_capacity_in_its_own_thread():
    produced = []
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        loader, y = _loader(3, True, produced)
    exe = fluid.Executor(PLACE)
    it = iter(loader())
    first = next(it)
    # the thread fills the queue (3) and holds one more batch waiting for room: 1 consumed + 3 queued + 1
    assert _wait_for(lambda: len(produced) == 5)
    time.sleep(0.2)
    assert len(produced) == 5, "the producer must block at capacity"
    assert set(produced) == {"DataLoader(%s)-prefetch" % loader._id}
    out = [float(exe.run(main, feed=first, fetch_list=[y])[0][0][0])]
    out += [float(exe.run(main, feed=d, fetch_list=[y])[0][0][0]) for d in it]
    assert out == [2.0 * i for i in range(20)]


def test_non_iterable_reset_stops_the_thread_and_restarts_cleanly():
    produced = []
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        loader, y = _loader(2, False, produced)
    exe = fluid.Executor(PLACE)
    for _ in range(2):          # two passes, the first reset mid-pass
        produced.clear()
        loader.start()
        got = [float(exe.run(main, fetch_list=[y])[0][0][0]) for _ in range(3)]
        assert got == [0.0, 2.0, 4.0]
        loader.reset()
        n = len(produced)
        time.sleep(0.3)
        assert len(produced) == n <= 3 + 2 + 1, "the prefetch thread kept producing after reset()"
    loader.start()
    seen = 0
    with pytest.raises(fluid.core.EOFException):
        while True:
            exe.run(main, fetch_list=[y])
            seen += 1
    assert seen == 20
    loader.reset()


def test_break_out_of_the_loop_stops_the_thread():
    produced = []
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        loader, _ = _loader(2, True, produced, n=1000)
    for i, _ in enumerate(loader()):
        if i == 1:
            break
    time.sleep(0.3)
    n = len(produced)
    time.sleep(0.3)
    assert len(produced) == n < 10


@pytest.mark.parametrize("iterable", [True, False])
def test_generator_exception_reaches_the_training_thread(iterable):
    produced = []
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        loader, y = _loader(2, iterable, produced, fail_at=4)
    exe = fluid.Executor(PLACE)
    seen = 0
    with pytest.raises(Exception) as err:
        if iterable:
            for d in loader():
                exe.run(main, feed=d, fetch_list=[y])
                seen += 1
        else:
            loader.start()
            while True:
                exe.run(main, fetch_list=[y])
                seen += 1
    # iterable: the generator's own KeyError; non-iterable: the read op's error, naming the op, caused by it
    exc = err.value if iterable else err.value.__cause__
    assert isinstance(exc, KeyError) and "bad sample 4" in str(err.value)
    assert seen == 4          # every batch made before the failure was trained on, in order


def test_a_silent_generator_is_reported_after_the_deadline(monkeypatch):
    monkeypatch.setenv("FLAGS_reader_queue_timeout_ms", "300")
    release = threading.Event()

    def stuck():
        release.wait(5)
        yield 1
    p = Prefetcher(stuck(), 2, name="DataLoader(demo)")
    with pytest.raises(TimeoutError, match=r"DataLoader\(demo\).*FLAGS_reader_queue_timeout_ms"):
        next(p)
    release.set()


def test_capacity_none_keeps_the_calling_thread():
    produced = []
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        loader, _ = _loader(None, True, produced, n=3)
    assert len(list(loader())) == 3
    assert set(produced) == {threading.current_thread().name}
