"""Hand-built RPC programs (Paddle 1.8's layers.io ListenAndServ / Send / Recv): a server program whose
listen_and_serv op runs its sub-block on every set of variables its clients send, and client programs
with send / send_barrier / recv / fetch_barrier ops addressed to endpoints.

They are not transpiled: the ops carry only endpoints and the variables' own names. They run on the
pserver runtime's group, auth and liveness: backends/ps/layer_service.py (server) and layer_client.py.
"""

from ...ir import OP_ROLE_KEY, OpRole, Variable
from ..layer_helper import LayerHelper

__all__ = ["ListenAndServ", "BlockGuardServ", "Send", "Recv"]

_SYNC = 0    # Paddle's DistributedMode.SYNC: the only mode these layers build


class ListenAndServ:
    """A server listening on `endpoint` ("ip:port"; port 0 picks a free port, written to
    /tmp/paddle.<pid>.port once the server accepts clients, as Paddle does). `with serv.do():` records
    the block run each time all `fan_in` clients have sent their variables (`inputs`: the names they send).
    optimizer_mode is recorded for compatibility; the block runs whatever ops it holds either way."""

    def __init__(self, endpoint, inputs, fan_in=1, optimizer_mode=True):
        if not isinstance(endpoint, str) or ":" not in endpoint:
            raise ValueError("ListenAndServ: endpoint must be 'ip:port', got %r" % (endpoint,))
        if int(fan_in) < 1:
            raise ValueError("ListenAndServ: fan_in must be at least 1, got %r" % (fan_in,))
        self.helper = LayerHelper("listen_and_serv")
        self.inputs = list(inputs)
        self.outputs = []
        self.endpoint = endpoint
        self.fan_in = int(fan_in)
        self.optimizer_mode = optimizer_mode

    def do(self):
        return BlockGuardServ(self)

    def parent_block(self):
        prog = self.helper.main_program
        parent_idx = prog.current_block().parent_idx
        if parent_idx < 0:
            raise RuntimeError("ListenAndServ.parent_block() is only defined inside `with serv.do():`")
        return prog.block(parent_idx)

    def get_params_and_grads(self):
        """(params, grads) of the block being built: Param/Grad inputs of optimizer ops (optimizer_mode),
        else every input of every op (as Paddle's simple receive mode)."""
        block = self.helper.main_program.current_block()
        params, grads = [], []
        for op in block.ops:
            if self.optimizer_mode:
                if "Grad" in op.input_names and "Param" in op.input_names:
                    params.append(op.input("Param")[0])
                    grads.append(op.input("Grad")[0])
            else:
                parent = self.parent_block()
                for n in op.input_arg_names:
                    params.append(parent.var(n))
                    grads.append(parent.var(n))
        return params, grads

    def complete_op(self):
        block = self.helper.main_program.current_block()
        self.parent_block().append_op(
            type="listen_and_serv", inputs={"X": self.inputs}, outputs={},
            attrs={"endpoint": self.endpoint, "Fanin": self.fan_in, "optimize_blocks": [block],
                   "distributed_mode": _SYNC, "grad_to_block_id": [""]})


class BlockGuardServ:
    """`with serv.do():` ops go into a new sub-block; leaving it appends the listen_and_serv op."""

    def __init__(self, server):
        if not isinstance(server, ListenAndServ):
            raise TypeError("BlockGuardServ takes a ListenAndServ, got %s" % type(server).__name__)
        self.server = server
        self.program = server.helper.main_program

    def __enter__(self):
        self.program._create_block()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        try:
            if exc_type is None:
                self.server.complete_op()
        finally:
            self.program._rollback()
        return False


def _endpoints(endpoints, what):
    if not isinstance(endpoints, str) or not endpoints:
        raise ValueError("%s: endpoints must be a comma separated 'ip:port' string, got %r" % (what, endpoints))
    epmap = endpoints.split(",")
    return epmap, sorted(set(epmap), key=epmap.index)


def _var_list(v, arg, what):
    if v is None:
        return []
    if isinstance(v, Variable):
        return [v]
    if not isinstance(v, list):
        raise TypeError("%s: %s must be a list of Variables, got %s" % (what, arg, type(v).__name__))
    return v


def Send(endpoints, send_vars, dummy_output=None, sync=True):
    """Send `send_vars` to the server(s) (endpoints: one "ip:port" per variable, comma separated, or one
    for all); with sync, a send_barrier follows: the server runs its block once every client's barrier
    is in."""
    send_vars = _var_list(send_vars, "send_vars", "Send")
    dummy_output = _var_list(dummy_output, "dummy_output", "Send")
    epmap, eps = _endpoints(endpoints, "Send")
    helper = LayerHelper("Send")
    # (Paddle's send and recv ops keep only epmap: their op protos declare no `endpoints`)
    helper.append_op(type="send", inputs={"X": send_vars}, outputs={"Out": dummy_output},
                     attrs={"epmap": epmap, OP_ROLE_KEY: OpRole.RPC})
    if sync:
        helper.append_op(type="send_barrier", inputs={"X": dummy_output}, outputs={"Out": []},
                         attrs={"endpoints": eps})


def Recv(endpoints, get_vars, dummy_input=None, sync=True):
    """Fetch `get_vars` (by name) from the server(s) after the server ran its block on what this client
    sent; returns get_vars."""
    get_vars = _var_list(get_vars, "get_vars", "Recv")
    dummy_input = _var_list(dummy_input, "dummy_input", "Recv")
    epmap, eps = _endpoints(endpoints, "Recv")
    helper = LayerHelper("Recv")
    helper.append_op(type="recv", inputs={"X": dummy_input}, outputs={"Out": get_vars}, attrs={"epmap": epmap})
    if sync:
        helper.append_op(type="fetch_barrier", outputs={"Out": get_vars}, attrs={"endpoints": eps})
    return get_vars
