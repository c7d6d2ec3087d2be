"""PSDispatcher: which pserver endpoint holds each variable block."""

import zlib

__all__ = ["PSDispatcher", "RoundRobin", "HashName"]


class PSDispatcher:
    def __init__(self, pserver_endpoints):
        if not pserver_endpoints:
            raise ValueError("%s needs a non-empty list of pserver endpoints" % type(self).__name__)
        self._eps = list(pserver_endpoints)
        self._step = 0

    @property
    def eps(self):
        return self._eps

    def reset(self):
        self._step = 0

    def dispatch(self, varlist):
        raise NotImplementedError


class RoundRobin(PSDispatcher):
    """Endpoints in turn, in the order variables are dispatched."""

    def dispatch(self, varlist):
        out = []
        for _ in varlist:
            out.append(self._eps[self._step])
            self._step = (self._step + 1) % len(self._eps)
        return out


class HashName(PSDispatcher):
    """Endpoint by a hash of the variable's name.

    Paddle used Python's built-in hash(), which is salted per process (PYTHONHASHSEED), so trainers and
    pservers could disagree on where a block lives. We use CRC32 of the UTF-8 name: every process agrees."""

    @staticmethod
    def _hash_block(block_str, total):
        return zlib.crc32(block_str.encode("utf-8")) % total

    def dispatch(self, varlist):
        return [self._eps[self._hash_block(v.name if hasattr(v, "name") else str(v), len(self._eps))]
                for v in varlist]
