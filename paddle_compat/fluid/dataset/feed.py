"""Reading Paddle's MultiSlot text files (through the pipe command) and batching them into feeds (used by
fluid.dataset). Text is parsed in chunks of whole lines into column Blocks (dataset_parse); Rows select
samples over Blocks, and make_batch gathers a batch's columns into feed values.
"""

import os
import shlex
import subprocess
import tempfile
import threading
from collections import namedtuple

import numpy as np

from .parse import Block, parse_chunk, strip_ins_fields
# the IR's modules, not the package: the reading helper (reader_helper.py) loads them without its __init__
from ...ir.dtypes import dtype_name
from ...ir.lazy import torch
from ...ir.tensor import LoDTensor, ScopeVar

__all__ = ["ReadOpts", "SlotSpec", "Block", "Rows", "read_blocks", "read_file", "queue_batches", "batch_columns",
           "pack_columns", "pack_batch", "unpack_feed",
           "make_batch", "parse_text"]


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


class ReadOpts(namedtuple("ReadOpts", "ins_fields download_cmd hdfs_cmd")):
    """How a dataset reads its files beyond the pipe command: ins_fields leading "1 <token>" groups on
    each line (the ins id, then the content, as set_parse_ins_id / set_parse_content ask), and the
    commands that fetch a remote ("hdfs:" / "afs:") file (set_download_cmd, else set_hdfs_config's
    `hadoop fs`), as Paddle's fs layer runs them. Picklable: the reading helper process gets it."""

    def fetch_command(self, path):
        """The shell command that writes a remote file to stdout; None for a local path."""
        if not path.startswith(("hdfs:", "afs:")):
            return None
        if self.download_cmd:
            return "%s %s" % (self.download_cmd, shlex.quote(path))
        return "%s %s %s" % (self.hdfs_cmd, "-text" if path.endswith(".gz") else "-cat", shlex.quote(path))


ReadOpts.__new__.__defaults__ = (0, "", "hadoop fs")
_PLAIN = ReadOpts()


def read_blocks(path, pipe_command, slots, timeout, opts=_PLAIN):
    """Blocks of about _CHUNK bytes of `path` as the pipe command writes it (Paddle runs
    `cat file | pipe_command`), parsed as they come: the first batches are ready before the file is
    read through. A failing or overdue pipe command raises after the Blocks it wrote."""
    fetch = opts.fetch_command(path)
    if fetch is None and not os.path.isfile(path):
        raise FileNotFoundError("dataset: file '%s' in the filelist does not exist" % path)
    line0 = 0
    for data in _chunks(path, pipe_command, timeout, fetch):
        ids = None
        if opts.ins_fields:
            data, ids = strip_ins_fields(data, opts.ins_fields, path, line0)
        block, nlines = parse_chunk(data, slots, path, line0)
        block.ins_ids = ids
        line0 += nlines
        if block.n:
            yield block


_CHUNK = 1 << 20


def _whole_lines(read):
    """Chunks of whole lines from read(n) (b"" at the end); the last line may lack its newline."""
    rest = b""
    while True:
        data = read(_CHUNK)
        if not data:
            if rest:
                yield rest
            return
        data = rest + data
        cut = data.rfind(b"\n") + 1
        if cut == 0:
            rest = data
            continue
        rest = data[cut:]
        yield data[:cut]


def _chunks(path, pipe_command, timeout, fetch=None):
    if fetch is not None:   # a remote file: `fetch | pipe_command`, as Paddle's fs layer runs it
        cmd = fetch if pipe_command in (None, "", "cat") else "%s | %s" % (fetch, pipe_command)
        yield from _run_chunks(cmd, subprocess.DEVNULL, path, timeout)
        return
    with open(path, "rb") as fin:
        if pipe_command in (None, "", "cat"):
            yield from _whole_lines(fin.read)   # the common case needs no process
            return
        yield from _run_chunks(pipe_command, fin, path, timeout)


