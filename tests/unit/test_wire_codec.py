"""The wire codec: every carried type round-trips; anything else is refused when encoding; the decoder turns
random bytes, truncations, bit flips, huge declared lengths and every gadget pickle of issue 23 into a
DecodeError (and nothing else: no other exception, no code run)."""

import os
import random
import struct

import numpy as np
import pytest
import torch

import wire_gadgets
from paddle_compat.backends.wire import codec
from paddle_compat.backends.wire.codec import DecodeError, EncodeError, WireError, decode, encode


def _rt(obj):
    meta, bufs = encode(obj)
    # as the frame reader hands them: uint8 tensors
    tbufs = [torch.frombuffer(bytearray(b), dtype=torch.uint8) if b.nbytes else torch.empty(0, dtype=torch.uint8)
             for b in bufs]
    return decode(meta, tbufs), decode(meta, [bytes(b) for b in bufs])


def _same(a, b):
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return type(b) is dict and list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, float) and a != a:
        return b != b
    return type(a) is type(b) and a == b


SCALARS = [None, True, False, 0, -1, 2 ** 63 - 1, -2 ** 63, 1.5, float("inf"), float("nan"), -0.0, "", "héllo",
           b"", b"\x00\xff", b"z" * 5000, WireError("PsError", "pserver x: lost trainer 1")]


@pytest.mark.parametrize("value", SCALARS, ids=[repr(v)[:20] for v in SCALARS])
def test_scalars_round_trip(value):
    for got in _rt(value):
        assert _same(value, got)


def test_containers_tensors_and_arrays_round_trip():
    tensors = [torch.randn(3, 4), torch.arange(10, dtype=torch.int64), torch.zeros(0, 8), torch.tensor(3.5),
               torch.randn(2, 3).to(torch.float16), torch.randn(4).to(torch.bfloat16), torch.tensor([True, False]),
               torch.randint(0, 255, (5,), dtype=torch.uint8), torch.randn(2, dtype=torch.complex64),
               torch.randn(6, 4).t(), torch.randn(10)[2:7], torch.randn(3, requires_grad=True)]
    arrays = [np.arange(12, dtype=np.float32).reshape(3, 4), np.array(7, dtype=np.int32), np.zeros((0, 3)),
              np.array([1, 2], dtype=">i4"), np.arange(6).reshape(2, 3).T]
    obj = ("exchange", (1, ["a@GRAD", "b"], tensors, {"x": arrays, 3: (None, 1.0), ("k", 1): [b"r"]}))
    for got in _rt(obj):
        assert got[0] == "exchange" and got[1][0] == 1
        for t, g in zip(tensors, got[1][2]):
            assert _same(t.detach().contiguous(), g), (t, g)
        for a, g in zip(arrays, got[1][3]["x"]):
            assert np.array_equal(a, g) and g.dtype == a.dtype.newbyteorder("<") and g.shape == a.shape
        assert got[1][3][3] == (None, 1.0) and got[1][3][("k", 1)] == [b"r"]


def test_a_tensor_travels_as_its_own_bytes_not_its_storage():
    big = torch.randn(1000)
    meta, bufs = encode(big[10:14])
    assert [b.nbytes for b in bufs] == [16]


def test_subclasses_travel_as_plain_values():
    from collections import OrderedDict
    meta, bufs = encode((OrderedDict(a=1), torch.Size([2, 3]), np.float32(2.5), np.int64(7), np.bool_(True),
                         torch.nn.Parameter(torch.ones(2))))
    got = decode(meta, bufs)
    assert got[0] == {"a": 1} and type(got[0]) is dict and got[1] == (2, 3) and got[2] == 2.5 and got[3] == 7
    assert got[4] is True and type(got[5]) is torch.Tensor


@pytest.mark.parametrize("bad", [object(), {1, 2}, 2 ** 63, np.array([object()], dtype=object),
                                 torch.randn(3, 3).to_sparse(), lambda: 0, Exception("x"), 1j],
                         ids=["object", "set", "bigint", "object-array", "sparse", "lambda", "exception", "complex"])
def test_values_outside_the_closed_set_are_refused_when_encoding(bad):
    with pytest.raises(EncodeError):
        encode(("x", (bad,)))


def test_unknown_error_kinds_travel_as_runtime_error_naming_the_kind():
    e = WireError("ZeroDivisionError", "division by zero")
    assert e.kind == "RuntimeError" and e.message == "ZeroDivisionError: division by zero"


