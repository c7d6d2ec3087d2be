"""Reading Paddle's MultiSlot text format and batching it into feeds (used by fluid.dataset).

A MultiSlot line holds, for every slot of the dataset's use_var list in order, a count n > 0 followed by
n values: "3 11 12 13 1 0.5" is a 3-id slot then a 1-value slot. Lines are split into per-slot token
lists at read time (cheap, and structural errors surface with their file and line); values become
numbers one batch at a time with numpy (a per-record pass only runs to name a bad value).
"""

import os
import subprocess
import tempfile
import warnings
from itertools import chain

import numpy as np

from .dtypes import dtype_name

__all__ = ["SlotSpec", "Rows", "read_file", "make_batch", "parse_text"]


class SlotSpec:
    """What the reader needs to know of a use_var variable."""
    __slots__ = ("name", "dtype", "lod", "shape")

    def __init__(self, var):
        self.name = var.name
        dt = dtype_name(var.dtype)
        if dt not in ("float32", "int64"):
            raise ValueError("dataset: use_var '%s' has dtype %s; MultiSlot slots are float32 or int64"
                             % (var.name, dt))
        self.dtype = np.dtype(dt)
        self.lod = var.lod_level > 0
        if var.lod_level > 1:
            raise ValueError("dataset: use_var '%s' has lod_level %d; MultiSlot slots carry one level"
                             % (var.name, var.lod_level))
        self.shape = tuple(var.shape)


def parse_lines(text, slots, origin):
    """Records [(origin, lineno), [tokens of slot 0], ...] from MultiSlot text; empty lines are skipped."""
    nslots = range(len(slots))
    out = []
    append = out.append
    for lineno, line in enumerate(text.splitlines(), 1):
        toks = line.split()
        if not toks:
            continue
        # fast path: no per-slot checks; any anomaly sends the line to _diagnose for a precise message
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


def read_file(path, pipe_command, slots, timeout):
    """Run `pipe_command` with the file on stdin (Paddle runs `cat file | pipe_command`) and parse stdout."""
    if not os.path.isfile(path):
        raise FileNotFoundError("dataset: file '%s' in the filelist does not exist" % path)
    with open(path, "rb") as fin, tempfile.TemporaryFile() as err:
        if pipe_command in (None, "", "cat"):
            data = fin.read()   # the common case needs no process
        else:
            proc = subprocess.Popen(pipe_command, shell=True, stdin=fin, stdout=subprocess.PIPE, stderr=err)
            try:
                data, _ = proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
                raise TimeoutError("dataset: pipe command %r on '%s' did not finish within %s s"
                                   % (pipe_command, path, timeout)) from None
            if proc.returncode != 0:
                err.seek(0)
                msg = err.read().decode("utf-8", "replace").strip()
                raise RuntimeError("dataset: pipe command %r failed on '%s' (exit status %d); its stderr:\n%s"
                                   % (pipe_command, path, proc.returncode, msg[-4000:]))
    return Rows.of(parse_text(data.decode("utf-8", "replace"), slots, path))


def _values(records, k, spec):
    flat = list(chain.from_iterable(rec[k + 1] for rec in records))
    try:
        if spec.dtype.kind == "f":
            return np.array(flat, dtype=spec.dtype)
        return np.array(list(map(int, flat)), dtype=np.int64)   # exact for 64-bit feasigns
    except (ValueError, OverflowError):
        for rec in records:   # find the culprit to name it
            for t in rec[k + 1]:
                try:
                    v = (float if spec.dtype.kind == "f" else int)(t)
                    np.array([v], dtype=spec.dtype)
                except (ValueError, OverflowError):
                    (origin, lineno) = rec[0]
                    raise ValueError("%s:%d: slot '%s' (%s) has a bad value %r"
                                     % (origin, lineno, spec.name, spec.dtype.name, t)) from None
        raise


def _lod_tensor(vals, lens):
    # built directly: the offsets come from the line counts, so create_lod_tensor's checks cannot fail
    from .core import LoDTensor, lod_as_tensors
    t = LoDTensor()
    t.set(vals)
    offsets = np.zeros(len(lens) + 1, dtype=np.int64)
    np.cumsum(lens, out=offsets[1:])
    t._holder.lod = lod_as_tensors([offsets])
    return t


class Block:
    """One file's samples, by column: per slot the values (final dtype) and per-line offsets into them."""
    __slots__ = ("origin", "linenos", "vals", "offs", "n")

    def __init__(self, origin, linenos, vals, offs):
        self.origin, self.linenos, self.vals, self.offs = origin, linenos, vals, offs
        self.n = len(linenos)


def _block_from_records(records, slots, origin):
    vals, offs = [], []
    for k, spec in enumerate(slots):
        vals.append(_values(records, k, spec))
        o = np.zeros(len(records) + 1, np.int64)
        np.cumsum([len(rec[k + 1]) for rec in records], out=o[1:])
        offs.append(o)
    return Block(origin, np.array([rec[0][1] for rec in records], np.int64), vals, offs)


_EXACT = float(2 ** 53)   # integers below this survive a float64 parse exactly


def parse_text(text, slots, origin):
    """A Block from MultiSlot text. Fast path: numpy parses every token as float64 in one call and the
    slot structure is walked for all lines at once; any doubt (a bad token, a malformed line, an id of
    2**53 or more) re-reads the text line by line, exactly, to name the problem or keep every digit."""
    lines = [(i, l) for i, l in enumerate(text.splitlines(), 1) if l.strip()]
    try:
        return _fast_block(lines, slots, origin)
    except _Doubt:
        return _block_from_records(parse_lines(text, slots, origin), slots, origin)


class _Doubt(Exception):
    pass