def _run_chunks(command, stdin, path, timeout):
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(command, shell=True, stdin=stdin, stdout=subprocess.PIPE, stderr=err)
        overdue = threading.Event()

        def kill():
            overdue.set()
            proc.kill()
        timer = threading.Timer(timeout, kill)
        timer.daemon = True
        timer.start()
        try:
            yield from _whole_lines(proc.stdout.read)
            proc.wait()
        finally:
            timer.cancel()
            if proc.poll() is None:   # the consumer stopped early
                proc.kill()
                proc.wait()
            proc.stdout.close()
        if overdue.is_set():
            raise TimeoutError("dataset: pipe command %r on '%s' did not finish within %s s"
                               % (command, path, timeout))
        if proc.returncode != 0:
            err.seek(0)
            msg = err.read().decode("utf-8", "replace").strip()
            raise RuntimeError("dataset: pipe command %r failed on '%s' (exit status %d); its stderr:\n%s"
                               % (command, path, proc.returncode, msg[-4000:]))


def read_file(path, pipe_command, slots, timeout, opts=_PLAIN):
    """All samples of one file, as Rows."""
    return Rows.concat([Rows.of(b) for b in read_blocks(path, pipe_command, slots, timeout, opts)])


def parse_text(text, slots, origin):
    """A Block from MultiSlot text (a str)."""
    return parse_chunk(text.encode("utf-8"), slots, origin)[0]


def queue_batches(paths, pipe_command, slots, batch_size, timeout, drop_last=False, opts=_PLAIN):
    """Rows of batch_size samples from the files in turn (a batch may span two files), as a
    QueueDataset thread reads them; a last, shorter batch unless drop_last."""
    pending = Rows.concat([])
    for p in paths:
        for block in read_blocks(p, pipe_command, slots, timeout, opts):
            pending = Rows.concat([pending, Rows.of(block)])
            while len(pending) >= batch_size:
                yield pending[:batch_size]
                pending = pending[batch_size:]
    if len(pending) and not drop_last:
        yield pending


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


def _span(rows):
    """(first, end) when the rows are consecutive (the usual QueueDataset batch), else None."""
    n = len(rows)
    if n and rows[-1] - rows[0] == n - 1 and (n < 3 or (np.diff(rows) == 1).all()):
        return int(rows[0]), int(rows[-1]) + 1
    return None


def _gather(block, k, rows, span):
    """(values, batch-local offsets) of slot k for `rows` of `block`."""
    o = block.offs[k]
    if span is not None:
        first, end = span
        a = o[first]
        return block.vals[k][a:o[end]], o[first:end + 1] - a   # values: a view
    starts, lens = o[rows], o[rows + 1] - o[rows]
    c = np.zeros(len(rows) + 1, np.int64)
    np.cumsum(lens, out=c[1:])
    return block.vals[k][np.repeat(starts - c[:-1], lens) + np.arange(c[-1])], c


def make_batch(rows, slots, place=None):
    """A feed dict for Rows: LoDTensors for lod slots, dense arrays shaped as use_var (built directly: the
    offsets come from the line counts, so create_lod_tensor's checks cannot fail). Feeds stay on the
    host; the executor moves them to the run's device."""
    feed = {}
    for name, (vals, offsets) in batch_columns(rows, slots).items():
        # values are copied: the Blocks' columns stay as parsed whatever a program does to its feeds
        feed[name] = vals if offsets is None else \
            LoDTensor(ScopeVar(None, torch.from_numpy(np.array(vals)), (torch.from_numpy(offsets),)))
    return feed


def pack_columns(columns):
    """batch_columns' output as a few flat arrays (one per dtype, all offsets in one [lod slots, n + 1]
    array) and a layout: what a helper process sends, cheap to pickle and to unpack (unpack_feed)."""
    layout, by_dtype, offs = [], {}, []
    for name, (vals, offsets) in columns.items():
        key = vals.dtype.str
        parts = by_dtype.setdefault(key, [])
        parts.append(vals.reshape(-1))
        layout.append((name, key, vals.size, vals.shape, len(offs) if offsets is not None else -1))
        if offsets is not None:
            offs.append(offsets)
    flat = {key: np.concatenate(parts) for key, parts in by_dtype.items()}
    return layout, flat, (np.stack(offs) if offs else None)


