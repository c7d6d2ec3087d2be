"""Parsing Paddle's MultiSlot text into column Blocks (used by fluid.dataset through dataset_feed).

A MultiSlot line holds, for every slot of the dataset's use_var list in order, a count n > 0 followed by
n values: "3 11 12 13 1 0.5" is a 3-id slot then a 1-value slot.

Fast path (parse_chunk): numpy over the bytes of a whole chunk of lines. Token bounds come from one pass
over the bytes; the slot structure is walked for all lines at once (slot k starts where slot k-1's values
end); numbers are read digit column by digit column for all tokens of one length together. These are bulk
numpy operations, which release the GIL, so a reader thread parses while the training step runs.
Tokens outside the plain forms ("123", "-0.25") go one by one through Python's int/float; a structural
anomaly, or text that is not plain ASCII, re-reads the chunk line by line (parse_lines) to name the file,
line and slot at fault, or to keep str.split/splitlines semantics exactly.

int64 slots take ids up to 2**64 - 1: as in Paddle, whose MultiSlot feed reads them with strtoull into
uint64 feasigns and hands the bits over as int64, an id of 2**63 or more wraps to a negative int64.
"""

from itertools import chain

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

__all__ = ["Block", "parse_chunk", "parse_lines", "strip_ins_fields"]

_U64 = 2 ** 64
_I64_MAX = 2 ** 63 - 1


class Block:
    """One chunk of samples, by column: per slot the values (final dtype) and per-line offsets into them;
    ins_ids, when the dataset parses them, the lines' ins ids (an object array of str)."""
    __slots__ = ("origin", "linenos", "vals", "offs", "n", "ins_ids")

    def __init__(self, origin, linenos, vals, offs, ins_ids=None):
        self.origin, self.linenos, self.vals, self.offs = origin, linenos, vals, offs
        self.n = len(linenos)
        self.ins_ids = ins_ids


def empty_block(slots, origin):
    return Block(origin, np.zeros(0, np.int64), [np.zeros(0, s.dtype) for s in slots],
                 [np.zeros(1, np.int64) for _ in slots])


# byte classes: 0 a digit, 1 another token byte, 2 a separator (space, tab), 3 newline, 4 a CR (fine before
# a newline), 5 anything that needs Python's str semantics (other ASCII controls, which str.split and
# splitlines treat specially; non-ASCII)
_CLASS = np.ones(256, np.uint8)
_CLASS[48:58] = 0
_CLASS[[9, 32]] = 2
_CLASS[10] = 3
_CLASS[13] = 4
_CLASS[[c for c in range(32) if c not in (9, 10, 13)] + list(range(127, 256))] = 5
_LEAD = b" " * 24           # lets the words of the first token's digits be gathered


class _Doubt(Exception):
    pass


def parse_chunk(data, slots, origin, line0=0):
    """(Block, number of lines) from `data` (bytes of whole lines; the first one is line line0 + 1 of
    `origin`)."""
    try:
        return _fast(data, slots, origin, line0), data.count(b"\n")
    except _Doubt:
        text = data.decode("utf-8", "replace")
        lines = text.splitlines()
        return _block_from_records(parse_lines(lines, slots, origin, line0), slots, origin), len(lines)