def _fast_block(lines, slots, origin):
    n = len(lines)
    if n == 0:
        return Block(origin, np.zeros(0, np.int64), [np.zeros(0, s.dtype) for s in slots],
                     [np.zeros(1, np.int64) for _ in slots])
    body = "\n".join(l for _, l in lines)
    lens = np.fromiter(map(len, map(str.split, (l for _, l in lines))), np.int64, n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:   # a bad token: older numpy warns and stops short, newer numpy raises
            flat = np.fromstring(body, dtype=np.float64, sep=" ")
        except ValueError:
            raise _Doubt() from None
    if flat.size != lens.sum():
        raise _Doubt()
    end = np.cumsum(lens)
    pos = end - lens            # where each line's next slot starts
    vals, offs = [], []
    for spec in slots:
        if (pos >= end).any():
            raise _Doubt()
        counts_f = flat[pos]
        counts = counts_f.astype(np.int64)
        if (counts <= 0).any() or (counts != counts_f).any() or (pos + 1 + counts > end).any():
            raise _Doubt()
        o = np.zeros(n + 1, np.int64)
        np.cumsum(counts, out=o[1:])
        idx = np.repeat(pos + 1 - o[:-1], counts) + np.arange(o[-1])
        v = flat[idx]
        if spec.dtype.kind == "i":
            if (np.abs(v) >= _EXACT).any() or (np.floor(v) != v).any():
                raise _Doubt()
            v = v.astype(np.int64)
        else:
            v = v.astype(spec.dtype)
        vals.append(v)
        offs.append(o)
        pos = pos + 1 + counts
    if (pos != end).any():
        raise _Doubt()
    return Block(origin, np.array([i for i, _ in lines], np.int64), vals, offs)


class Rows:
    """An ordered selection of samples over Blocks: (block number, row) pairs. Slicing and shuffling
    move indices only; make_batch gathers the values."""
    __slots__ = ("blocks", "bid", "row")

    def __init__(self, blocks, bid, row):
        self.blocks, self.bid, self.row = blocks, bid, row

    @staticmethod
    def of(block):
        return Rows([block], np.zeros(block.n, np.int64), np.arange(block.n, dtype=np.int64))

    @staticmethod
    def concat(parts):
        parts = [p for p in parts if len(p)]
        if not parts:
            return Rows([], np.zeros(0, np.int64), np.zeros(0, np.int64))
        blocks, bids, rows = [], [], []
        for p in parts:
            bids.append(p.bid + len(blocks))
            blocks.extend(p.blocks)
            rows.append(p.row)
        return Rows(blocks, np.concatenate(bids), np.concatenate(rows))

    def __len__(self):
        return len(self.row)

    def __getitem__(self, sl):
        return Rows(self.blocks, self.bid[sl], self.row[sl])

    def shuffle(self, rng):
        perm = rng.permutation(len(self.row))
        self.bid, self.row = self.bid[perm], self.row[perm]

    def groups(self):
        """(block, rows) in order of first appearance; rows keep their order within a block (a shuffled
        batch therefore holds the same samples, grouped by file)."""
        if len(self.bid) and (self.bid == self.bid[0]).all():
            return [(self.blocks[int(self.bid[0])], self.row)]
        out = []
        _, first = np.unique(self.bid, return_index=True)
        for b in self.bid[np.sort(first)]:
            out.append((self.blocks[int(b)], self.row[self.bid == b]))
        return out


def _gather(block, k, rows):
    o = block.offs[k]
    starts, lens = o[rows], o[rows + 1] - o[rows]
    if len(rows) and rows[-1] - rows[0] == len(rows) - 1 and (np.diff(rows) == 1).all():
        return block.vals[k][starts[0]:starts[0] + lens.sum()], lens   # contiguous: a view
    c = np.zeros(len(rows) + 1, np.int64)
    np.cumsum(lens, out=c[1:])
    return block.vals[k][np.repeat(starts - c[:-1], lens) + np.arange(c[-1])], lens


def make_batch(rows, slots, place=None):
    """A feed dict for Rows: LoDTensors for lod slots, dense arrays shaped as use_var.
    Feeds stay on the host; the executor moves them to the run's device."""
    groups = rows.groups()
    nrows = len(rows)
    feed = {}
    for k, spec in enumerate(slots):
        parts = [_gather(b, k, r) for b, r in groups]
        vals = parts[0][0] if len(parts) == 1 else np.concatenate([p[0] for p in parts])
        lens = parts[0][1] if len(parts) == 1 else np.concatenate([p[1] for p in parts])
        if spec.lod:
            feed[spec.name] = _lod_tensor(vals.reshape(-1, 1) if len(spec.shape) <= 2 else
                                          vals.reshape((-1,) + spec.shape[1:]), lens)
            continue
        per = int(lens[0])
        if (lens != per).any():
            for (b, r), (_, ln) in zip(groups, parts):
                bad = np.nonzero(ln != per)[0]
                if len(bad):
                    raise ValueError("%s:%d: slot '%s' is dense (lod_level 0) but holds %d values where "
                                     "other lines hold %d; give it lod_level=1 or pad it"
                                     % (b.origin, b.linenos[r[bad[0]]], spec.name, ln[bad[0]], per))
        inner = list(spec.shape[1:])
        if inner and all(d > 0 for d in inner):
            if int(np.prod(inner)) != per:
                b, r = groups[0]
                raise ValueError("%s:%d: slot '%s' holds %d values per line but use_var's shape %s needs %d"
                                 % (b.origin, b.linenos[r[0]], spec.name, per, list(spec.shape),
                                    int(np.prod(inner))))
            shape = (nrows,) + tuple(inner)
        else:
            shape = (nrows, per)
        feed[spec.name] = np.ascontiguousarray(vals).reshape(shape)
    return feed
