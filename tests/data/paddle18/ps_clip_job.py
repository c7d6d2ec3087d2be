"""GradientClipByGlobalNorm (set_gradient_clip) in pserver mode, through Fleet, as Paddle's test_dist_fleet_grad_clip
uses it. Shared by make_ps_clip.py (run with Paddle 1.8.5) and tests/dist/test_ps_grad_clip.py /
tests/unit/test_ps_clip_structure.py (here); Python 3.7 compatible.

    python ps_clip_job.py <sync|async|geo>     one process of a 2-pserver, 2-trainer job on 127.0.0.1, by
        TRAINING_ROLE, PADDLE_PSERVERS_IP_PORT_LIST, PADDLE_CURRENT_ENDPOINT, PADDLE_TRAINER_ID; a trainer prints
        `RESULT {"trainer": i, "losses": [...], "params": {...}}`

structure(fluid, mode) -> the op types of the trainer and pserver programs (no process started).
Paddle 1.8's rule: the clip ops (an @CLIP name scope) stay on each trainer, which clips its own gradients
by their global norm and sends the clipped ones; the pservers apply them (sync: averaged over trainers).
"""

import json
import os
import sys

import numpy as np

STEPS = 4
CLIP = 0.05     # small: every step clips


def data(trainer):
    r = np.random.RandomState(11 + trainer)
    x = r.uniform(-1, 1, (8, 4)).astype("float32")
    y = (x.sum(1, keepdims=True) * 0.5 + 0.3).astype("float32")
    return x, y


def build(fluid, mode, role, index, servers, wait_port=True):
    import paddle.fluid.incubate.fleet.base.role_maker as role_maker
    from paddle.fluid.incubate.fleet.parameter_server.distribute_transpiler import fleet
    from paddle.fluid.incubate.fleet.parameter_server.distribute_transpiler.distributed_strategy import \
        StrategyFactory
    fleet.init(role_maker.UserDefinedRoleMaker(
        current_id=index, role=role_maker.Role.WORKER if role == "trainer" else role_maker.Role.SERVER,
        worker_num=2, server_endpoints=servers))
    r = np.random.RandomState(5)
    init = {"w1": r.uniform(-0.5, 0.5, (4, 3)), "b1": r.uniform(-0.1, 0.1, (3,)),
            "w2": r.uniform(-0.5, 0.5, (3, 1)), "b2": r.uniform(-0.1, 0.1, (1,))}

    def attr(name):
        return fluid.ParamAttr(name=name, initializer=fluid.initializer.NumpyArrayInitializer(
            init[name].astype("float32")))
    x = fluid.layers.data("x", shape=[4], dtype="float32")
    y = fluid.layers.data("y", shape=[1], dtype="float32")
    h = fluid.layers.fc(x, size=3, act="tanh", param_attr=attr("w1"), bias_attr=attr("b1"))
    p = fluid.layers.fc(h, size=1, param_attr=attr("w2"), bias_attr=attr("b2"))
    loss = fluid.layers.mean(fluid.layers.square_error_cost(p, y))
    fluid.clip.set_gradient_clip(clip=fluid.clip.GradientClipByGlobalNorm(CLIP))
    strategy = {"sync": StrategyFactory.create_sync_strategy, "async": StrategyFactory.create_async_strategy,
                "geo": lambda: StrategyFactory.create_geo_strategy(2)}[mode]()
    strategy.get_program_config().wait_port = wait_port
    fleet.distributed_optimizer(fluid.optimizer.SGD(0.5), strategy).minimize(loss)
    return fleet, loss


def structure(fluid, mode):
    """{"trainer": [op types of the main program], "pserver0": [[op types] per block]} for this mode."""
    out = {}
    for role in ("trainer", "pserver"):
        main, startup = fluid.Program(), fluid.Program()
        with fluid.program_guard(main, startup), fluid.unique_name.guard():
            fleet, _ = build(fluid, mode, role, 0, ["127.0.0.1:36011", "127.0.0.1:36012"], wait_port=False)
            prog = fleet.main_program
            if role == "trainer":
                out["trainer"] = [op.type for op in prog.global_block().ops]
            else:
                out["pserver0"] = [[op.type for op in b.ops] for b in prog.blocks]
    return out


def main():
    import paddle.fluid as fluid
    mode = sys.argv[1]
    env = os.environ
    servers = env["PADDLE_PSERVERS_IP_PORT_LIST"].split(",")
    if env["TRAINING_ROLE"] == "PSERVER":
        fleet, _ = build(fluid, mode, "pserver", servers.index(env["PADDLE_CURRENT_ENDPOINT"]), servers)
        fleet.init_server()
        fleet.run_server()
        return
    tid = int(env["PADDLE_TRAINER_ID"])
    fleet, loss = build(fluid, mode, "trainer", tid, servers)
    fleet.init_worker()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(fleet.startup_program)
    x, y = data(tid)
    losses = [float(np.array(exe.run(fleet.main_program, feed={"x": x, "y": y}, fetch_list=[loss])[0]).reshape(-1)[0])
              for _ in range(STEPS)]
    params = {n: np.array(fluid.global_scope().find_var(n).get_tensor()).tolist() for n in ("w1", "b1", "w2", "b2")}
    fleet.stop_worker()
    print("RESULT " + json.dumps({"trainer": tid, "losses": losses, "params": params}), flush=True)


if __name__ == "__main__":
    main()
