"""PADDLE_COMPAT_DEBUG_LOWERING: show each lowered block's generated source (as tinygrad's DEBUG levels do).

    PADDLE_COMPAT_DEBUG_LOWERING=1        print it to stderr as it is lowered
    PADDLE_COMPAT_DEBUG_LOWERING=/a/dir   write it to /a/dir/program<uid>_block<idx>_<n>.py

Unset, empty or 0: nothing. The source is on the lowered object too (`.code`), whatever the variable says.
"""

import os
import re
import sys

ENV = "PADDLE_COMPAT_DEBUG_LOWERING"
_NAME = re.compile(r"block (\d+) of program (\d+) #(\d+)")


def target(env=None):
    """None (off), "stderr", or the directory the variable names."""
    value = (os.environ if env is None else env).get(ENV, "").strip()
    if value.lower() in ("", "0", "false", "no", "off"):
        return None
    if value.lower() in ("1", "true", "yes", "on", "stderr"):
        return "stderr"
    return value


def show(fname, src, env=None):
    where = target(env)
    if where is None:
        return None
    if where == "stderr":
        sys.stderr.write("# ---- %s ----\n%s\n" % (fname, src))
        sys.stderr.flush()
        return where
    m = _NAME.search(fname)
    base = "program%s_block%s_%s.py" % (m.group(2), m.group(1), m.group(3)) if m else "lowered.py"
    os.makedirs(where, exist_ok=True)
    path = os.path.join(where, base)
    with open(path, "w") as f:
        f.write("# %s\n%s" % (fname, src))
    return path
