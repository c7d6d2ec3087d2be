"""Placeholder until the pserver-mode issue lands: config object only."""


class DistributeTranspilerConfig:
    slice_var_up = True
    split_method = None
    min_block_size = 8192
    enable_dc_asgd = False
    mode = "pserver"
    print_log = False
    wait_port = True


class DistributeTranspiler:
    def __init__(self, config=None):
        self.config = config or DistributeTranspilerConfig()

    def transpile(self, *args, **kwargs):
        raise NotImplementedError("DistributeTranspiler is not implemented yet")
