"""paddle.reader decorators beyond fluid.io's: xmap_readers, multiprocess_reader."""

import pytest

from paddle_compat import readers


def _count(n):
    def reader():
        yield from range(n)
    return reader


def test_xmap_readers_keeps_order_when_asked():
    r = readers.xmap_readers(lambda x: x * x, _count(50), 4, 8, order=True)
    assert list(r()) == [i * i for i in range(50)]


def test_xmap_readers_unordered_yields_every_sample():
    r = readers.xmap_readers(lambda x: x + 1, _count(50), 3, 4)
    assert sorted(r()) == list(range(1, 51))


def test_xmap_readers_raises_mapper_error():
    def bad(x):
        if x == 7:
            raise KeyError("sample 7")
        return x
    with pytest.raises(KeyError, match="sample 7"):
        list(readers.xmap_readers(bad, _count(20), 2, 4, order=True)())


def test_multiprocess_reader_merges_all_samples():
    r = readers.multiprocess_reader([_count(10), _count(5)], queue_size=3)
    assert sorted(r()) == sorted(list(range(10)) + list(range(5)))


def test_paddle_reader_names():
    for name in readers.__all__:
        assert callable(getattr(readers, name))
    assert issubclass(readers.ComposeNotAligned, ValueError)
