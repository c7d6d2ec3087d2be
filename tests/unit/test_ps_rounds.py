"""The round core both pserver runtimes stand on (backends/ps/rounds.py)."""

import pytest
import torch

from paddle_compat.backends.ps.errors import PsError
from paddle_compat.backends.ps.rounds import Round, RoundServer


class _Members:
    def __init__(self):
        self.events = []

    def done(self, tid):
        self.events.append(("done", tid))

    def aborted(self, tid, reason):
        self.events.append(("aborted", tid))

    def all_finished(self):
        return False


class _Server(RoundServer):
    noun = "client"

    def __init__(self, fanin, elastic=False):
        self._init_rounds("server test:1", fanin, elastic)
        self.members = _Members()
        self.ran = []

    def _new_round(self):
        return Round()

    def _finish_round(self):
        r = self.take_complete_round()
        if r is not None:
            self.ran.append(sorted(r.waiting))
            for f in r.futures():
                f.set_result(True)

    def _overdue_message(self, r, missing, limit):
        return "late: %s" % missing

    def wait(self, tid):
        fut = torch.futures.Future()
        with self.lock:
            self.current_round().waiting.setdefault(tid, []).append(fut)
            self._finish_round()
        return fut


def test_a_round_runs_once_every_peer_still_in_the_job_waits():
    s = _Server(3)
    a, b = s.wait(0), s.wait(1)
    assert not a.done() and s.ran == []
    s._peer_done(2)                     # the last missing peer leaves: the round runs without it
    assert a.done() and b.done() and s.ran == [[0, 1]] and s.round is None
    assert s.wait(0).done() is False and s.wait(1).done() and s.ran[-1] == [0, 1]


def test_the_first_failure_answers_every_waiter_and_ends_serving():
    s = _Server(2)
    f = s.wait(0)
    s._peer_abort(1, "it crashed")
    with pytest.raises(PsError, match="server test:1: client 1 failed: it crashed"):
        f.wait()
    s.fail("a second failure")
    assert s.finished.is_set() and s.failure == "server test:1: client 1 failed: it crashed"
    with pytest.raises(PsError, match="client 1 failed"):
        s.check_failed()


def test_an_overdue_round_fails_naming_who_is_missing():
    s = _Server(3)
    f = s.wait(1)
    s._check_deadline(3600.0)
    assert not f.done()
    s.round.started -= 10.0
    s._check_deadline(5.0)
    with pytest.raises(PsError, match=r"late: \[0, 2\]"):
        f.wait()


def test_elastic_peers_that_abort_are_not_waited_for():
    s = _Server(2, elastic=True)
    s._peer_abort(1, "left")
    assert s.failure is None and 1 in s.done
    s.members.admit = lambda identity, peer: 1
    s._admit("trainer 1", "peer")       # back with the same id: waited for again
    assert 1 not in s.done
