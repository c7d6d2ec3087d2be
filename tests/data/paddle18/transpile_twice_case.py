"""Fleet's minimize called twice on one program (Paddle's test_fleet_api_input.test_transpile does it): async
first, then half-async (runtime_split_send_recv=False). run(fluid, role) -> the programs after each call, every
op with its inputs and outputs. make_transpile_twice.py records Paddle 1.8.5's; tests/unit/
test_transpile_twice_paddle18.py shows what is wrong with them and that we refuse the second transpile."""

import numpy as np  # noqa: F401  (Python 3.7 compatible module, like the other cases)


def run(fluid, role_kind):
    from paddle.fluid.transpiler.distribute_transpiler import DistributeTranspilerConfig
    import paddle.fluid.incubate.fleet.base.role_maker as role_maker
    from paddle.fluid.incubate.fleet.parameter_server.distribute_transpiler import fleet
    role = role_maker.UserDefinedRoleMaker(
        current_id=0, role=role_maker.Role.SERVER if role_kind == "server" else role_maker.Role.WORKER,
        worker_num=2, server_endpoints=["127.0.0.1:36011", "127.0.0.1:36012"])
    fleet.init(role)
    x = fluid.layers.data("x", shape=[4], dtype="float32")
    h = fluid.layers.fc(x, size=3)
    loss = fluid.layers.mean(h)
    strategy = DistributeTranspilerConfig()
    strategy.sync_mode = False
    strategy.runtime_split_send_recv = True
    strategy.wait_port = False

    def minimize():
        with fluid.scope_guard(fluid.Scope()):
            fleet.distributed_optimizer(fluid.optimizer.SGD(0.1), strategy).minimize(loss)

    def detail(p):
        return [[[op.type, {n: op.input(n) for n in op.input_names}, {n: op.output(n) for n in op.output_names}]
                 for op in b.ops] for b in p.blocks]
    out = {}
    minimize()
    out["first"] = detail(fleet.main_program)
    strategy.runtime_split_send_recv = False
    try:
        minimize()
    except Exception as e:      # (ours refuses)
        out["second_error"] = "%s: %s" % (type(e).__name__, e)
        return out
    out["second"] = detail(fleet.main_program)
    return out