def _fast(data, slots, origin, line0):
    b = np.frombuffer(_LEAD + data + b"\n", np.uint8)
    cls = _CLASS[b]
    if cls.max() >= 4:
        cr = np.flatnonzero(cls >= 4)
        if (cls[cr] == 5).any() or (b[cr + 1] != 10).any():   # a lone CR breaks a line for splitlines
            raise _Doubt()
        cls[cr] = 2
    tok = cls < 2
    # token bounds alternate start, end, ... (b[0] is padding, the last byte a newline)
    bounds = np.flatnonzero(tok[1:] != tok[:-1]) + 1
    starts, ends = bounds[0::2], bounds[1::2]
    lengths = ends - starts
    toks = _Tokens(b, cls, starts, ends)
    nl = np.flatnonzero(cls == 3)
    upto = np.searchsorted(starts, nl)          # tokens before each newline
    per_line = np.diff(upto, prepend=0)
    keep = np.flatnonzero(per_line)             # empty lines are skipped
    n = len(keep)
    if n == 0:
        return empty_block(slots, origin)
    end = upto[keep]
    pos = end - per_line[keep]                  # where each line's next slot starts
    offs, idx = [], []
    for _ in slots:
        if (pos >= end).any() or not toks.plain[pos].all() or (lengths[pos] > 18).any():
            raise _Doubt()
        counts = _digits(toks.words, ends[pos], lengths[pos]).view(np.int64)
        if (counts <= 0).any() or (pos + 1 + counts > end).any():
            raise _Doubt()
        o = np.zeros(n + 1, np.int64)
        np.cumsum(counts, out=o[1:])
        idx.append(np.repeat(pos + 1 - o[:-1], counts) + np.arange(o[-1]))
        offs.append(o)
        pos = pos + 1 + counts
    if (pos != end).any():
        raise _Doubt()
    linenos = keep + (line0 + 1)
    vals = [None] * len(slots)
    for kind, parse in (("i", toks.ints), ("f", toks.floats)):
        ks = [k for k, s in enumerate(slots) if s.dtype.kind == kind]
        if not ks:
            continue
        # all slots of a kind in one pass: fewer, larger numpy operations
        ti = np.concatenate([idx[k] for k in ks])
        v, bad = parse(ti)
        if len(bad):
            _fallback(v, bad, b, starts[ti], ends[ti], kind, ks, idx, offs, slots, origin, linenos)
        at = 0
        for k in ks:
            m = len(idx[k])
            vals[k] = v[at:at + m].astype(slots[k].dtype, copy=False)
            at += m
    return Block(origin, linenos, vals, offs)


class _Tokens:
    """Token facts from the few bytes in tokens that are not digits (dots, minus signs, anything else)."""

    def __init__(self, b, cls, starts, ends):
        self.b, self.starts, self.ends = b, starts, ends
        # the 8 bytes ending before each position, as a little-endian uint64 (b starts with padding)
        self.words = sliding_window_view(b, 8).view("<u8")[:, 0]
        nd = np.flatnonzero(cls == 1)
        self.nd = nd
        self.nd_tok = np.searchsorted(starts, nd, side="right") - 1
        self.plain = np.bincount(self.nd_tok, minlength=len(starts)) == 0    # all digits

    def ints(self, ti):
        """int64 ids (uint64 bits, as Paddle) and the positions of tokens that need Python's int()."""
        lengths = self.ends[ti] - self.starts[ti]
        ok = self.plain[ti] & (lengths <= 19)
        v = _digits(self.words, self.ends[ti], np.where(ok, lengths, 0))
        return v.view(np.int64), np.flatnonzero(~ok)

    def floats(self, ti):
        """float64 values of plain tokens ([-]digits[.digits], at most 15 digits: the mantissa and the
        power of ten are exact, so one division rounds correctly, as float() does), and the positions
        of the others, which need Python's float()."""
        ntok = len(self.starts)
        ch = self.b[self.nd]
        dot = ch == 46
        neg = (ch == 45) & (self.nd == self.starts[self.nd_tok])
        odd = np.bincount(self.nd_tok[~(dot | neg)], minlength=ntok) > 0
        odd |= np.bincount(self.nd_tok[dot], minlength=ntok) > 1
        dot_at = self.ends.copy()
        dot_at[self.nd_tok[dot]] = self.nd[dot]
        is_neg = np.zeros(ntok, bool)
        is_neg[self.nd_tok[neg]] = True
        s, e, d, minus = self.starts[ti], self.ends[ti], dot_at[ti], is_neg[ti]
        ilen = d - s - minus
        fstart = np.minimum(d + 1, e)
        flen = e - fstart
        good = ~odd[ti] & (ilen + flen >= 1) & (ilen + flen <= 15)
        ilen[~good] = 0
        flen[~good] = 0
        mant = _digits(self.words, d, ilen) * _POW10U[flen] + _digits(self.words, e, flen)
        v = mant / _POW10[flen]
        np.negative(v, out=v, where=minus)
        return v, np.flatnonzero(~good)


