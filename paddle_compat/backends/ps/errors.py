"""Errors of pserver mode, and the one deadline every wait obeys (FLAGS_rpc_deadline, ms)."""

import os
import re

__all__ = ["PsError", "PeerLostError", "PsDeadlineError", "deadline_s", "remote_message", "fail_future"]


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
    """The useful part of an exception that came back over RPC: no remote traceback, no worker banner,
    no TensorPipe source location."""
    text = str(exc)
    for marker in ("\nTraceback", "\n\nThe above exception", "\nAt:\n", "\n\nAt:"):
        if marker in text:
            text = text.split(marker)[0]
    text = re.sub(r"On WorkerInfo\([^)]*\):", " ", text)
    text = re.sub(r"\s*\(this error originated at [^)]*\)", "", text)
    text = " ".join(text.split())
    # torch re-raises a remote E("x") as E("E('x')") or "E: E('x')": unwrap to x
    for _ in range(3):
        m = re.match(r"^(?:\w+: )?\w*(?:Error|Exception)\((['\"])(.*)\1\)$", text)
        if not m:
            m = re.match(r"^\w*(?:Error|Exception): (.*)$", text)
            if not m:
                break
            text = m.group(1).strip()
            continue
        text = m.group(2).strip()
    return text.replace("\\n", " ")


def fail_future(fut, exc):
    """Answer a handler's Future with an error: the caller's call raises it (its kind travels: errors of this
    module, or RuntimeError naming the type; backends/wire/server.py)."""
    if not fut.done():
        fut.set_exception(exc)
