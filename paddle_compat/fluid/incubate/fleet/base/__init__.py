"""Fleet's common base: the Fleet and DistributedOptimizer base classes and the role makers."""
