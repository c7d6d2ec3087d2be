"""fluid.reader's DataLoaderBase / keep_data_loader_order, loader.iterable, loader._reset(), PyReader._loader,
LoDTensor._place(), and multiprocess_reader's EnforceNotMet (Paddle 1.8.5's behaviour in its reader tests)."""

import numpy as np
import pytest

import paddle_compat.fluid as fluid
from paddle_compat.fluid import core
from paddle_compat.fluid.reader import DataLoaderBase, GeneratorLoader, keep_data_loader_order


def test_data_loader_base_is_abstract_and_checks_arrays():
    loader = DataLoaderBase()
    assert loader() is loader
    with pytest.raises(NotImplementedError):
        iter(loader)
    with pytest.raises(NotImplementedError):
        next(loader)
    assert GeneratorLoader._check_input_array([[1, 2], [3, 4]]).shape == (2, 2)
    with pytest.raises(TypeError, match="Faild to convert input data to a regular ndarray"):
        GeneratorLoader._check_input_array([[1, 2], [3]])


def test_keep_data_loader_order_switch():
    assert keep_data_loader_order() is True
    keep_data_loader_order(False)
    try:
        assert keep_data_loader_order() is False
    finally:
        keep_data_loader_order(True)
    with pytest.raises(AssertionError):
        keep_data_loader_order(1)


def _batches():
    for i in range(100):
        yield [np.full((2, 1), i, dtype="float32")]


def test_iterable_loader_reset_starts_over_and_reports_iterable():
    prog = fluid.Program()
    with fluid.program_guard(prog, fluid.Program()):
        x = fluid.data("x", [-1, 1])
        loader = fluid.io.DataLoader.from_generator(feed_list=[x], capacity=4, iterable=True)
        reader = fluid.io.PyReader(feed_list=[x], capacity=4, iterable=False)
    assert loader.iterable and not reader.iterable and reader._loader is reader
    loader.set_batch_generator(_batches, places=fluid.CPUPlace())
    for _ in range(2):
        seen = []
        for data in loader():
            t = data[0]["x"]
            assert t._place()._equals(fluid.CPUPlace())
            seen.append(float(np.array(t)[0, 0]))
            if len(seen) == 3:
                break
        loader._reset()
        assert seen == [0.0, 1.0, 2.0]


def _failing():
    yield np.zeros(1)
    raise ValueError("bad sample")


def test_multiprocess_reader_failure_is_enforce_not_met():
    r = fluid.io.multiprocess_reader([_failing], use_pipe=True)
    with pytest.raises(core.EnforceNotMet, match="bad sample"):
        list(r())
