"""The round and lifecycle core both pserver runtimes stand on (service.py: transpiled programs;
layer_service.py: hand-built layers.io programs): who takes part (Membership), the round the peers are
waiting in, when a round is complete, the deadline on a round, failing every waiter with the first failure,
peers finishing or aborting, and serving the wire listener until the job is done.

A subclass gives: `noun` (what its peers are called), `_new_round()`, `_finish_round()` (run a complete
round; called under the lock) and `_overdue_message(round, missing, limit)`.
"""

import threading
import time

from .errors import PsError, fail_future

__all__ = ["Round", "RoundServer"]


class Round:
    """One round: the peers waiting for it to run (peer id -> what the subclass keeps for it)."""

    def __init__(self):
        self.waiting = {}
        self.started = time.monotonic()

    def futures(self):
        """The futures answered when the round runs (or fails)."""
        for w in self.waiting.values():
            yield from w


class RoundServer:
    noun = "trainer"

    def _init_rounds(self, name, fanin, elastic):
        """name: how errors name this server ("pserver <endpoint>"); fanin: the peers of a round; elastic:
        peers may leave and come back (async modes) instead of failing the job."""
        self.name, self.fanin, self.elastic = name, fanin, elastic
        self.lock = threading.RLock()
        self.round = None
        self.step = 0
        self.done = set()              # peers that finished (Executor.close()), or elastic peers that aborted
        self.failure = None
        self.finished = threading.Event()
        self.members = None
        self.server = None
        self.on_members_change = []    # extensions (the workers' barrier) hear of joins and departures

    # rounds ------------------------------------------------------------------------------------------
    def current_round(self):
        """The open round (opened now when none is); under the lock."""
        if self.round is None:
            self.round = self._new_round()
        return self.round

    def take_complete_round(self):
        """The open round once every peer still in the job waits in it (it is closed then), else None;
        under the lock."""
        r = self.round
        if r is None or not r.waiting or not set(range(self.fanin)) - self.done <= set(r.waiting):
            return None
        self.round = None
        return r

    def fail(self, msg):
        """The first failure wins: every waiter of the open round gets it and serving ends."""
        with self.lock:
            if self.failure is None:
                self.failure = msg
            r, self.round = self.round, None
            if r is not None:
                for fut in r.futures():
                    fail_future(fut, PsError(self.failure))
            self.finished.set()

    def check_failed(self):
        if self.failure:
            raise PsError(self.failure)

    def _check_deadline(self, limit):
        with self.lock:
            r = self.round
            if r is None or time.monotonic() - r.started <= limit:
                return
            missing = sorted(set(range(self.fanin)) - self.done - set(r.waiting))
            self.fail(self._overdue_message(r, missing, limit))

    # peers -------------------------------------------------------------------------------------------
    def _admit(self, identity, peer):
        tid = self.members.admit(identity, peer)
        if self.elastic:
            with self.lock:
                self.done.discard(tid)      # a peer back with the same id takes part again
        return tid

    def _closed(self, tid, peer, reason):
        lost = self.members.closed(tid, peer, reason)
        if lost is not None and not self.elastic:
            self.fail("%s: lost %s %d (%s): %s" % (self.name, self.noun, tid, peer, lost))
        self._recheck()

    def _recheck(self):
        """Membership changed: an elastic server whose peers have all finished and left is done; extensions
        (a barrier) stop waiting for peers that are gone."""
        for fn in self.on_members_change:
            fn()
        if self.elastic and self.members.all_finished():
            self.finished.set()

    def _check_members(self, limit):
        if self.elastic and self.members.all_finished():
            self.finished.set()
            return
        why = self.members.overdue(limit)
        if why:
            self.fail(why)

    def _peer_done(self, tid):
        self.members.done(tid)
        with self.lock:
            self.done.add(tid)
            if not self.elastic:
                self._finish_round()         # the round may have waited for this peer only
                if len(self.done) >= self.fanin:
                    self.finished.set()
        self._recheck()
        return True

    def _peer_abort(self, tid, reason):
        self.members.aborted(tid, reason)
        if self.elastic:
            with self.lock:
                self.done.add(tid)           # not waited for until it is back
            self._recheck()
            return True
        self.fail("%s: %s %d failed: %s" % (self.name, self.noun, tid, reason))
        return True

    # serving -----------------------------------------------------------------------------------------
    def _serve_until_done(self, limit):
        """Serve the wire listener until the job is done; raise the failure if one ended it."""
        self.server.serve()
        while not self.finished.wait(0.2):
            self._check_deadline(limit)
            self._check_members(limit)
        self.check_failed()

    def _close_server(self, limit, reason, drain=True):
        """Let the last answers (results, or the failure `reason`) reach the peers, then close every
        connection."""
        if self.server is None:
            return
        self.server.stop_listening()
        if drain:
            self.server.wait_idle(min(5.0, limit) if reason is None else min(1.0, limit))
        self.server.close(reason)
