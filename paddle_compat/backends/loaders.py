"""The DataLoaders / PyReaders a program's `read` op takes its batches from, by the op's reader_id attribute
(fluid.reader registers each loader here; the read kernel looks it up at run time)."""

import weakref

__all__ = ["register_loader", "loader_for"]

_LOADERS = weakref.WeakValueDictionary()


def register_loader(reader_id, loader):
    _LOADERS[reader_id] = loader


def loader_for(reader_id):
    loader = _LOADERS.get(reader_id)
    if loader is None:
        raise RuntimeError("the DataLoader/PyReader behind this program's read op (%s) no longer exists; keep "
                           "a reference to it while the program runs" % reader_id)
    return loader
