"""Launching a 2-pserver + 2-trainer job of tests/dist/scripts/ps_node.py on 127.0.0.1, and the local
reference it is compared with (the same model and batches in one process, gradients averaged)."""

import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "scripts"))

from dist_utils import Cluster, base_env, endpoints  # noqa: E402

SCRIPT = os.path.join("tests", "dist", "scripts", "ps_node.py")


def start(cluster, specs, pservers=2, trainers=2, deadline_ms=20000, eps=None, extra_env=None, only=None,
          script=SCRIPT, env_for=None):
    """Start the job's processes (names ps0.., tr0..) running `script`; `only` limits which ones start;
    env_for {name: {var: value}} adds environment to one process."""
    env_for = env_for or {}
    eps = eps or endpoints(pservers)
    common = dict(PADDLE_PSERVERS_IP_PORT_LIST=",".join(eps), PADDLE_TRAINERS_NUM=trainers,
                  FLAGS_rpc_deadline=deadline_ms, TORCH_CPP_LOG_LEVEL="ERROR", **(extra_env or {}))
    arg = json.dumps(specs)
    procs = {}
    for i, ep in enumerate(eps):
        if only is None or "ps%d" % i in only:
            procs["ps%d" % i] = cluster.start("ps%d" % i, [script, arg],
                                              base_env(TRAINING_ROLE="PSERVER", PADDLE_CURRENT_ENDPOINT=ep,
                                                       **dict(common, **env_for.get("ps%d" % i, {}))))
    for t in range(trainers):
        if only is None or "tr%d" % t in only:
            procs["tr%d" % t] = cluster.start("tr%d" % t, [script, arg],
                                              base_env(PADDLE_TRAINING_ROLE="TRAINER", PADDLE_TRAINER_ID=t,
                                                       **dict(common, **env_for.get("tr%d" % t, {}))))
    return eps, procs


def records(procs):
    """{(job, trainer): the RESULT record} from the trainers' RESULT lines."""
    out = {}
    for name, p in procs.items():
        for line in p.output.splitlines():
            if line.startswith("RESULT "):
                r = json.loads(line[len("RESULT "):])
                out[(r["job"], r["trainer"])] = r
    return out


def results(procs):
    """{(job, trainer): losses} from the trainers' RESULT lines."""
    return {k: r["losses"] for k, r in records(procs).items()}


def run_ok(tmpdir, specs, timeout=150, full=False, **kw):
    """Run a job to the end; every process must exit 0. Returns {(job, trainer): losses}, or with full=True
    the whole RESULT records."""
    os.makedirs(str(tmpdir), exist_ok=True)
    with Cluster(tmpdir) as c:
        _, procs = start(c, specs, **kw)
        rcs = c.wait(timeout)
        assert all(rc == 0 for rc in rcs.values()), "%s\n%s" % (rcs, c.report())
        return records(procs) if full else results(procs)


def wait_for(proc, text, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if text in proc.output:
            return True
        if proc.popen.poll() is not None:
            return text in proc.output
        time.sleep(0.1)
    return False


def local_losses(fluid, spec, trainers=2):
    """The losses each trainer would see if one process averaged the trainers' gradients: two towers
    sharing the parameters, loss = mean of the towers' losses, each tower fed one trainer's batch."""
    import numpy as np
    import ps_node
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        losses = ps_node.build_model(spec, towers=trainers)
    scope, exe = fluid.Scope(), fluid.Executor(fluid.CPUPlace())
    out = {t: [] for t in range(trainers)}
    with fluid.scope_guard(scope):
        exe.run(startup)
        for s in range(spec.get("steps", 5)):
            feed = {}
            for t in range(trainers):
                feed.update(ps_node.feed(spec, t, s, trainers, sfx="_%d" % t if trainers > 1 else ""))
            vals = exe.run(main, feed=feed, fetch_list=losses)
            for t in range(trainers):
                out[t].append(float(np.asarray(vals[t]).reshape(-1)[0]))
    return out
