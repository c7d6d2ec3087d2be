"""exe.run(use_prune=True) and optimize ops in fetch_list, as Paddle 1.8's Executor does them: the program run
is the original cut down (Program._prune_with_input) to what the fetched variables and the chosen optimize
ops need, given the fed variables; each pruned program is made once per (program, feed names, fetch_list)."""

import copy
import warnings

from ...ir import Operator, Program, Variable

__all__ = ["split_optimize_ops", "prune_program", "update_feed", "pruned_for_run"]


def split_optimize_ops(fetch_list):
    """(fetch_list without optimize ops, the optimize ops): an item may be an optimize op, a list of them (and
    of variables), or what Optimizer.minimize returns, (optimize ops, params_grads)."""
    if not isinstance(fetch_list, (list, tuple)) or \
            not any(isinstance(i, (Operator, list, tuple)) for i in fetch_list):
        return fetch_list, []
    fetches, ops = [], []

    def take(item):
        if isinstance(item, Operator):
            if not item._is_optimize_op():
                raise TypeError("The operator in fetch_list is not an optimize_op: %s" % item.type)
            ops.append(item)
        elif isinstance(item, (Variable, str)):
            fetches.append(item)
        else:
            raise TypeError("The item in fetch_list should be str, variable or optimize_op, but received %s."
                            % type(item).__name__)

    for item in fetch_list:
        if isinstance(item, list):
            for i in item:
                take(i)
        elif isinstance(item, tuple):   # (optimize ops, params_grads): the ops
            for i in item[0]:
                take(i)
        else:
            take(item)
    return fetches, ops


def _feed_names(feed):
    if isinstance(feed, dict):
        return list(feed)
    if isinstance(feed, (list, tuple)):
        return [n for each in feed for n in each]
    return []


def prune_program(program, feed=None, fetch_list=None, optimize_ops=None):
    """Executor._prune_program: a pruned Program, or for a CompiledProgram the same object with its program
    replaced by the pruned one (it is compiled again on its next run)."""
    compiled = not isinstance(program, Program)
    if compiled:
        origin = program._program
        if origin is None:
            # Paddle warns and returns None (and fails later): say why at once
            raise ValueError("use_prune: this CompiledProgram was made from a core.Graph and holds no program to "
                             "prune")
    else:
        origin = program
    optimize_ops = list(optimize_ops or [])
    if not optimize_ops:    # none named: every optimize op of the program
        optimize_ops = [op for b in origin.blocks for op in b.ops if op._is_optimize_op()]
    fetches = [] if fetch_list is None else \
        [fetch_list] if isinstance(fetch_list, (Variable, str)) else list(fetch_list)
    pruned = origin._prune_with_input(_feed_names(feed), fetches + optimize_ops)
    if not compiled:
        return pruned
    program._program = pruned
    program._graph = None
    program._runner = None
    return program


def update_feed(program, feed):
    """Executor._update_feed: the feed without the variables the pruned program lacks (each one warned of).
    Paddle removes them from the caller's dict; here the caller's feed is left as it was."""
    block = (program if isinstance(program, Program) else program._program).global_block()

    def kept(d):
        out = {}
        for name, value in d.items():
            if block.has_var(name):
                out[name] = value
            else:
                warnings.warn("The variable %s is not found in program. It is not declared or is pruned." % name)
        return out

    if isinstance(feed, dict):
        return kept(feed)
    if isinstance(feed, (list, tuple)):
        return [kept(each) for each in feed]
    return feed


def _fetch_key(item):
    if isinstance(item, Variable):
        return item.name
    if isinstance(item, Operator):
        return ("op", id(item))
    if isinstance(item, tuple):     # (optimize ops, params_grads)
        item = item[0]
    if isinstance(item, list):
        return tuple(_fetch_key(i) for i in item)
    return item


def _program_key(program):
    if isinstance(program, Program):
        return ("program", program._uid, program._version)
    inner = program._program
    return ("compiled", id(program), None if inner is None else (inner._uid, inner._version))


def pruned_for_run(exe, program, feed, fetch_list, optimize_ops):
    """(the program to run, the feed for it) for exe.run(use_prune=True); the pruned program comes from
    exe.pruned_program_caches after the first run with the same program, feed names and fetch_list."""
    items = [] if fetch_list is None else \
        [fetch_list] if isinstance(fetch_list, (Variable, str)) else list(fetch_list)
    key = (_program_key(program), tuple(_feed_names(feed)),
           tuple(_fetch_key(i) for i in items) + tuple(("op", id(op)) for op in optimize_ops))
    hit = exe.pruned_program_caches.get(key)
    if hit is None:
        original = program
        if not isinstance(program, Program):
            # prune a copy, so the original can be pruned again for other fetches; the copies of one
            # CompiledProgram share the place scopes of the first (Paddle's pruned_program_scope_caches)
            first = exe.pruned_program_scope_caches.get(id(original))
            program = copy.copy(program)
            program._runner = None
            if first is not None:
                program._share_vars_from = first[1]
            else:
                exe.pruned_program_scope_caches[id(original)] = (original, program)
        pruned = exe._prune_program(program, feed, items, list(optimize_ops))
        # (the original is held so its id() stays its own while the entry lives)
        hit = exe.pruned_program_caches[key] = (original, pruned)
    pruned = hit[1]
    return pruned, update_feed(pruned, feed)
