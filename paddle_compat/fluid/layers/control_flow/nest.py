"""Nested structures of Variables (lists, tuples, dicts) as Paddle 1.8's layers.utils handles them for
while_loop: flattened in order (a dict by its sorted keys), packed back, compared."""

__all__ = ["flatten", "pack_as", "assert_same_structure", "holds_containers"]


def _is_seq(x):
    return isinstance(x, (list, tuple, dict))


def _items(x):
    return [x[k] for k in sorted(x)] if isinstance(x, dict) else list(x)


def flatten(s):
    if not _is_seq(s):
        return [s]
    out = []
    for item in _items(s):
        out.extend(flatten(item))
    return out


def pack_as(structure, flat):
    """`flat` (what flatten gave, or values in its order) in new containers shaped as `structure`."""
    it = iter(flat)

    def build(s):
        if isinstance(s, dict):
            return {k: build(s[k]) for k in sorted(s)}
        if isinstance(s, (list, tuple)):
            return type(s)(build(x) for x in s)
        return next(it)
    return build(structure)


def assert_same_structure(a, b):
    """ValueError naming where a and b differ (containers, their lengths, a dict's keys)."""
    if _is_seq(a) != _is_seq(b):
        raise ValueError("the structures differ: %r is %sa sequence, %r is %s" % (
            a, "" if _is_seq(a) else "not ", b, "one" if _is_seq(b) else "not"))
    if not _is_seq(a):
        return
    if isinstance(a, dict) != isinstance(b, dict):
        raise ValueError("the structures differ: %s against %s" % (type(a).__name__, type(b).__name__))
    if isinstance(a, dict) and sorted(a) != sorted(b):
        raise ValueError("the dicts' keys differ: %s against %s" % (sorted(a), sorted(b)))
    if len(a) != len(b):
        raise ValueError("%d values against %d" % (len(a), len(b)))
    for x, y in zip(_items(a), _items(b)):
        assert_same_structure(x, y)


def holds_containers(structure):
    return any(_is_seq(s) for s in structure)
