"""Backends: give the recorded op types meaning on torch (lowering), our wire transport (ps) and
torch.distributed process groups (collective). They import the IR and the op table, never the front end."""
