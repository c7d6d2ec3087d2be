"""Backends: give the recorded op types meaning on torch (lowering), torch.distributed.rpc (ps) and
torch.distributed process groups (collective). They import the IR and the op table, never the front end."""
