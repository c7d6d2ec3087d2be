"""Who is connected to a pserver (or a hand-built server), what a closed connection means, and when serving
ends. Each trainer holds one wire connection to each pserver; the identity it proved at the handshake is
"trainer <id>|<plan digest>|<job number>": a script may run several jobs in turn on the same endpoints
(tests do), and the job number (how many this process served, or joined, on those endpoints before) keeps a
trainer of the next job from joining a pserver still finishing the last one: it is told to connect again.

Sync mode is a fixed world: every trainer must connect within FLAGS_rpc_deadline of the pserver starting
(else the error names who never arrived), a trainer whose connection closes before it said `done` is lost and
the job fails naming it, and serving ends when every trainer is done.

Async, half-async and Geo-SGD are elastic: a trainer may connect late, leave (done, crash, kill -9) and come
back with the same id; a connection that closes without `done` is logged as vanished and the others are
served on. Serving ends when every trainer id has finished (done) at least once and none is connected. With
no trainer connected for FLAGS_rpc_deadline while some id has not finished, the pserver ends with an error
naming those ids (vanished, failed or never connected) instead of waiting forever.
"""

import logging
import threading
import time

import collections

from ..wire.auth import Refused, TryLater

__all__ = ["Membership", "next_job"]

_LOG = logging.getLogger("paddle_compat.ps")
_JOBS = collections.Counter()


def next_job(role, endpoints):
    """How many jobs this process served (role "pserver") or joined (role "trainer") on these endpoints
    before: each side counts its own, and they agree job by job."""
    key = (role, tuple(endpoints))
    n = _JOBS[key]
    _JOBS[key] += 1
    return n


class Membership:
    def __init__(self, where, trainers, digest, elastic, noun="trainer", job=0):
        self.where = where                    # "pserver 127.0.0.1:6170": starts every message
        self.trainers, self.digest, self.elastic, self.noun = int(trainers), digest, bool(elastic), noun
        self.job = job
        self.lock = threading.Lock()
        self.live = {}                        # id -> peer address of its one live connection
        self.ever = set()                     # ids that ever connected
        self.finished = set()                 # ids that said `done` (elastic: at least once)
        self.said_done = set()                # ids whose live connection said `done` (or `abort`)
        self.left = {}                        # elastic: id -> why it left without finishing
        self.started = self.idle_since = time.monotonic()

    def describe(self, tid):
        peer = self.live.get(tid)
        return "%s %d (%s)" % (self.noun, tid, peer) if peer else "%s %d" % (self.noun, tid)

    # the server's hooks ----------------------------------------------------------------------------------
    def admit(self, identity, peer):
        who, _, rest = identity.partition("|")
        digest, _, job = rest.rpartition("|")
        parts = who.split()
        if len(parts) != 2 or parts[0] != "trainer" or not parts[1].isdigit() or not job.isdigit():
            raise Refused("%s serves this job's trainers; %s (%r) is not one" % (self.where, peer, who))
        tid, job = int(parts[1]), int(job)
        if job > self.job:
            # this process's next job: the serving of this one ends soon (a script running several jobs)
            raise TryLater("%s is still serving job %d of its script, %s %d comes for job %d; connect again"
                           % (self.where, self.job, self.noun, tid, job))
        if job < self.job:
            raise Refused("%s serves job %d of its script, %s %d comes for job %d (a process restarted in a "
                          "script that runs several jobs?)" % (self.where, self.job, self.noun, tid, job))
        if digest != self.digest:
            raise Refused("%s and %s %d were transpiled differently (different model, pserver list, trainer count, "
                          "sync mode or split_method): they would exchange the wrong blocks"
                          % (self.where, self.noun, tid))
        if not 0 <= tid < self.trainers:
            raise Refused("%s: %s id %d is not one of the job's %d %ss (check PADDLE_TRAINER_ID)"
                          % (self.where, self.noun, tid, self.trainers, self.noun))
        with self.lock:
            if tid in self.live:
                # elastic: a restarted trainer may come before its old connection is known to be gone (a host
                # that vanished is noticed by keepalive): it connects again until its deadline
                raise (TryLater if self.elastic else Refused)(
                    "two processes claim to be %s %d of this job (%s is connected, %s tried too): check "
                    "PADDLE_TRAINER_ID / the endpoints each process is given" % (self.noun, tid, self.live[tid], peer))
            if not self.elastic and tid in self.finished:
                raise Refused("%s: %s %d already finished (Executor.close()); a sync job is a fixed world and "
                              "does not take it back" % (self.where, self.noun, tid))
            self.live[tid] = peer
            self.ever.add(tid)
            self.said_done.discard(tid)
            back = self.left.pop(tid, None)
        if back is not None:
            _LOG.warning("%s: %s %d (%s) is back (it had left: %s)", self.where, self.noun, tid, peer, back)
        return tid

    def closed(self, tid, peer, reason):
        """A connection closed: None if that is normal (done said, or the server is closing), else the
        reason it counts as lost (sync) or vanished (elastic, logged here)."""
        with self.lock:
            if self.live.get(tid) == peer:
                del self.live[tid]
            normal = tid in self.said_done
            self.said_done.discard(tid)
            if not self.live:
                self.idle_since = time.monotonic()
            if normal or reason == "this side closed":
                return None
            why = "its process died or its connection broke (%s without Executor.close())" % reason
            if self.elastic:
                self.left[tid] = why
        if self.elastic:
            _LOG.warning("%s: %s %d (%s) vanished: %s; serving the others; it may rejoin with the same id",
                         self.where, self.noun, tid, peer, reason + " without Executor.close()")
        return why

    # what trainers say ---------------------------------------------------------------------------------
    def done(self, tid):
        with self.lock:
            self.finished.add(tid)
            self.said_done.add(tid)

    def aborted(self, tid, reason):
        """A trainer failed (elastic: logged, and it may come back; sync: the caller fails the job)."""
        with self.lock:
            self.said_done.add(tid)
            if self.elastic:
                self.left[tid] = "it failed: %s" % reason
        if self.elastic:
            _LOG.warning("%s: %s %d failed: %s; serving the others; it may rejoin with the same id",
                         self.where, self.noun, tid, reason)

    # ending ----------------------------------------------------------------------------------------------
    def live_ids(self):
        with self.lock:
            return set(self.live)

    def all_finished(self):
        with self.lock:
            done = len(self.finished) >= self.trainers
            return done and (not self.elastic or not self.live)

    def overdue(self, limit):
        """The error ending the serving when trainers are waited for past FLAGS_rpc_deadline, else None."""
        now = time.monotonic()
        with self.lock:
            if self.elastic:
                if self.live or now - self.idle_since <= limit:
                    return None
                missing = sorted(set(range(self.trainers)) - self.finished)
                if not missing:
                    return None
                why = ["%s %d %s" % (self.noun, t, ("left: " + self.left[t]) if t in self.left else
                                     ("never connected" if t not in self.ever else "did not finish"))
                       for t in missing]
                return ("%s: no %s connected for %.0fs (FLAGS_rpc_deadline) while %s(s) %s have not finished: %s; "
                        "none came back" % (self.where, self.noun, limit, self.noun, missing, "; ".join(why)))
            if now - self.started <= limit:
                return None
            never = sorted(set(range(self.trainers)) - self.ever)
            if not never:
                return None
            return ("%s waited %.0fs (FLAGS_rpc_deadline) for the job's %ss; never arrived: %s. Start every "
                    "pserver and %s (%ss=%d), with the same job key"
                    % (self.where, limit, self.noun, ", ".join("%s %d" % (self.noun, t) for t in never), self.noun,
                       self.noun, self.trainers))
