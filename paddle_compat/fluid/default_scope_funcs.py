"""Paddle's fluid.default_scope_funcs: a per-thread stack of scopes (the root one made on first use), and
helpers that create or find variables in the innermost one."""

import threading

from ..ir.scope import Scope

__all__ = ["get_cur_scope", "enter_local_scope", "leave_local_scope", "var", "find_var", "scoped_function"]

_local = threading.local()


def _stack():
    if not getattr(_local, "scopes", None):
        _local.scopes = [Scope()]
    return _local.scopes


def get_cur_scope():
    return _stack()[-1]


def enter_local_scope():
    _stack().append(get_cur_scope().new_scope())


def leave_local_scope():
    _stack().pop()
    get_cur_scope().drop_kids()


def var(name):
    """The variable `name` of the current scope, created if absent."""
    return get_cur_scope().var(name)


def find_var(name):
    """The variable `name` of the current scope or a parent, else None."""
    return get_cur_scope().find_var(name)


def scoped_function(func):
    """Run func() in a new local scope, left afterwards whatever happens."""
    enter_local_scope()
    try:
        func()
    finally:
        leave_local_scope()