_POW10 = 10.0 ** np.arange(20)
_POW10U = 10 ** np.arange(20, dtype=np.uint64)
# _KEEP[k]: the k high bytes of a little-endian word, where a right-aligned token's last k digits lie
_KEEP = np.array([0] + [((1 << (8 * k)) - 1) << (8 * (8 - k)) for k in range(1, 9)], np.uint64) \
    & np.uint64(0x0F0F0F0F0F0F0F0F)


def _digits(words, e, lengths):
    """uint64 value of the `lengths` (0 to 19) digit bytes that end before each of `e`, `words` being the
    8-byte windows of the chunk: eight digits at a time, combined with three multiply-shift steps on
    their little-endian 64-bit word."""
    out = None
    for i in range(-(-int(lengths.max(initial=0)) // 8)):       # word i from the right
        k = lengths if i == 0 else np.clip(lengths - 8 * i, 0, 8)
        w = words[e - 8 * (i + 1)] & _KEEP[np.minimum(k, 8) if i == 0 else k]
        w *= _U2561
        w >>= _U8
        w &= _M16
        w *= _U6553601
        w >>= _U16
        w &= _M32
        w *= _U42949672960001
        w >>= _U32
        if i:
            w *= _POW10U[8 * i]
            out += w
        else:
            out = w
    return out if out is not None else np.zeros(len(e), np.uint64)


_U8, _U16, _U32 = np.uint64(8), np.uint64(16), np.uint64(32)
_U2561, _U6553601, _U42949672960001 = np.uint64(2561), np.uint64(6553601), np.uint64(42949672960001)
_M16, _M32 = np.uint64(0x00FF00FF00FF00FF), np.uint64(0x0000FFFF0000FFFF)


def _fallback(v, bad, b, s, e, kind, ks, idx, offs, slots, origin, linenos):
    """Tokens outside the plain forms, one by one with Python's int/float; a bad one is named."""
    conv = _int64 if kind == "i" else float
    bounds = np.cumsum([0] + [len(idx[k]) for k in ks])
    for i in bad.tolist():
        tok = b[int(s[i]):int(e[i])].tobytes()
        try:
            v[i] = conv(tok)
        except (ValueError, OverflowError):
            j = int(np.searchsorted(bounds, i, side="right")) - 1
            k = ks[j]
            line = int(np.searchsorted(offs[k], i - bounds[j], side="right")) - 1
            raise ValueError("%s:%d: slot '%s' (%s) has a bad value %r"
                             % (origin, linenos[line], slots[k].name, slots[k].dtype.name,
                                tok.decode("utf-8", "replace"))) from None


def _int64(tok):
    """An id as Paddle's MultiSlot feed stores it: parsed as an integer, 2**63..2**64-1 wrap to int64."""
    v = int(tok)
    if _I64_MAX < v < _U64:
        v -= _U64
    if not -_I64_MAX - 1 <= v <= _I64_MAX:
        raise OverflowError(tok)
    return v


def strip_ins_fields(data, nfields, origin, line0=0):
    """(data without the first `nfields` "1 <token>" groups of each line, the lines' first such token (the
    ins id) as an object array). Paddle's in-memory feed reads the ins id, then the content, before the
    slots (set_parse_ins_id / set_parse_content), each as a count that must be 1 and one token. Empty
    lines stay (parse_chunk skips them) and get no id."""
    text = data.decode("utf-8", "replace")
    lines = text.split("\n")
    ids = []
    for i, line in enumerate(lines):
        toks = line.split()
        if not toks:
            continue
        if len(toks) < 2 * nfields or any(toks[2 * k] != "1" for k in range(nfields)):
            what = ("ins id", "content")[min(k for k in range(nfields)
                                             if len(toks) < 2 * k + 2 or toks[2 * k] != "1")]
            raise ValueError("%s:%d: the line must start with '1 <%s>' (set_parse_ins_id / set_parse_content "
                             "read it before the slots), got %r" % (origin, line0 + i + 1, what.replace(" ", "_"),
                                                                  " ".join(toks[:2 * nfields])))
        if len(toks) == 2 * nfields:
            raise ValueError("%s:%d: the line has no slots after its ins id / content" % (origin, line0 + i + 1))
        ids.append(toks[1])
        lines[i] = " ".join(toks[2 * nfields:])
    return "\n".join(lines).encode("utf-8"), np.array(ids, dtype=object)


# slow path: line by line, exact, naming the first problem -------------------------------------------------

def parse_lines(lines, slots, origin, line0=0):
    """Records [(origin, lineno), [tokens of slot 0], ...] from MultiSlot lines (a text or its
    splitlines()); empty lines are skipped."""
    nslots = range(len(slots))
    out = []
    append = out.append
    for lineno, line in enumerate(lines.splitlines() if isinstance(lines, str) else lines, line0 + 1):
        toks = line.split()
        if not toks:
            continue
        pos, rec, ok = 0, [(origin, lineno)], True
        try:
            for _ in nslots:
                n = int(toks[pos])
                end = pos + 1 + n
                rec.append(toks[pos + 1:end])
                ok = ok and n > 0
                pos = end
        except (ValueError, IndexError):
            ok = False
        if not ok or pos != len(toks):
            _diagnose(toks, slots, origin, lineno)
        append(rec)
    return out


def _diagnose(toks, slots, origin, lineno):
    nslots, pos, ntok = len(slots), 0, len(toks)
    for s in range(nslots):
        if pos >= ntok:
            raise ValueError("%s:%d: slot '%s' is missing (the line has %d slots, use_var has %d)"
                             % (origin, lineno, slots[s].name, s, nslots))
        try:
            n = int(toks[pos])
        except ValueError:
            raise ValueError("%s:%d: slot '%s': expected a value count, got %r"
                             % (origin, lineno, slots[s].name, toks[pos])) from None
        if n <= 0:
            raise ValueError("%s:%d: slot '%s' has %d values; every slot needs at least one (pad it in "
                             "the data generator)" % (origin, lineno, slots[s].name, n))
        end = pos + 1 + n
        if end > ntok:
            raise ValueError("%s:%d: slot '%s' announces %d values but the line ends after %d"
                             % (origin, lineno, slots[s].name, n, ntok - pos - 1))
        pos = end
    raise ValueError("%s:%d: %d tokens left after the last slot '%s' (use_var has %d slots: %s)"
                     % (origin, lineno, ntok - pos, slots[-1].name, nslots, [s.name for s in slots]))


def _values(records, k, spec):
    flat = list(chain.from_iterable(rec[k + 1] for rec in records))
    try:
        if spec.dtype.kind == "f":   # through float64, as the fast path
            return np.array(list(map(float, flat)), np.float64).astype(spec.dtype)
        return np.array(list(map(_int64, flat)), dtype=np.int64)
    except (ValueError, OverflowError):
        for rec in records:   # find the culprit to name it
            for t in rec[k + 1]:
                try:
                    (float if spec.dtype.kind == "f" else _int64)(t)
                except (ValueError, OverflowError):
                    (origin, lineno) = rec[0]
                    raise ValueError("%s:%d: slot '%s' (%s) has a bad value %r"
                                     % (origin, lineno, spec.name, spec.dtype.name, t)) from None
        raise


def _block_from_records(records, slots, origin):
    if not records:
        return empty_block(slots, origin)
    vals, offs = [], []
    for k, spec in enumerate(slots):
        vals.append(_values(records, k, spec))
        o = np.zeros(len(records) + 1, np.int64)
        np.cumsum([len(rec[k + 1]) for rec in records], out=o[1:])
        offs.append(o)
    return Block(origin, np.array([rec[0][1] for rec in records], np.int64), vals, offs)
