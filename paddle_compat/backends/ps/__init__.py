"""Pserver mode on torch.distributed.rpc.

  auth.py      what an RPC listener accepts: messages signed with the job token, an allow-list unpickler
  group.py     the process's RPC group (pservers + trainers): rendezvous at pserver 0's endpoint, liveness
               watches, deadlines, leaving
  rpc_entry.py the module-level functions RPC calls by reference; they dispatch to a registry of handlers
  service.py   the pserver: its blocks in its scope, the handlers (exchange, done, pull_state, ...), sync rounds
  optimize.py  the pserver's optimize sub-blocks, lowered once, applied to received gradients
  client.py    the trainer: one RPC per pserver per step, overlapped across pservers
  comm_plan.py how a lowered block's send/recv/barrier ops batch into those RPCs
Only this package imports torch.distributed.rpc.
"""
