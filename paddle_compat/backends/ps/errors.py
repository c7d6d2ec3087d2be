"""Errors of pserver mode, and the one deadline every wait obeys (FLAGS_rpc_deadline, ms)."""

import os

__all__ = ["PsError", "PeerLostError", "PsDeadlineError", "deadline_s", "remote_message"]


class PsError(RuntimeError):
    """A pserver-mode failure; the message names the endpoint, trainer or setting at fault."""


class PeerLostError(PsError):
    """A pserver or trainer process died or dropped its connection."""


class PsDeadlineError(PsError):
    """A wait ran past FLAGS_rpc_deadline."""


def deadline_s():
    raw = os.environ.get("FLAGS_rpc_deadline", "180000")
    try:
        ms = int(raw)
    except ValueError:
        raise ValueError("FLAGS_rpc_deadline must be an int number of milliseconds, got %r" % raw)
    if ms <= 0:
        raise ValueError("FLAGS_rpc_deadline must be positive (milliseconds), got %d" % ms)
    return ms / 1000.0


def remote_message(exc):
    """The useful line(s) of an exception that came back over RPC (without the remote traceback)."""
    text = str(exc)
    for marker in ("\nTraceback", "\n\nThe above exception"):
        if marker in text:
            text = text.split(marker)[0]
    lines = [ln for ln in text.strip().splitlines() if ln.strip() and not ln.startswith("On WorkerInfo")]
    text = " ".join(ln.strip() for ln in lines)
    # torch wraps a remote RuntimeError("x") as RuntimeError("RuntimeError('x')"): unwrap one level
    for kind in ("RuntimeError", "PsError", "PeerLostError", "PsDeadlineError", "ValueError"):
        for q in ("'", '"'):
            head = kind + "(" + q
            if text.startswith(head) and text.endswith(q + ")"):
                text = text[len(head):-2]
    return text.replace("\\n", " ")