def pack_batch(rows, slots):
    """pack_columns(batch_columns(rows, slots)), with a short path for the usual QueueDataset batch
    (consecutive rows of one Block): a few numpy calls per slot. Anything else, a bad dense slot
    included (the long path names it), takes the long path."""
    groups = rows.groups()
    span = _span(groups[0][1]) if len(groups) == 1 else None
    if span is None:
        return pack_columns(batch_columns(rows, slots))
    block = groups[0][0]
    first, end = span
    n = end - first
    layout, by_dtype, offs = [], {}, []
    for k, spec in enumerate(slots):
        o = block.offs[k]
        a, z = int(o[first]), int(o[end])
        vals = block.vals[k][a:z]
        key = vals.dtype.str
        parts = by_dtype.get(key)
        if parts is None:
            parts = by_dtype[key] = []
        parts.append(vals)
        inner = spec.shape[1:]
        if spec.lod:
            shape = (z - a, 1) if len(spec.shape) <= 2 else (-1,) + tuple(inner)
            layout.append((spec.name, key, z - a, shape, len(offs)))
            offs.append(o[first:end + 1])
            continue
        per = (z - a) // n
        if per * n != z - a or (np.diff(o[first:end + 1]) != per).any() or \
                (inner and all(d > 0 for d in inner) and int(np.prod(inner)) != per):
            return pack_columns(batch_columns(rows, slots))
        shape = (n,) + tuple(inner) if inner and all(d > 0 for d in inner) else (n, per)
        layout.append((spec.name, key, z - a, shape, -1))
    flat = {key: np.concatenate(parts) for key, parts in by_dtype.items()}
    if offs:
        offs = np.stack(offs)
        offs -= offs[:, :1]
    return layout, flat, (offs if len(offs) else None)


def unpack_feed(packed):
    """The feed dict of a pack_columns result: torch views into its arrays, no copies."""
    layout, flat, offs = packed
    counts = {}
    for _, key, size, _, _ in layout:
        counts.setdefault(key, []).append(size)
    views = {key: iter(torch.split(torch.from_numpy(flat[key]), c)) for key, c in counts.items()}
    at = dict.fromkeys(counts, 0)
    lods = torch.from_numpy(offs).unbind(0) if offs is not None else ()
    feed = {}
    for name, key, size, shape, lod in layout:
        t = next(views[key])
        if lod < 0:
            feed[name] = flat[key][at[key]:at[key] + size].reshape(shape)
        else:
            feed[name] = LoDTensor(ScopeVar(None, t.view(shape), (lods[lod],)))
        at[key] += size
    return feed


def batch_columns(rows, slots):
    """{slot name: (values, batch offsets or None)} for Rows, with numpy only: lod slots' values shaped
    [n, 1] (or use_var's inner shape) with their offsets, dense slots shaped as use_var."""
    groups = rows.groups()
    spans = [_span(r) for _, r in groups]
    nrows = len(rows)
    out = {}
    for k, spec in enumerate(slots):
        parts = [_gather(b, k, r, sp) for (b, r), sp in zip(groups, spans)]
        if len(parts) == 1:
            vals, offs = parts[0]
        else:
            vals = np.concatenate([p[0] for p in parts])
            offs = np.zeros(nrows + 1, np.int64)
            np.cumsum(np.concatenate([np.diff(p[1]) for p in parts]), out=offs[1:])
        if spec.lod:
            out[spec.name] = (vals.reshape(-1, 1) if len(spec.shape) <= 2 else
                              vals.reshape((-1,) + spec.shape[1:]), offs)
            continue
        per = int(offs[1]) if nrows else 0
        inner = tuple(spec.shape[1:])
        known = bool(inner) and all(d > 0 for d in inner)
        even = offs[-1] == per * nrows and not (np.diff(offs) != per).any()
        if even and (not known or int(np.prod(inner)) == per):
            shape = (nrows,) + inner if known else (nrows, per)
            out[spec.name] = (np.ascontiguousarray(vals).reshape(shape), None)
            continue
        # lines holding other counts than the shape says: as Paddle 1.8.5's feed, all the values, shaped
        # (-1,) + the inner shape, with the lines' offsets as LoD (its dense slots carry them too)
        inner = inner if known else (1,)
        size = int(np.prod(inner))
        if int(offs[-1]) % size:   # Paddle's Resize fails too: name a line that breaks the rows
            for (b, r), (_, o) in zip(groups, parts):
                bad = np.nonzero(np.diff(o) % size)[0]
                if len(bad):
                    raise ValueError("%s:%d: slot '%s' is dense (lod_level 0) with shape %s but holds %d values, "
                                     "not whole rows of %d; give it lod_level=1 or pad it"
                                     % (b.origin, b.linenos[r[bad[0]]], spec.name, list(spec.shape),
                                        int(np.diff(o)[bad[0]]), size))
        out[spec.name] = (np.ascontiguousarray(vals).reshape((-1,) + inner), offs)
    return out
