"""A small key-value store served through wire handlers (trainer 0 hosts one for collective mode's rendezvous,
pserver 0 one for the trainers' exchanges), and a torch.distributed.Store that talks to it (what gloo and NCCL
need to form a group: set/get/add/wait/check/compare_set/delete_key/num_keys, each bounded by a deadline).

Values are bytes; `add` keeps a decimal counter, as TCPStore does. `get` and `wait` answer through futures,
so a waiting peer holds no server thread.
"""

import datetime
import threading

import torch
import torch.distributed as dist

from ..ps.errors import PsDeadlineError

__all__ = ["KVStore", "WireStore"]


def _bytes(v):
    if isinstance(v, str):
        return v.encode()
    return bytes(v)


class KVStore:
    def __init__(self, name="the rendezvous store"):
        self.name = name
        self.data = {}
        self.lock = threading.Lock()
        self.waiters = []        # [keys, future, timer, what]

    def handlers(self):
        return {"kv_set": self.set, "kv_get": self.get, "kv_add": self.add, "kv_check": self.check,
                "kv_wait": self.wait, "kv_compare_set": self.compare_set, "kv_delete": self.delete_key,
                "kv_num_keys": self.num_keys, "kv_append": self.append, "kv_multi_get": self.multi_get,
                "kv_multi_set": self.multi_set}

    def _wake(self):
        """Under the lock: complete the waiters whose keys are all present; returns [(future, value)]."""
        done, keep = [], []
        for w in self.waiters:
            keys, fut, timer, single = w
            if all(k in self.data for k in keys):
                if timer is not None:
                    timer.cancel()
                done.append((fut, self.data[keys[0]] if single else None))
            else:
                keep.append(w)
        self.waiters = keep
        return done

    @staticmethod
    def _finish(done):
        for fut, value in done:
            if not fut.done():
                fut.set_result(value)

    def set(self, key, value):
        with self.lock:
            self.data[key] = _bytes(value)
            done = self._wake()
        self._finish(done)

    def multi_set(self, keys, values):
        with self.lock:
            for k, v in zip(keys, values):
                self.data[k] = _bytes(v)
            done = self._wake()
        self._finish(done)

    def append(self, key, value):
        with self.lock:
            self.data[key] = self.data.get(key, b"") + _bytes(value)
            done = self._wake()
        self._finish(done)

    def add(self, key, delta):
        with self.lock:
            v = int(self.data.get(key, b"0")) + int(delta)
            self.data[key] = str(v).encode()
            done = self._wake()
        self._finish(done)
        return v

    def compare_set(self, key, expected, desired):
        expected, desired = _bytes(expected), _bytes(desired)
        with self.lock:
            cur = self.data.get(key)
            if (cur is None and not expected) or cur == expected:
                self.data[key] = desired
                cur = desired
            elif cur is None:
                cur = expected
            done = self._wake()
        self._finish(done)
        return cur

    def check(self, keys):
        with self.lock:
            return all(k in self.data for k in keys)

    def delete_key(self, key):
        with self.lock:
            return self.data.pop(key, None) is not None

    def num_keys(self):
        with self.lock:
            return len(self.data)

    def _waiter(self, keys, timeout_s, single):
        fut = torch.futures.Future()
        with self.lock:
            if all(k in self.data for k in keys):
                fut.set_result(self.data[keys[0]] if single else None)
                return fut
            entry = [list(keys), fut, None, single]
            if timeout_s is not None and timeout_s > 0:
                t = threading.Timer(timeout_s, self._expire, args=(entry, timeout_s))
                t.daemon = True
                entry[2] = t
                t.start()
            self.waiters.append(entry)
        return fut

    def _expire(self, entry, timeout_s):
        with self.lock:
            if entry not in self.waiters:
                return
            self.waiters.remove(entry)
            missing = [k for k in entry[0] if k not in self.data]
        if not entry[1].done():
            entry[1].set_exception(PsDeadlineError("%s: keys %s did not appear within %.1fs"
                                                   % (self.name, missing[:5], timeout_s)))

    def get(self, key, timeout_s=None):
        return self._waiter([key], timeout_s, True)

    def multi_get(self, keys, timeout_s=None):
        fut = self._waiter(list(keys), timeout_s, False)
        out = torch.futures.Future()

        def then(f):
            try:
                f.value()
            except Exception as e:
                out.set_exception(e)
                return
            with self.lock:
                out.set_result([self.data[k] for k in keys])
        fut.add_done_callback(then)
        return out

    def wait(self, keys, timeout_s=None):
        return self._waiter(list(keys), timeout_s, False)


def _resolve(v):
    return v.wait() if isinstance(v, torch.futures.Future) else v


class WireStore(dist.Store):
    """A torch.distributed.Store whose operations are calls `call(name, *args) -> value` to a KVStore's
    handlers: over a wire connection, or straight into the hosting process's own KVStore."""

    def __init__(self, call, timeout_s, where):
        super().__init__()
        self._call = call
        self._timeout_s = float(timeout_s)
        self._where = where

    def _do(self, name, *args):
        return _resolve(self._call(name, *args))

    def set(self, key, value):
        self._do("kv_set", key, _bytes(value))

    def get(self, key):
        return self._do("kv_get", key, self._timeout_s)

    def add(self, key, value):
        return int(self._do("kv_add", key, int(value)))

    def append(self, key, value):
        self._do("kv_append", key, _bytes(value))

    def multi_get(self, keys):
        return self._do("kv_multi_get", list(keys), self._timeout_s)

    def multi_set(self, keys, values):
        self._do("kv_multi_set", list(keys), [_bytes(v) for v in values])

    def compare_set(self, key, expected, desired):
        return self._do("kv_compare_set", key, _bytes(expected), _bytes(desired))

    def check(self, keys):
        return bool(self._do("kv_check", list(keys)))

    def delete_key(self, key):
        return bool(self._do("kv_delete", key))

    def num_keys(self):
        return int(self._do("kv_num_keys"))

    def wait(self, keys, timeout=None):
        t = self._timeout_s if timeout is None else timeout.total_seconds()
        self._do("kv_wait", list(keys), t)

    def set_timeout(self, timeout):
        self._timeout_s = timeout.total_seconds()

    def has_extended_api(self):
        return True

    @property
    def timeout(self):
        return datetime.timedelta(seconds=self._timeout_s)


def local_caller(kv):
    """call(name, *args) straight into a KVStore of this process."""
    handlers = kv.handlers()

    def call(name, *args):
        return handlers[name](*args)
    return call
