"""The process's RPC group: every pserver and trainer of one job (world size P + T; pservers are ranks
0..P-1 in endpoint order, trainers P..P+T-1).

Rendezvous is a TCPStore hosted at pserver 0's endpoint; the other pservers listen on their endpoints too
(so a taken port fails at once, and trainers can check that each pserver is up). Before init_rpc every
member announces itself in the store, so a member that never comes is named in the error (init_rpc would
only time out), and the placement digests are compared (trainers and pservers transpiled differently
would otherwise exchange the wrong blocks).

Liveness: after joining, each trainer keeps one pending `watch` RPC on every pserver and each pserver on
every trainer. The callee never answers it until it leaves; if its process dies, TensorPipe fails the
pending call at once, so the peer is known lost in well under a second instead of at a deadline.
"""

import atexit
import os
import socket
import threading
import time
import warnings
from datetime import timedelta

import torch.distributed as dist
import torch.distributed.rpc as rpc

from .. import netif, store_gate
from . import auth, rpc_entry, rpc_guard
from .errors import PsError, deadline_s, remote_message

__all__ = ["Group", "get_group", "pserver_name", "trainer_name"]

_GROUP = None
_GROUP_LOCK = threading.Lock()


def pserver_name(i):
    return "pserver_%d" % i


def trainer_name(i):
    return "trainer_%d" % i


def _split(ep):
    host, _, port = ep.rpartition(":")
    return host, int(port)


def get_group(endpoints, trainers, role, index, digest):
    """The process's group; one process is one member of one job at a time."""
    global _GROUP
    with _GROUP_LOCK:
        g = _GROUP
        if g is not None and g.key() != (tuple(endpoints), trainers, role, index) and g.active:
            raise PsError("this process is already %s of a job with pservers %s; one process can be one "
                          "pserver or trainer at a time" % (g.describe(g.name), ",".join(g.endpoints)))
        if g is None or g.key() != (tuple(endpoints), trainers, role, index):
            old_store = g._store if g is not None else None
            g = _GROUP = Group(endpoints, trainers, role, index, digest)
            if old_store is not None and g.role == "pserver" and g.index == 0:
                g._store = old_store
        g.digest = digest
        return g


