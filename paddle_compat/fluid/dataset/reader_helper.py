"""The entry point of a QueueDataset reading helper (see reader.py): run as a script, it parses and batches the
files each job names and sends the numpy columns of each batch down stdout, one job after another from stdin.

It loads the numpy-only modules it needs (dataset/feed.py, dataset/parse.py and the IR's tensor holders)
without the packages' __init__ files, which would load all of fluid: bare package stubs stand in for them,
so a helper starts in a fraction of a second.
"""

import os
import pickle
import sys
import types

_FLUID = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_ROOT = os.path.dirname(_FLUID)
sys.path.pop(0)   # this file's directory: its modules are reached through the package only
for _name, _path in (("paddle_compat", _ROOT), ("paddle_compat.ir", os.path.join(_ROOT, "ir")),
                     ("paddle_compat.fluid", _FLUID), ("paddle_compat.fluid.dataset", os.path.join(_FLUID, "dataset"))):
    _stub = types.ModuleType(_name)
    _stub.__path__ = [_path]
    sys.modules[_name] = _stub

from paddle_compat.fluid.dataset.feed import pack_batch, queue_batches  # noqa: E402  (after the stubs)


def _serve():
    """The helper: one job after another from stdin until it closes."""
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)   # a stray print must not corrupt the batches on stdout
    inp = sys.stdin.buffer
    while True:
        try:
            paths, pipe_command, slots, batch_size, timeout, drop_last, opts_arg = pickle.load(inp)
        except EOFError:
            return
        try:
            for rows in queue_batches(paths, pipe_command, slots, batch_size, timeout, drop_last, *opts_arg):
                pickle.dump(("batch", pack_batch(rows, slots)), out, protocol=pickle.HIGHEST_PROTOCOL)
                out.flush()
            msg = ("done", None)
        except Exception as e:  # noqa: BLE001  (sent to the parent, which raises it)
            msg = ("error", e)
        try:
            data = pickle.dumps(msg, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # noqa: BLE001
            data = pickle.dumps(("error", RuntimeError(str(msg[1]))))
        out.write(data)
        out.flush()


if __name__ == "__main__":
    try:
        _serve()
    except (BrokenPipeError, KeyboardInterrupt):
        pass
