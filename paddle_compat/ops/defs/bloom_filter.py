"""The bloom filters pyramid_hash reads from its WhiteList/BlackList parameters (Paddle's math/bloomfilter.h
layout): the float32 parameter's bytes are a packed struct of uint64 magic (17070416), m (bits), k (hashes),
count, then the bit vector (bit n is bit 7 - n % 8 of byte n // 8). A key is in the filter when, for every
seed i < k, both 64-bit halves of MurmurHash3_x64_128(key, seed=i), mod m, are set. NumPy uint64 arithmetic
(wrapping, as C's), vectorised over keys of one length."""

import numpy as np

MAGIC = 17070416
_HEADER = 32
_C1, _C2 = np.uint64(0x87C37B91114253D5), np.uint64(0x4CF5AD432745937F)
_M64 = 0xFFFFFFFFFFFFFFFF


def _u(v):
    return np.uint64(v)


def _rotl(x, r):
    return (x << _u(r)) | (x >> _u(64 - r))


def _fmix(k):
    k = k ^ (k >> _u(33))
    k = k * _u(0xFF51AFD7ED558CCD)
    k = k ^ (k >> _u(33))
    k = k * _u(0xC4CEB9FE1A85EC53)
    return k ^ (k >> _u(33))


def murmur3_x64_128(keys, seed):
    """keys: [R, L] uint8 (each row one key of L bytes) -> (h1, h2) uint64 [R] each."""
    keys = np.ascontiguousarray(keys, dtype=np.uint8)
    r, length = keys.shape
    nblocks = length // 16
    padded = np.zeros((r, (nblocks + 1) * 16), np.uint8)
    padded[:, :length] = keys
    words = padded.view("<u8")                                  # [R, 2 (nblocks + 1)]
    h1 = np.full(r, seed, np.uint64)
    h2 = np.full(r, seed, np.uint64)
    with np.errstate(over="ignore"):
        for b in range(nblocks):
            k1 = _rotl(words[:, 2 * b] * _C1, 31) * _C2
            h1 = h1 ^ k1
            h1 = _rotl(h1, 27) + h2
            h1 = h1 * _u(5) + _u(0x52DCE729)
            k2 = _rotl(words[:, 2 * b + 1] * _C2, 33) * _C1
            h2 = h2 ^ k2
            h2 = _rotl(h2, 31) + h1
            h2 = h2 * _u(5) + _u(0x38495AB5)
        tail = length & 15
        if tail > 8:
            k2 = _rotl(words[:, 2 * nblocks + 1] * _C2, 33) * _C1
            h2 = h2 ^ k2
        if tail:
            k1 = _rotl(words[:, 2 * nblocks] * _C1, 31) * _C2
            h1 = h1 ^ k1
        h1 = h1 ^ _u(length)
        h2 = h2 ^ _u(length)
        h1 = h1 + h2
        h2 = h2 + h1
        h1, h2 = _fmix(h1), _fmix(h2)
        h1 = h1 + h2
        h2 = h2 + h1
    return h1, h2


class BloomFilter:
    """A filter read from a parameter's bytes (raises naming the parameter when they are not a filter)."""

    def __init__(self, raw, name):
        raw = np.ascontiguousarray(raw).view(np.uint8).reshape(-1)
        if raw.size < _HEADER:
            raise ValueError("pyramid_hash: %s (%d bytes) is too small to hold a bloom filter" % (name, raw.size))
        magic, self.m, self.k, _ = (int(v) for v in raw[:_HEADER].view("<u8"))
        if magic != MAGIC:
            raise ValueError("pyramid_hash: %s holds no bloom filter (magic number %d, expected %d): load the "
                             "filter into the parameter before running" % (name, magic, MAGIC))
        if self.m <= 0 or _HEADER + (self.m + 7) // 8 > raw.size:
            raise ValueError("pyramid_hash: %s's bloom filter says m=%d bits, more than its %d bytes hold"
                             % (name, self.m, raw.size - _HEADER))
        self.bits = raw[_HEADER:]

    def _has(self, pos):
        byte = (pos >> _u(3)).astype(np.int64)
        return (self.bits[byte] & (np.uint8(0x80) >> (pos & _u(7)).astype(np.uint8))) != 0

    def contains(self, keys):
        """keys [R, L] uint8 -> bool [R]."""
        found = np.ones(keys.shape[0], bool)
        m = _u(self.m)
        for i in range(self.k):
            h1, h2 = murmur3_x64_128(keys, i)
            found &= self._has(h1 % m) & self._has(h2 % m)
        return found


def build(keys_list, m, k, size_floats=None):
    """A filter holding the given byte strings, as the float32 array a WhiteList/BlackList parameter holds
    (for tests and for making filters)."""
    nbytes = _HEADER + (m + 7) // 8
    size_floats = size_floats or (nbytes + 3) // 4
    raw = np.zeros(size_floats * 4, np.uint8)
    raw[:_HEADER].view("<u8")[:] = [MAGIC, m, k, len(keys_list)]
    bits = raw[_HEADER:]
    for key in keys_list:
        arr = np.frombuffer(key, np.uint8).reshape(1, -1)
        for i in range(k):
            for h in murmur3_x64_128(arr, i):
                pos = int(h[0] % _u(m))
                bits[pos >> 3] |= 0x80 >> (pos & 7)
    return raw.view(np.float32).reshape(-1, 1)