def test_structural_errors_are_named():
    meta, bufs = encode([torch.ones(2)])
    with pytest.raises(DecodeError, match="buffer 0"):
        decode(meta, [])
    with pytest.raises(DecodeError, match="used 1"):
        decode(meta, [bytes(bufs[0]), b"extra"])
    with pytest.raises(DecodeError, match="needs 8 bytes"):
        decode(meta, [b"\0" * 7])
    with pytest.raises(DecodeError, match="trailing"):
        decode(encode(1)[0] + b"N")
    with pytest.raises(DecodeError, match="unknown tag"):
        decode(b"Z")
    with pytest.raises(DecodeError, match="deeper"):
        decode(b"l\x01\x00\x00\x00" * (codec.MAX_DEPTH + 2) + b"N")
    with pytest.raises(DecodeError, match="declares 4294967295 elements"):
        decode(b"l\xff\xff\xff\xff" + b"N" * 10)
    with pytest.raises(DecodeError, match="needs 4294967295 bytes"):
        decode(b"s\xff\xff\xff\xff")
    with pytest.raises(DecodeError, match="not hashable"):
        decode(b"m\x01\x00\x00\x00l\x00\x00\x00\x00N")
    # a tensor declaring 2^62 elements: refused by arithmetic, nothing allocated
    huge = b"X\x00\x01" + struct.pack("<q", 1 << 62)
    with pytest.raises(DecodeError, match="needs"):
        decode(huge, [b""])
    with pytest.raises(DecodeError, match="negative"):
        decode(b"X\x00\x01" + struct.pack("<q", -4), [b""])
    with pytest.raises(DecodeError, match="dtype code"):
        decode(b"X\xee\x00", [b""])


def _only_decode_errors(meta, bufs):
    try:
        decode(meta, bufs)
    except DecodeError:
        pass


def test_fuzz_random_truncated_flipped_and_huge_inputs_give_only_decode_errors():
    rng = random.Random(1234)
    samples = [encode(("exchange", (rng.randint(0, 9), ["a", "b" * 50], [torch.randn(3, 2), torch.arange(4)],
                                    {"w": np.ones(3), 1: None}, b"q" * 2000, [1.5, -2, True])))
               for _ in range(4)]
    tags = b"NTFidsbBltmXAE"
    n = 0
    for _ in range(3000):           # random bytes, biased towards the codec's own tags
        meta = bytes(rng.choice(tags) if rng.random() < 0.4 else rng.randrange(256)
                     for _ in range(rng.randrange(1, 64)))
        _only_decode_errors(meta, [os.urandom(rng.randrange(0, 40)) for _ in range(rng.randrange(0, 3))])
        n += 1
    for meta, bufs in samples:
        raw = [bytes(b) for b in bufs]
        for cut in range(len(meta)):                       # every truncation
            _only_decode_errors(meta[:cut], raw)
            n += 1
        for _ in range(1500):                              # bit flips and byte substitutions
            m = bytearray(meta)
            for _ in range(rng.randrange(1, 4)):
                i = rng.randrange(len(m))
                m[i] = m[i] ^ (1 << rng.randrange(8)) if rng.random() < 0.5 else rng.randrange(256)
            _only_decode_errors(bytes(m), raw)
            n += 1
        for _ in range(200):                               # huge declared lengths and counts at random offsets
            m = bytearray(meta)
            i = rng.randrange(max(1, len(m) - 8))
            m[i:i + 8] = struct.pack("<Q", rng.choice([2 ** 32 - 1, 2 ** 62, 2 ** 63 - 1, 2 ** 64 - 1]))
            _only_decode_errors(bytes(m), raw)
            _only_decode_errors(bytes(m), raw[:-1])
            n += 2
    assert n > 10000


def test_gadget_pickles_are_refused_and_run_nothing(tmp_path):
    marker = str(tmp_path / "ran")
    ran = wire_gadgets.check_gadgets_really_run(marker)
    assert all(ran.values()), ran            # each gadget does run under pickle.loads ...
    for name, data in wire_gadgets.gadgets(marker).items():
        with pytest.raises(DecodeError):     # ... and is only a DecodeError to the wire's decoder
            decode(data)
        with pytest.raises(DecodeError):
            decode(data[:40], [data])
        # inside a tensor's bytes, a pickle is bytes: it decodes to a uint8 tensor holding them, unopened
        meta, bufs = encode(("prefetch", (0, ["t"], [torch.frombuffer(bytearray(data), dtype=torch.uint8)])))
        got = decode(meta, [bytes(b) for b in bufs])
        assert bytes(got[1][2][0].numpy()) == data
        assert not os.path.exists(marker), name
