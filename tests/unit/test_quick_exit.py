"""Exiting a process that loaded torch without the final GC walks over its objects (backends/quick_exit.py),
and no full collections at exit in comm's release when no collective group was made."""

import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# an atexit handler registered before the lowering is imported runs after the freeze (LIFO): it sees it
_PROBE = ("import atexit, gc\n"
          "atexit.register(lambda: print('FROZEN', gc.get_freeze_count() > 0, flush=True))\n"
          "import paddle_compat.backends.lowering.codegen\n")


def _frozen_at_exit(extra_env):
    env = dict(os.environ, PYTHONPATH=REPO, **extra_env)
    out = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("FROZEN")]
    assert len(lines) == 1, out.stdout
    return lines[0] == "FROZEN True"


def test_lowering_freezes_gc_at_exit():
    assert _frozen_at_exit({"PADDLE_COMPAT_FULL_EXIT_GC": "0"})


def test_full_exit_gc_switch_keeps_the_collections():
    assert not _frozen_at_exit({"PADDLE_COMPAT_FULL_EXIT_GC": "1"})


def test_comm_release_without_groups_collects_nothing(monkeypatch):
    from paddle_compat.backends import comm
    calls = []
    monkeypatch.setattr(comm.gc, "collect", lambda *a: calls.append(a))
    monkeypatch.setattr(comm, "_rings", {})
    monkeypatch.setattr(comm, "_live", [])
    monkeypatch.setattr(comm, "_stores", {})
    monkeypatch.setattr(comm, "_servers", [])
    comm._release()
    assert calls == []
    # with a group alive it still drops it and collects (a gloo group must go before C++ teardown)
    monkeypatch.setattr(comm, "_live", [type("C", (), {"pending": [1], "pg": object()})()])
    comm._release()
    assert len(calls) == 2
