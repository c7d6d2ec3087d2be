"""Reading Paddle's MultiSlot text format and batching it into feeds (used by fluid.dataset).

A MultiSlot line holds, for every slot of the dataset's use_var list in order, a count n > 0 followed by
n values: "3 11 12 13 1 0.5" is a 3-id slot then a 1-value slot. Lines are split into per-slot token
lists at read time (cheap, and structural errors surface with their file and line); values become
numbers one batch at a time with numpy (a per-record pass only runs to name a bad value).
"""

import os
import subprocess
import tempfile
from itertools import chain

import numpy as np

from .dtypes import dtype_name

__all__ = ["SlotSpec", "read_file", "make_batch"]


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
    return parse_lines(data.decode("utf-8", "replace"), slots, path)


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


def make_batch(records, slots, place=None):
    """A feed dict for a list of records: LoDTensors for lod slots, dense arrays shaped as use_var.
    Feeds stay on the host; the executor moves them to the run's device."""
    feed = {}
    for k, spec in enumerate(slots):
        vals = _values(records, k, spec)
        if spec.lod:
            lens = [len(rec[k + 1]) for rec in records]
            feed[spec.name] = _lod_tensor(vals.reshape(-1, 1) if len(spec.shape) <= 2 else
                                          vals.reshape((-1,) + spec.shape[1:]), lens)
            continue
        per = vals.size // len(records)
        bad = [rec for rec in records if len(rec[k + 1]) != per]
        if bad or vals.size != per * len(records):
            rec = bad[0] if bad else records[0]
            raise ValueError("%s:%d: slot '%s' is dense (lod_level 0) but holds %d values where other lines "
                             "hold %d; give it lod_level=1 or pad it" % (rec[0][0], rec[0][1], spec.name,
                                                                          len(rec[k + 1]), per))
        inner = [d for d in spec.shape[1:]]
        if inner and all(d > 0 for d in inner) and int(np.prod(inner)) != per:
            rec = records[0]
            raise ValueError("%s:%d: slot '%s' holds %d values per line but use_var's shape %s needs %d"
                             % (rec[0][0], rec[0][1], spec.name, per, list(spec.shape), int(np.prod(inner))))
        shape = (len(records),) + tuple(inner) if inner and all(d > 0 for d in inner) else (len(records), per)
        feed[spec.name] = vals.reshape(shape)
    return feed
