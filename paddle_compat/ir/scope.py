"""Scope: name -> ScopeVar, with parent/child scopes as in Paddle, and the global scope a run uses by default."""

import contextlib
import itertools
import threading

from .tensor import ScopeVar

__all__ = ["Scope", "global_scope", "scope_guard"]


class Scope:
    """name -> ScopeVar, with parent/child scopes as in Paddle."""

    _count = itertools.count()

    def __init__(self, parent=None):
        # a process-unique id: the executor caches lowerings per scope, and id() of a freed scope is reused
        self._uid = next(Scope._count)
        self._vars = {}
        self._parent = parent
        self._kids = []
        self._lock = threading.Lock()

    def _remove_from_pool(self):
        """Paddle keeps every scope made from Python in a pool until it is removed; removing one twice fails."""
        if getattr(self, "_removed_from_pool", False):
            raise RuntimeError("Deleting a nonexistent scope is not allowed (this scope was already removed "
                               "from the pool)")
        self._removed_from_pool = True

    def var(self, name):
        v = self._vars.get(name)
        if v is None:
            with self._lock:
                v = self._vars.get(name)
                if v is None:
                    v = self._vars[name] = ScopeVar(name)
        return v

    def find_var(self, name):
        s = self
        while s is not None:
            v = s._vars.get(name)
            if v is not None:
                return v
            s = s._parent
        return None

    def find_local_var(self, name):
        return self._vars.get(name)

    def erase(self, names):
        for n in names:
            self._vars.pop(n, None)

    def local_var_names(self):
        return list(self._vars.keys())

    def new_scope(self):
        kid = Scope(self)
        self._kids.append(kid)
        return kid

    def drop_kids(self):
        self._kids = []

    def parent(self):
        return self._parent


_global_scope = Scope()


def global_scope():
    return _global_scope


def _switch_scope(scope):
    global _global_scope
    old = _global_scope
    _global_scope = scope
    return old


@contextlib.contextmanager
def scope_guard(scope):
    if not isinstance(scope, Scope):
        raise TypeError("scope_guard expects a fluid.Scope, got %s" % type(scope).__name__)
    old = _switch_scope(scope)
    try:
        yield
    finally:
        _switch_scope(old)
