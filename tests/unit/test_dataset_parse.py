"""The vectorised MultiSlot parser (fluid/dataset/parse.py) against the line-by-line one and Python's own
int/float, on random lines of every token form: plain and signed numbers, long ids, wrapped uint64 ids,
odd spacing, CRLF, chunks read in pieces."""

import numpy as np
import pytest

import paddle_compat as fluid
from paddle_compat.fluid.dataset import parse as P
from paddle_compat.fluid.dataset.feed import SlotSpec, read_file


def _slots(kinds):
    out = []
    for i, (dtype, lod) in enumerate(kinds):
        shape = [None, 1] if lod else [None, 3]
        out.append(SlotSpec(fluid.data("v%d" % i, shape=shape, dtype=dtype, lod_level=1 if lod else 0)))
    return out


KINDS = [("int64", True), ("float32", True), ("int64", True), ("float32", False), ("int64", False)]


def _int_token(rs):
    r = rs.randint(10)
    if r < 5:
        return str(rs.randint(0, 10 ** rs.randint(1, 10)))
    if r == 5:
        return str(rs.randint(0, 2 ** 63 - 1, dtype=np.int64))         # up to 19 digits
    if r == 6:
        return str(2 ** 64 - 1 - rs.randint(0, 1000))                   # wraps, as Paddle's uint64 feasigns
    if r == 7:
        return "-" + str(rs.randint(0, 1000))
    if r == 8:
        return "000" + str(rs.randint(0, 1000))
    return "+" + str(rs.randint(0, 1000))


def _float_token(rs):
    r = rs.randint(10)
    if r < 4:
        return "%.*f" % (rs.randint(0, 8), rs.uniform(-1000, 1000))
    if r == 4:
        return str(rs.randint(0, 10 ** 6))
    if r == 5:
        return "%.17g" % rs.standard_normal()            # 17 digits: Python's float decides
    if r == 6:
        return "%.3e" % rs.uniform(-1, 1)
    if r == 7:
        return rs.choice([".5", "5.", "-.25", "-0", "-0.0", "123456789012345", "1234567890123456"])
    return "%.6f" % rs.uniform(0, 1)


def _lines(rs, n):
    out = []
    for _ in range(n):
        parts = []
        for dtype, lod in KINDS:
            m = rs.randint(1, 5) if lod else 3
            tok = _int_token if dtype == "int64" else _float_token
            parts.append("%d %s" % (m, " ".join(tok(rs) for _ in range(m))))
        sep = rs.choice([" ", "  ", "\t"])
        out.append(sep.join(parts) + rs.choice(["", " ", "\r"]))
        if rs.randint(10) == 0:
            out.append(rs.choice(["", "   "]))
    return "\n".join(out) + "\n"


def _same(a, b):
    assert a.linenos.tolist() == b.linenos.tolist()
    for k in range(len(a.vals)):
        assert a.offs[k].tolist() == b.offs[k].tolist()
        assert a.vals[k].dtype == b.vals[k].dtype
        np.testing.assert_array_equal(a.vals[k], b.vals[k])


@pytest.mark.parametrize("seed", range(4))
def test_fast_path_matches_line_by_line(seed):
    rs = np.random.RandomState(seed)
    slots = _slots(KINDS)
    text = _lines(rs, 300)
    fast = P._fast(text.encode(), slots, "f", 0)    # the fast path itself, no fallback to the slow one
    slow = P._block_from_records(P.parse_lines(text, slots, "f"), slots, "f")
    _same(fast, slow)
    # and against Python's own conversions, token by token
    lines = [l.split() for l in text.splitlines() if l.strip()]
    pos = [0] * len(lines)
    for k, (dtype, _) in enumerate(KINDS):
        want = []
        for i, t in enumerate(lines):
            m = int(t[pos[i]])
            vals = t[pos[i] + 1:pos[i] + 1 + m]
            pos[i] += 1 + m
            want += [P._int64(v) for v in vals] if dtype == "int64" else [np.float32(float(v)) for v in vals]
        assert fast.vals[k].tolist() == want


def test_chunks_keep_line_numbers_and_values(tmp_path, monkeypatch):
    from paddle_compat.fluid.dataset import feed as dataset_feed
    monkeypatch.setattr(dataset_feed, "_CHUNK", 257)     # many chunks, cut inside lines
    rs = np.random.RandomState(7)
    slots = _slots(KINDS)
    text = _lines(rs, 120)
    p = tmp_path / "d.txt"
    p.write_text(text)
    rows = read_file(str(p), "cat", slots, 60)
    whole = P._block_from_records(P.parse_lines(text, slots, str(p)), slots, str(p))
    assert len(rows.blocks) > 10
    assert np.concatenate([b.linenos for b in rows.blocks]).tolist() == whole.linenos.tolist()
    for k in range(len(slots)):
        np.testing.assert_array_equal(np.concatenate([b.vals[k] for b in rows.blocks]), whole.vals[k])
    # a bad value in a later chunk is named with its line in the whole file
    lines = text.splitlines()
    bad = len(lines) - 3
    while not lines[bad].strip():
        bad -= 1
    toks = lines[bad].split()
    toks[1] = "12x"
    lines[bad] = " ".join(toks)
    p.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=r"d.txt:%d: slot 'v0' \(int64\) has a bad value '12x'" % (bad + 1)):
        read_file(str(p), "cat", slots, 60)
    # through a pipe command too
    with pytest.raises(ValueError, match=r"d.txt:%d: slot 'v0'" % (bad + 1)):
        read_file(str(p), "cat | cat", slots, 60)


def test_odd_text_takes_the_exact_path():
    slots = _slots([("int64", True)])
    # a form feed is whitespace to str.split and a line break to splitlines; non-ASCII digits are ints to int()
    block, nlines = P.parse_chunk("1 5\x0c1 6\n1 \u0663\n".encode(), slots, "f")
    assert block.vals[0].tolist() == [5, 6, 3] and block.linenos.tolist() == [1, 2, 3] and nlines == 3
    with pytest.raises(ValueError, match=r"f:2: slot 'v0' \(int64\) has a bad value '%d'" % 2 ** 64):
        P.parse_chunk(b"1 5\n1 %d\n" % 2 ** 64, slots, "f")
    assert P.parse_chunk(b"1 %d\n1 %d\n" % (2 ** 63, -2 ** 63), slots, "f")[0].vals[0].tolist() == [-2 ** 63] * 2


def test_pipe_timeout_names_the_command(tmp_path):
    slots = _slots([("int64", True)])
    p = tmp_path / "d.txt"
    p.write_text("1 5\n")
    with pytest.raises(TimeoutError, match=r"sleep 5.*d.txt.*0.5 s"):
        read_file(str(p), "cat; sleep 5", slots, 0.5)
