"""Hand-built RPC programs (layers.io ListenAndServ / Send / Recv) on the pserver runtime's transport.

Server: a listen_and_serv op in a program that was not transpiled. It serves a fixed world of `Fanin`
clients on a wire listener at its endpoint (backends/wire; port 0 picks a free port; it is written to
/tmp/paddle.<pid>.port as soon as the endpoint listens, as Paddle's server does: layer_listen.py). Each
round, in sync mode (the only mode the layers build):

  layer_send(tid, names, tensors)   variables staged for the round
  layer_barrier(tid)                this client has sent its round; answered once every client still in
                                    the job has, the variables are in the scope and the sub-block ran
  layer_get(tid, names)             copies of scope variables (after this client's round ran: a get
                                    with staged variables and no barrier is the barrier)
  layer_fetch_barrier(tid)          answered at once: gets already wait for their round
  done / abort                      the client's Executor.close() or exit, as in pserver mode

Readers (layer_reader.py: lookup_table / nce with remote_prefetch, recv_save) are not clients: they connect as
"reader|...", take no part in rounds, and may only read:
  layer_rows(table, ids)            rows of a scope variable (Paddle's prefetch of a table)
  layer_vars(names)                 copies of scope variables, without waiting for a round

Clients: layer_client.py.

As in Paddle, SIGINT stops the server and its exe.run returns. Where we differ from Paddle: the server also
returns once every client is done (Paddle's ran until stopped), and a round's variables are copied into
the scope only when the round is complete.
"""

import warnings

import torch

from ...ir import Program
from ..lowering.codegen import lower_block

from ..wire import server as wire_server
from . import layer_listen
from .layer_reader import READER
from .errors import PsError, deadline_s, fail_future
from .membership import Membership, next_job
from .rounds import Round, RoundServer

__all__ = ["LayerServer", "digest"]

SYNC = 0


def digest(fanin):
    return "layers.io rpc, %d client(s)" % fanin


class _Round(Round):
    def __init__(self):
        super().__init__()      # waiting: client -> [futures answered when the round ran]
        self.vars = {}
        self.sent = set()       # clients with variables staged


