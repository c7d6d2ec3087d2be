"""One process of a Fleet pserver-mode job, the way a Fleet 1.x script is written.

    python fleet_ps_node.py <userdefined|paddlecloud|mpi> '<json spec>'

userdefined: UserDefinedRoleMaker from TRAINING_ROLE / PADDLE_TRAINER_ID / PADDLE_CURRENT_ENDPOINT /
PADDLE_PSERVERS_IP_PORT_LIST / PADDLE_TRAINERS_NUM; paddlecloud: PaddleCloudRoleMaker() (the launcher's
environment); mpi: fleet.init() with no role maker (MPISymetricRoleMaker, under mpiexec).
Spec keys as in ps_node.py (model, opt, slice, split, steps, start, save_dir + save_at, load_dir), plus
strategy: "config" (a DistributeTranspilerConfig, default) or "sync" / "async" / "geo" (StrategyFactory);
barrier: workers meet at fleet.barrier_worker() after the startup program (worker 1 comes 1.5 s late).
The worker prints `RESULT {"job": 0, "trainer": <worker_index>, "losses": [...]}`.
"""

import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

import paddle_compat as fluid  # noqa: E402
import ps_node  # noqa: E402
from paddle_compat.fluid.incubate.fleet.base import role_maker  # noqa: E402
from paddle_compat.fluid.incubate.fleet.parameter_server.distribute_transpiler import (  # noqa: E402
    StrategyFactory, fleet)


def make_role_maker(kind):
    if kind == "paddlecloud":
        return role_maker.PaddleCloudRoleMaker()
    if kind == "mpi":
        return None
    env = os.environ
    servers = env["PADDLE_PSERVERS_IP_PORT_LIST"].split(",")
    if env["TRAINING_ROLE"] == "PSERVER":
        return role_maker.UserDefinedRoleMaker(current_id=servers.index(env["PADDLE_CURRENT_ENDPOINT"]),
                                               role=role_maker.Role.SERVER,
                                               worker_num=int(env["PADDLE_TRAINERS_NUM"]), server_endpoints=servers)
    return role_maker.UserDefinedRoleMaker(current_id=int(env["PADDLE_TRAINER_ID"]), role=role_maker.Role.WORKER,
                                           worker_num=int(env["PADDLE_TRAINERS_NUM"]), server_endpoints=servers)


def make_strategy(spec):
    kind = spec.get("strategy", "config")
    if kind == "sync":
        return StrategyFactory.create_sync_strategy()
    if kind == "async":
        return StrategyFactory.create_async_strategy()
    if kind == "geo":
        return StrategyFactory.create_geo_strategy(spec.get("geo", 2))
    cfg = fluid.DistributeTranspilerConfig()
    cfg.slice_var_up = spec.get("slice", True)
    cfg.split_method = fluid.transpiler.HashName if spec.get("split") == "hash" else fluid.transpiler.RoundRobin
    return cfg


def main():
    kind, spec = sys.argv[1], json.loads(sys.argv[2])
    fleet.init(make_role_maker(kind))
    strategy = make_strategy(spec)
    loss = ps_node.build_model(
        spec, minimize=lambda opt, l: fleet.distributed_optimizer(opt, strategy).minimize(l))[0]
    if fleet.is_server():
        fleet.init_server(spec.get("load_dir"))
        fleet.run_server()
        print("SERVED", fleet.server_index(), flush=True)
        return
    fleet.init_worker()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(fleet.startup_program)
    me, n = fleet.worker_index(), fleet.worker_num()
    waited = None
    if spec.get("barrier"):      # worker 1 comes late: worker 0 must wait for it
        if me == 1:
            time.sleep(1.5)
        t0 = time.monotonic()
        fleet.barrier_worker()
        waited = time.monotonic() - t0
    losses = []
    for s in range(spec.get("start", 0), spec.get("steps", 5)):
        out = exe.run(fleet.main_program, feed=ps_node.feed(spec, me, s, n), fetch_list=[loss])
        losses.append(float(np.asarray(out[0]).reshape(-1)[0]))
        if spec.get("save_at") == s + 1 and fleet.is_first_worker():
            fleet.save_persistables(exe, spec["save_dir"])
    fleet.stop_worker()
    row = {"job": 0, "trainer": me, "losses": losses, "barrier_wait": waited}
    print("RESULT " + json.dumps(row), flush=True)
    if os.environ.get("RESULT_DIR"):   # mpiexec interleaves the ranks' stdout: a file per worker
        with open(os.path.join(os.environ["RESULT_DIR"], "worker%d.json" % me), "w") as f:
            json.dump(row, f)


if __name__ == "__main__":
    import torch
    torch.set_num_threads(1)
    main()
