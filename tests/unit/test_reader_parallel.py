"""fluid.io.xmap_readers, multiprocess_reader, default_collate_fn, ComposeNotAligned."""

import numpy as np
import pytest

import paddle_compat as fluid


def _r(n, start=0):
    return lambda: iter(range(start, start + n))


def test_xmap_readers_maps_in_threads_keeping_order_when_asked():
    ordered = fluid.io.xmap_readers(lambda x: x * 10, _r(50), process_num=4, buffer_size=8, order=True)
    assert list(ordered()) == [x * 10 for x in range(50)]
    anyorder = fluid.io.xmap_readers(lambda x: x + 1, _r(30), process_num=3, buffer_size=2)
    assert sorted(anyorder()) == list(range(1, 31))


def test_xmap_readers_reraises_the_mappers_error():
    def bad(x):
        if x == 5:
            raise KeyError("sample five")
        return x
    with pytest.raises(KeyError, match="sample five"):
        list(fluid.io.xmap_readers(bad, _r(20), 2, 4)())


def test_multiprocess_reader_yields_every_sample_once():
    r = fluid.io.multiprocess_reader([_r(20), _r(15, 100)], queue_size=4)
    assert sorted(r()) == list(range(20)) + list(range(100, 115))


def test_multiprocess_reader_names_a_failing_reader():
    def broken():
        yield 1
        raise IOError("disk gone")
    with pytest.raises(RuntimeError, match="disk gone"):
        list(fluid.io.multiprocess_reader([broken])())


def test_default_collate_fn_stacks_fields():
    batch = [(np.array([1.0, 2.0]), np.array([0])), (np.array([3.0, 4.0]), np.array([1]))]
    x, y = fluid.io.default_collate_fn(batch)
    assert x.shape == (2, 2) and y.tolist() == [[0], [1]]
    assert fluid.io.default_collate_fn([np.ones(3), np.zeros(3)])[0].shape == (2, 3)
    with pytest.raises(ValueError, match="sample 1 has 1 fields"):
        fluid.io.default_collate_fn([(1, 2), (3,)])


def test_compose_not_aligned_is_its_own_error():
    with pytest.raises(fluid.io.ComposeNotAligned):
        list(fluid.io.compose(_r(3), _r(2))())
    assert issubclass(fluid.io.ComposeNotAligned, ValueError)