class Group:
    def __init__(self, endpoints, trainers, role, index, digest):
        self.endpoints = list(endpoints)
        self.trainers = int(trainers)
        self.role, self.index, self.digest = role, int(index), digest
        self.world = len(self.endpoints) + self.trainers
        self.rank = self.index if role == "pserver" else len(self.endpoints) + self.index
        self.name = pserver_name(self.index) if role == "pserver" else trainer_name(self.index)
        self.session = 0
        self.active = False
        self.leaving = False
        self.lost = {}
        self.done_peers = set()
        self.listeners = []
        self._watch_futs = {}
        self._store = None
        self._beacon = None
        self._guard = None
        self._cond = threading.Condition()

    def key(self):
        return (tuple(self.endpoints), self.trainers, self.role, self.index)

    # names -----------------------------------------------------------------------------------------
    def member_name(self, rank):
        p = len(self.endpoints)
        return pserver_name(rank) if rank < p else trainer_name(rank - p)

    def describe(self, name):
        if name.startswith("pserver_"):
            i = int(name[len("pserver_"):])
            return "pserver %d (%s)" % (i, self.endpoints[i])
        return name.replace("_", " ")

    @property
    def peers(self):
        """The members this one depends on: trainers need the pservers, pservers the trainers."""
        if self.role == "pserver":
            return [trainer_name(i) for i in range(self.trainers)]
        return [pserver_name(i) for i in range(len(self.endpoints))]

    # joining ---------------------------------------------------------------------------------------
    def join(self, wait_port=True, on_listening=None, listen_sock=None):
        """on_listening(): called (pserver) as soon as the endpoint listens, before the wait for the other
        members (a server given port 0 has its port in self.endpoints by then). listen_sock: pserver 0's
        endpoint, already bound and listening."""
        if self.active:
            return
        limit = deadline_s()
        deadline = time.monotonic() + limit
        if self.role == "pserver":
            self._listen(limit, on_listening or (lambda: None), listen_sock)
        elif wait_port:
            self._wait_ports(deadline, limit)
        store = self._store_client(deadline, limit)
        # keys live under a name derived from the job's token: a process holding another token (or none
        # when the job has one) never sees or disturbs this job's rendezvous
        prefix = "paddle_compat/%s/s%d/" % (auth.namespace(), self.session)
        if store.add(prefix + "claims/%d" % self.rank, 1) > 1:
            raise PsError("two processes claim to be %s of this job (check PADDLE_TRAINER_ID / the pserver "
                          "endpoints each process is given)" % self.describe(self.name))
        store.set(prefix + "member/%d" % self.rank, "%s|%s" % (self.name, self.digest))
        self._await_members(store, prefix, deadline, limit)
        host0, port0 = _split(self.endpoints[0])
        # init_rpc's own rendezvous (worker names, TensorPipe addresses, its gloo group) goes through this
        # store, under the job's namespace: it never opens an unauthenticated connection of its own
        url = "%s://%s/%d" % (_RPC_SCHEME, auth.namespace(), self.session)
        rpc_store = dist.PrefixStore(prefix + "rpc/", store)
        # a pserver listens on its endpoint's interface; a trainer on the one that reaches pserver 0
        address = (_split(self.endpoints[self.index])[0] if self.role == "pserver"
                   else netif.address_towards(host0, port0))
        _pin_rpc_interface(address)
        # TensorPipe's uv (TCP) transport: its default on one machine, shm, busy-polls a core per process
        # (a 2-pserver + 2-trainer job on a small machine then spends most of its CPU spinning), and a
        # real cluster talks TCP anyway.
        kw = {}
        if self._guard is not None:
            self._guard.close()
            self._guard = None
        if rpc_guard.enabled():
            # only the channels that talk over the pipe's own connections: mpt_uv opens listeners of its
            # own, whose addresses travel inside TensorPipe's handshake where the guard cannot see them
            kw["_channels"] = ["cma", "basic"]
            self._guard = rpc_guard.Guard(address or "127.0.0.1", self.describe(self.name), self.name)
            rpc_store = rpc_guard.GuardedStore(rpc_store, self._guard, self.name)
        _RPC_STORES[url] = rpc_store
        opts = rpc.TensorPipeRpcBackendOptions(init_method=url, rpc_timeout=limit, num_worker_threads=8,
                                               _transports=["uv"], **kw)
        auth.install(self.name)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*ProcessGroup.*")
            rpc.init_rpc(self.name, rank=self.rank, world_size=self.world, rpc_backend_options=opts)
        self.session += 1
        if self._guard is not None and self._guard.tp is None:
            # TensorPipe never published its address under the key the guard watches (a torch whose store
            # keys differ): refuse to run with an unguarded listener rather than pretend
            rpc.shutdown(graceful=False)
            raise PsError("%s: the RPC guard did not see TensorPipe publish its listener's address, so it "
                          "could not guard it; set %s=0 to run unguarded"
                          % (self.describe(self.name), rpc_guard.ENV))
        with self._cond:
            self.active, self.leaving = True, False
            self.lost, self.done_peers, self._watch_futs = {}, set(), {}
        for peer in self.peers:
            fut = rpc.rpc_async(peer, rpc_entry.watch, args=(self.name,), timeout=0)
            self._watch_futs[peer] = fut
            fut.add_done_callback(lambda f, peer=peer: self._watch_ended(peer, f))
        if self._guard is not None:
            self._guard.settle()

    def _listen(self, limit, on_listening, listen_sock=None):
        host, port = _split(self.endpoints[self.index])
        if self.index == 0:
            if self._store is None:
                def bound(got):
                    if port == 0:   # a server given port 0 (layers.io.ListenAndServ) learns its port here
                        self.endpoints[0] = "%s:%d" % (host, got)
                    on_listening()
                # pserver 0's own address only (TCPStore alone would listen on every interface), and there
                # the token gate: the store itself listens on a private loopback port behind it
                try:
                    back = store_gate.serve(host, port, "pserver 0's rendezvous (%s)" % self.endpoints[0], bound,
                                            front=listen_sock)
                except OSError as e:
                    raise PsError("pserver 0 cannot listen on its endpoint %s: %s (is the port taken, or the "
                                  "address not this machine's?)" % (self.endpoints[0], e)) from None
                back_port = back.getsockname()[1]
                self._store = dist.TCPStore("127.0.0.1", back_port, None, True,
                                            timedelta(seconds=limit), multi_tenant=True,
                                            master_listen_fd=back.detach())
                try:    # our own client is connected: from now on only the gate's connections get through
                    store_gate.store_started(back_port)
                except RuntimeError as e:
                    raise PsError("pserver 0 (%s): %s" % (self.endpoints[0], e)) from None
            else:
                on_listening()
            return
        if self._beacon is None:
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind((host, port))
            except OSError as e:
                s.close()
                raise PsError("pserver %d cannot listen on its endpoint %s: %s (is the port taken, or the "
                              "address not this machine's?)" % (self.index, self.endpoints[self.index], e)) from None
            s.listen(64)
            self._beacon = s
            threading.Thread(target=_serve_beacon, args=(s,), daemon=True, name="pserver-beacon").start()
        on_listening()

    def _wait_ports(self, deadline, limit):
        """Paddle's wait_port: every pserver endpoint accepts connections, or name those that never did."""
        pending = list(self.endpoints)
        while pending:
            for ep in list(pending):
                try:
                    socket.create_connection(_split(ep), timeout=1.0).close()
                    pending.remove(ep)
                except OSError:
                    pass
            if pending and time.monotonic() > deadline:
                raise PsError("trainer %d cannot reach pserver(s) %s: nothing accepted a connection for %.0fs "
                              "(FLAGS_rpc_deadline); are they started, and are the endpoints right?"
                              % (self.index, ", ".join(pending), limit))
            if pending:
                time.sleep(0.2)

    def _store_client(self, deadline, limit):
        if self._store is not None:
            return self._store
        host0, port0 = _split(self.endpoints[0])
        left = max(1.0, deadline - time.monotonic())
        try:
            local_port = store_gate.connect(host0, port0, left, "pserver 0's rendezvous")
            self._store = dist.TCPStore("127.0.0.1", local_port, None, False, timedelta(seconds=left))
        except store_gate.GateRefused as e:
            raise PsError("%s: %s" % (self.describe(self.name), e)) from None
        except Exception as e:
            raise PsError("%s cannot reach pserver 0 at %s (it hosts the rendezvous) within %.0fs "
                          "(FLAGS_rpc_deadline): %s" % (self.describe(self.name), self.endpoints[0], limit,
                                                        remote_message(e))) from None
        return self._store

    def _check(self, store, keys):
        try:
            return store.check(keys)
        except Exception as e:
            # pserver 0 closed the rendezvous: its job ended without this process (or holds another token)
            raise PsError("%s lost the rendezvous at pserver 0 (%s) before the job's other processes arrived: "
                          "%s. Did that job finish already, and does this process hold the job's %s?"
                          % (self.describe(self.name), self.endpoints[0], remote_message(e), auth.TOKEN_ENV)) from None

    def _await_members(self, store, prefix, deadline, limit):
        keys = [prefix + "member/%d" % r for r in range(self.world)]
        while not self._check(store, keys):
            if time.monotonic() > deadline:
                missing = [self.describe(self.member_name(r)) for r, k in enumerate(keys) if not store.check([k])]
                raise PsError("%s waited %.0fs (FLAGS_rpc_deadline) for the job's other processes; never "
                              "arrived: %s. Start every pserver and trainer (trainers=%d, pservers=%s), with the same %s"
                              % (self.describe(self.name), limit, ", ".join(missing), self.trainers,
                                 ",".join(self.endpoints), auth.TOKEN_ENV))
            time.sleep(0.05)
        for r, k in enumerate(keys):
            name, _, digest = store.get(k).decode().partition("|")
            if digest != self.digest:
                raise PsError("%s and %s were transpiled differently (different model, pserver list, trainer "
                              "count, sync mode or split_method): they would exchange the wrong blocks"
                              % (self.describe(self.name), self.describe(name)))

    # liveness --------------------------------------------------------------------------------------
    def _watch_ended(self, peer, fut):
        with self._cond:
            if self.leaving or not self.active or peer in self.done_peers:
                return
            try:
                why = fut.value()
                reason = ("it stopped: %s" % why) if why else "it left the job without finishing (no Executor.close())"
            except Exception as e:  # its process died or its connection broke
                reason = "its process died or its connection broke (%s)" % remote_message(e)
            self.lost[peer] = reason
            listeners = list(self.listeners)
            self._cond.notify_all()
        for fn in listeners:
            fn(peer, reason)

    def mark_done(self, peer):
        with self._cond:
            self.done_peers.add(peer)

    def lost_message(self):
        with self._cond:
            return "; ".join("lost %s: %s" % (self.describe(p), r) for p, r in sorted(self.lost.items()))

    def wait_gone(self, peers, timeout):
        """Wait (bounded) until these peers have left, so our answers to them are delivered."""
        end = time.monotonic() + timeout
        for p in peers:
            fut = self._watch_futs.get(p)
            while fut is not None and not fut.done() and time.monotonic() < end:
                time.sleep(0.01)

    # leaving ---------------------------------------------------------------------------------------
    def leave(self, reason=None):
        """Leave the group; `reason` (a failure) reaches the peers that still watch us."""
        with self._cond:
            if not self.active:
                return
            self.leaving = True
        rpc_entry.release_watchers(reason)
        try:
            rpc.shutdown(graceful=False)
        finally:
            with self._cond:
                self.active = False
            if self._guard is not None:
                self._guard.close()
                self._guard = None
            rpc_entry.clear_handlers()


_RPC_SCHEME = "paddle-compat-job"
_RPC_STORES = {}


def _rpc_rendezvous(url, rank=-1, world_size=-1, **kwargs):
    store = _RPC_STORES.get(url.split("?", 1)[0])     # torch appends ?rank=..&world_size=..
    if store is None:
        raise ValueError("no rendezvous store registered for %s" % url)
    yield store, rank, world_size


dist.register_rendezvous_handler(_RPC_SCHEME, _rpc_rendezvous)


def _pin_rpc_interface(address):
    """Make TensorPipe listen on the interface carrying this member's address: left alone it binds whatever
    the hostname resolves to (a job configured on 127.0.0.1 would listen on the LAN). A user's own
    TP_SOCKET_IFNAME wins."""
    if address and "TP_SOCKET_IFNAME" not in os.environ:
        name = netif.iface_for(address)
        if name:
            os.environ["TP_SOCKET_IFNAME"] = name


def _serve_beacon(sock):
    while True:
        try:
            conn, _ = sock.accept()
            conn.close()
        except OSError:
            return


@atexit.register
def _leave_at_exit():
    g = _GROUP
    if g is not None and g.active:
        try:
            g.leave()
        except Exception:
            pass
