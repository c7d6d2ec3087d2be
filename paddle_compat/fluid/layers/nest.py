"""Nested structures (lists, tuples, namedtuples, dicts) as Paddle 1.8's layers/utils.py handles them for the
RNN APIs: flatten, pack_sequence_as, map_structure, assert_same_structure. A dict is walked in sorted-key
order; anything else that is not a list/tuple/dict is a leaf."""

__all__ = ["is_sequence", "flatten", "pack_sequence_as", "map_structure", "assert_same_structure"]


def is_sequence(seq):
    return isinstance(seq, (list, tuple, dict))


def _children(seq):
    if isinstance(seq, dict):
        return [seq[k] for k in sorted(seq)]
    return list(seq)


def flatten(nest):
    if not is_sequence(nest):
        return [nest]
    return [leaf for child in _children(nest) for leaf in flatten(child)]


def _like(instance, values):
    if isinstance(instance, dict):
        by_key = dict(zip(sorted(instance), values))
        return type(instance)((k, by_key[k]) for k in instance)
    if isinstance(instance, tuple) and hasattr(instance, "_fields"):   # a namedtuple
        return type(instance)(*values)
    return type(instance)(values)


def pack_sequence_as(structure, flat_sequence):
    """flat_sequence's values laid out as `structure`."""
    flat = list(flat_sequence)
    if not is_sequence(structure):
        if len(flat) != 1:
            raise ValueError("pack_sequence_as: a single value structure takes 1 value, got %d" % len(flat))
        return flat[0]
    want = len(flatten(structure))
    if want != len(flat):
        raise ValueError("pack_sequence_as: the structure holds %d values, flat_sequence %d" % (want, len(flat)))
    it = iter(flat)

    def pack(s):
        if not is_sequence(s):
            return next(it)
        return _like(s, [pack(c) for c in _children(s)])
    return pack(structure)


def map_structure(func, *structure):
    """func applied to the leaves of the structures (all of one structure), packed as the first one."""
    for other in structure[1:]:
        assert_same_structure(structure[0], other, check_types=False)
    flats = [flatten(s) for s in structure]
    return pack_sequence_as(structure[0], [func(*leaves) for leaves in zip(*flats)])


def assert_same_structure(nest1, nest2, check_types=True):
    """ValueError when the two differ in their number of values or their nesting, TypeError (check_types)
    when a sequence of one is of another type than the other's."""
    n1, n2 = len(flatten(nest1)), len(flatten(nest2))
    if n1 != n2:
        raise ValueError("The two structures don't have the same number of elements.\n\nFirst structure (%i "
                         "elements): %s\n\nSecond structure (%i elements): %s" % (n1, nest1, n2, nest2))
    _same(nest1, nest2, check_types)


def _same(a, b, check_types):
    if is_sequence(a) != is_sequence(b):
        raise ValueError("The two structures don't have the same nested structure: %s and %s" % (a, b))
    if not is_sequence(a):
        return
    if check_types and type(a) is not type(b):
        raise TypeError("The two structures don't have the same sequence type: %s and %s"
                        % (type(a).__name__, type(b).__name__))
    if isinstance(a, dict) and set(a) != set(b):
        raise ValueError("The two dicts don't have the same keys: %s and %s" % (sorted(a), sorted(b)))
    ca, cb = _children(a), _children(b)
    if len(ca) != len(cb):
        raise ValueError("The two structures don't have the same nested structure: %s and %s" % (a, b))
    for x, y in zip(ca, cb):
        _same(x, y, check_types)
