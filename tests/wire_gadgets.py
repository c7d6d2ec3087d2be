"""Pickles that run code when unpickled (issue 23's gadget classes), each creating `marker` if it ever runs.
Shared by the codec unit tests and the dist test that throws them at a live pserver."""

import functools
import io
import os
import pickle


class _Reduce:
    def __init__(self, fn, args):
        self.fn, self.args = fn, args

    def __reduce__(self):
        return self.fn, self.args


def _cmd(marker):
    return "touch %s" % marker


def gadgets(marker):
    """{gadget class: pickle bytes}."""
    import numpy as np
    import torch
    inner = pickle.dumps(_Reduce(os.system, (_cmd(marker),)))
    buf = io.BytesIO()
    torch.save({"x": _Reduce(os.system, (_cmd(marker),))}, buf)
    torch_file = buf.getvalue()
    npy = io.BytesIO()
    np.save(npy, np.array([_Reduce(os.system, (_cmd(marker),))], dtype=object), allow_pickle=True)
    out = {
        "os.system": inner,
        "pickle.loads": pickle.dumps(_Reduce(pickle.loads, (inner,))),
        "torch.load": pickle.dumps(_Reduce(functools.partial(torch.load, weights_only=False),
                                           (io.BytesIO(torch_file),))),
        "torch.storage._load_from_bytes": pickle.dumps(_Reduce(torch.storage._load_from_bytes, (torch_file,))),
        "numpy.load(allow_pickle)": pickle.dumps(_Reduce(functools.partial(np.load, allow_pickle=True),
                                                         (io.BytesIO(npy.getvalue()),))),
        "builtins.eval": pickle.dumps(_Reduce(eval, ("__import__('os').system(%r)" % _cmd(marker),))),
        "builtins.exec": pickle.dumps(_Reduce(exec, ("import os; os.system(%r)" % _cmd(marker),))),
        "functools.partial": pickle.dumps(_Reduce(functools.partial(os.system, _cmd(marker)), ())),
    }
    # getattr(__import__('os'), 'system')('touch ...'), and attrgetter('system')(__import__('os'))(...):
    # chains pickle's reducer protocol cannot spell, written as protocol-0 opcodes
    out["builtins.getattr/__import__"] = (
        b"cbuiltins\ngetattr\n(cbuiltins\n__import__\n(S'os'\ntRS'system'\ntR(S'" + _cmd(marker).encode() + b"'\ntR.")
    out["operator.attrgetter"] = (
        b"coperator\nattrgetter\n(S'system'\ntR(cbuiltins\n__import__\n(S'os'\ntRtR(S'" + _cmd(marker).encode() +
        b"'\ntR.")
    return out


def check_gadgets_really_run(marker):
    """Sanity: each gadget does create the marker when given to pickle.loads (so a test that finds no marker
    proves the gadget was refused, not that it was harmless)."""
    ran = {}
    for name, data in gadgets(marker).items():
        if os.path.exists(marker):
            os.unlink(marker)
        try:
            pickle.loads(data)
        except Exception:
            pass
        ran[name] = os.path.exists(marker)
        if ran[name]:
            os.unlink(marker)
    return ran
