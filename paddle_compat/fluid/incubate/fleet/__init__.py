"""Fleet: `fleet.base` (Fleet, DistributedOptimizer, role makers), `fleet.collective` (nccl2 / collective
training), `fleet.parameter_server` (transpiler-based parameter-server training)."""
