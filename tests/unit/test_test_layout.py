"""pytest imports test modules by basename (no __init__.py in tests/): two files with the same name in
tests/unit and tests/dist stop the whole run at collection, so names must be unique across tests/."""

import collections
import os

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_test_module_basenames_are_unique():
    seen = collections.defaultdict(list)
    for root, _, files in os.walk(TESTS):
        for f in files:
            if f.startswith("test_") and f.endswith(".py"):
                seen[f].append(os.path.relpath(os.path.join(root, f), TESTS))
    dup = {k: v for k, v in seen.items() if len(v) > 1}
    assert not dup, "test modules sharing a basename: %s" % dup
