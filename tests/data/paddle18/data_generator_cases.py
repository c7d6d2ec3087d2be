"""Data generator cases shared by make_data_generator.py (real Paddle 1.8.5) and the unit tests.

Each case builds a generator from the module `dg` (Paddle's or ours), runs it over fixed input and
returns the text it wrote. Kept Python 3.7 compatible: Paddle 1.8.5 runs it.
"""

import io
import sys

RAW = [
    "1 2 3\t0.5\t1\n",
    "40 5\t-2.25\t0\n",
    "6\t1e-05\t1\n",
    "7 8 9 10\t3\t0\n",
    "skip\n",
    "11 12\t123456789.125\t1\n",
    "13\t0.1\t0\n",
    "14 15 16\t2.5e+20\t1\n",
]


def _parse(line):
    if line.startswith("skip"):
        return None
    ids, dense, label = line.rstrip("\n").split("\t")
    ids = [int(x) for x in ids.split()]
    d = float(dense)
    dense_v = int(d) if d == int(d) and abs(d) < 1e6 else d   # ints stay ints until a float shows up
    return [("ids", ids), ("dense", [dense_v, d * 2]), ("label", [int(label)])]


def _capture(fn, stdin_text=None):
    old_out, old_in = sys.stdout, sys.stdin
    sys.stdout = io.StringIO()
    if stdin_text is not None:
        sys.stdin = io.StringIO(stdin_text)
    try:
        fn()
        return sys.stdout.getvalue()
    finally:
        sys.stdout, sys.stdin = old_out, old_in


def cases(dg):
    out = {}

    class Basic(dg.MultiSlotDataGenerator):
        def generate_sample(self, line):
            def it():
                yield _parse(line)
            return it

    g = Basic()
    out["basic_stdin"] = _capture(g.run_from_stdin, "".join(RAW))
    out["basic_proto_info"] = [list(p) for p in g._proto_info]

    class Tuples(dg.MultiSlotDataGenerator):
        def generate_sample(self, line):
            def it():
                s = _parse(line)
                if s is None:
                    return
                yield tuple(s)
                yield (("ids", [0]), ("dense", [-1.0, True and 7]), ("label", [0]))
            return it

    out["tuples_two_per_line"] = _capture(Tuples().run_from_stdin, "".join(RAW))

    class Padded(dg.MultiSlotDataGenerator):
        def generate_sample(self, line):
            def it():
                yield _parse(line)
            return it

        def generate_batch(self, samples):
            width = max(len(s[0][1]) for s in samples)

            def it():
                for s in samples:
                    ids = s[0][1] + [0] * (width - len(s[0][1]))
                    yield [("ids", ids), s[1], s[2], ("width", [width])]
            return it

    for bs in (1, 3, 32):
        g = Padded()
        g.set_batch(bs)
        out["padded_batch_%d" % bs] = _capture(g.run_from_stdin, "".join(RAW))

    class Memory(dg.MultiSlotDataGenerator):
        def generate_sample(self, line):
            def it():
                for i in range(5):
                    yield [("a", [i, i + 1]), ("b", [i / 4.0])] if i != 2 else None
            return it

    g = Memory()
    g.set_batch(2)
    out["memory"] = _capture(g.run_from_memory)

    class Strings(dg.MultiSlotStringDataGenerator):
        def generate_sample(self, line):
            def it():
                if line.startswith("skip"):
                    return
                ids, dense, label = line.rstrip("\n").split("\t")
                yield [("ids", ids.split()), ("dense", [dense]), ("label", [label])]
            return it

    out["strings"] = _capture(Strings().run_from_stdin, "".join(RAW))

    errors = {}
    bad = {
        "empty_slot": [[("a", [1])], [("a", [])]],
        "renamed_slot": [[("a", [1]), ("b", [2])], [("a", [1]), ("c", [2])]],
        "fewer_slots": [[("a", [1]), ("b", [2])], [("a", [1])]],
        "not_a_list": [[("a", (1, 2))]],
        "sample_not_list": ["a 1"],
    }
    for name, samples in sorted(bad.items()):
        class Bad(dg.MultiSlotDataGenerator):
            def generate_sample(self, line, samples=samples):
                def it():
                    for s in samples:
                        yield s
                return it
        try:
            _capture(Bad().run_from_memory)
            errors[name] = None
        except Exception as e:  # noqa: BLE001  (record the kind only)
            errors[name] = type(e).__name__
    out["errors"] = errors
    return out