class LayerServer(RoundServer):
    noun = "client"

    def __init__(self, op, program, scope, device, executor):
        self.endpoint = op.attrs.get("endpoint")
        if not isinstance(self.endpoint, str) or ":" not in self.endpoint:
            raise PsError("listen_and_serv: endpoint must be 'ip:port', got %r" % (self.endpoint,))
        mode = int(op.attrs.get("distributed_mode", SYNC))
        if mode != SYNC:
            raise PsError("listen_and_serv at %s: distributed_mode %d in a program that was not transpiled; "
                          "hand-built servers (layers.io.ListenAndServ) run sync mode (0) only"
                          % (self.endpoint, mode))
        self.fanin = int(op.attrs.get("Fanin", 1))
        blocks = op.attrs.get("optimize_blocks") or []
        self.blocks = [b if isinstance(b, int) else b.idx for b in blocks]
        self.program, self.scope, self.device, self.executor = program, scope, device, executor
        self._init_rounds("server %s" % self.endpoint, self.fanin, elastic=False)
        self.fns = {}
        self.op = op
        self.early = False
        self.readers = 0        # reader connections admitted (not clients; see layer_reader.py)

    # serving ---------------------------------------------------------------------------------------
    def _initial_values(self):
        """What the server's main program computed before listen_and_serv (Paddle's tests fill the variable
        they receive there): those ops run again into the scope, since the main run keeps them local. Names
        already in the scope (the startup program's) are left as they are."""
        gb = self.op.block
        before = gb.ops[:gb.ops.index(self.op)]
        names = []
        for o in before:
            names += [n for n in o.output_arg_names if n not in names]
        names = [n for n in names if self.scope.find_var(n) is None or self.scope.find_var(n).value is None]
        if not names:
            return
        prog = Program()
        pb = prog.global_block()
        for v in gb.vars.values():
            pb.vars[v.name] = v._copy_meta_to(pb)
        for o in before:
            pb.ops.append(o.copy_to(pb))
        prog._bump()
        try:
            values = lower_block(prog, 0, self.scope, self.device, fetch_names=names, executor=self.executor)([])
        except Exception as e:     # e.g. ops reading a feed: the block then sees only what clients send
            warnings.warn("listen_and_serv at %s: the ops before it could not run again (%s: %s); its block "
                          "sees only the scope and what clients send" % (self.endpoint, type(e).__name__, e))
            return
        for n, (v, _lod) in zip(names, values):
            self.scope.var(n).value = v

    def serve(self):
        layer_listen.signal_guard()
        try:
            if not layer_listen.stop_requested():
                self._serve()
            else:                                     # a SIGINT came while torch was loading
                sock = layer_listen.take(self.endpoint)
                if sock is not None:
                    sock.close()
        finally:
            layer_listen.remove_port_file()
            layer_listen.release()

    def _serve(self):
        handlers = {"layer_send": self._send, "layer_barrier": self._barrier, "layer_get": self._get,
                    "layer_fetch_barrier": lambda tid: True, "done": self._peer_done, "abort": self._peer_abort,
                    "layer_rows": self._rows, "layer_vars": self._read}
        limit = deadline_s()
        interrupted = False
        sock = layer_listen.take(self.endpoint)
        self.early = sock is not None
        try:
            layer_listen.serving(True)
            if layer_listen.stop_requested():
                raise KeyboardInterrupt
            try:
                if sock is None:
                    sock = wire_server.bind(self.endpoint)
            except OSError as e:
                raise PsError("listen_and_serv cannot listen on its endpoint %s: %s (is the port taken, or the "
                              "address not this machine's?)" % (self.endpoint, e)) from None
            self.endpoint = "%s:%d" % (self.endpoint.rpartition(":")[0], sock.getsockname()[1])  # (port 0: chosen)
            self.name = "server %s" % self.endpoint
            self.members = Membership("server %s" % self.endpoint, self.fanin, digest(self.fanin), elastic=False,
                                      noun="client", job=next_job("pserver", [self.endpoint]))
            self.server = wire_server.Server(self.endpoint, "server %s" % self.endpoint, "server 0|%s"
                                             % digest(self.fanin), handlers, admit=self._admit,
                                             on_close=self._closed, sock=sock, serve=False)
            self._listening()
            self._serve_until_done(limit)
        except KeyboardInterrupt:
            # SIGINT / SIGTERM stop the server and exe.run returns, as Paddle's listen_and_serv (its handler)
            interrupted = True
        except BaseException as e:
            self.failure = self.failure or "server %s failed: %s: %s" % (self.endpoint, type(e).__name__, e)
            raise
        finally:
            layer_listen.serving(False)
            self._close_server(limit, self.failure, drain=not interrupted)

    def _listening(self):
        # the port first (unless it was announced when Executor.run began), then the values: no client's call
        # is answered before serve()
        if not self.early:
            layer_listen.write_port_file(self.server.address[1])
        self._initial_values()

    def _overdue_message(self, r, missing, limit):
        return ("server %s: round %d: client(s) %s sent no barrier within %.0fs (FLAGS_rpc_deadline) while "
                "client(s) %s waited" % (self.endpoint, self.step, missing, limit, sorted(r.waiting)))

    # readers ---------------------------------------------------------------------------------------
    def _admit(self, identity, peer):
        if identity.partition("|")[0] == READER:
            with self.lock:
                self.readers += 1
            return READER
        return super()._admit(identity, peer)

    def _closed(self, tid, peer, reason):
        if tid != READER:       # a reader leaving is no client lost
            super()._closed(tid, peer, reason)

    def _check_members(self, limit):
        # a server read by readers serves them until it is stopped (SIGINT), as Paddle's did, even if its
        # Fanin clients never come
        if not self.readers:
            super()._check_members(limit)

    def _rows(self, table, ids):
        with self.lock:
            h = self.scope.find_var(table)
            t = getattr(h, "value", None)
            if not isinstance(t, torch.Tensor) or t.is_sparse:
                raise PsError("server %s holds no dense table '%s' to read rows of" % (self.endpoint, table))
            ids = ids.reshape(-1).long()
            if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= t.shape[0]):
                raise PsError("server %s: ids %d..%d asked of table '%s', which has %d rows"
                              % (self.endpoint, int(ids.min()), int(ids.max()), table, t.shape[0]))
            return t.detach().index_select(0, ids.to(t.device)).cpu()

    # handlers --------------------------------------------------------------------------------------
    def _check(self, tid):
        self.check_failed()
        if tid in self.done:
            raise PsError("server %s: client %d called after its Executor.close()" % (self.endpoint, tid))

    def _send(self, tid, names, tensors):
        self._check(tid)
        with self.lock:
            r = self.current_round()
            if tid in r.waiting:
                raise PsError("server %s: client %d sent variables %s after its barrier of round %d"
                              % (self.endpoint, tid, list(names), self.step))
            for n, t in zip(names, tensors):
                r.vars[n] = t
            r.sent.add(tid)
        return True

    def _barrier(self, tid):
        self._check(tid)
        fut = torch.futures.Future()
        with self.lock:
            self.current_round().waiting.setdefault(tid, []).append(fut)
            self._finish_round()
        return fut

    def _get(self, tid, names):
        self._check(tid)
        with self.lock:
            r = self.round
            if r is None or tid not in r.sent:
                return self._read(names)
            ran = self._barrier(tid)
        out = torch.futures.Future()

        def after(f):
            try:
                f.value()
            except Exception as e:                 # the round failed: pass its error on
                fail_future(out, e)
                return
            try:
                out.set_result(self._read(names))
            except Exception as e:
                fail_future(out, e)
        ran.add_done_callback(after)
        return out

    def _read(self, names):
        out = []
        with self.lock:
            for n in names:
                h = self.scope.find_var(n)
                if h is None or h.value is None:
                    written = [w for idx in self.blocks for w in self._written_by(idx)]
                    raise PsError("server %s holds no variable '%s' (no client sent it and the server block "
                                  "did not write it; the block writes: %s)"
                                  % (self.endpoint, n, ", ".join(written) or "nothing"))
                out.append(h.value.detach().clone().cpu())
        return out

    def _new_round(self):
        return _Round()

    def _finish_round(self):
        r = self.take_complete_round()
        if r is None:
            return
        try:
            self._run(r.vars)
        except Exception as e:
            self.fail("server %s: its block failed in round %d: %s: %s"
                       % (self.endpoint, self.step, type(e).__name__, e))
            return
        self.step += 1
        for futs in r.waiting.values():
            for fut in futs:
                fut.set_result(True)

    def _run(self, received):
        for n, t in received.items():
            self.scope.var(n).value = t.to(self.device) if self.device != "cpu" else t
        for idx in self.blocks:
            fn = self.fns.get(idx)
            if fn is None:
                outs = self._written_by(idx)
                fn = self.fns[idx] = (lower_block(self.program, idx, self.scope, self.device, fetch_names=outs,
                                                  executor=self.executor), outs)
            lowered, outs = fn
            for n, (v, _lod) in zip(outs, lowered([])):
                self.scope.var(n).value = v

    def _written_by(self, idx):
        names = []
        for op in self.program.block(idx).ops:
            names += [n for n in op.output_arg_names if n not in names]
        return names
