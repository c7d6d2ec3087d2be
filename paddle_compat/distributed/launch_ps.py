"""python -m paddle_compat.distributed.launch_ps: start parameter servers and workers of a pserver-mode job
on this node, as Paddle's `paddle.distributed.launch_ps` did.

    python -m paddle_compat.distributed.launch_ps --server_num 2 --worker_num 2 --log_dir logs train.py

Servers get PADDLE_PSERVERS_IP_PORT_LIST, PADDLE_PORT, POD_IP, TRAINING_ROLE=PSERVER, PADDLE_TRAINERS_NUM
(and PADDLE_PSERVER_ID); workers the list, PADDLE_TRAINERS_NUM, TRAINING_ROLE=TRAINER, PADDLE_TRAINER_ID.
The job succeeds when every worker exits 0 (servers then leave by themselves, or are stopped after a
grace period); if any process fails, all are stopped and the launcher exits non-zero, naming it.
"""

import argparse
import secrets
import os
import sys

from . import procs

TOKEN_ENV = "PADDLE_COMPAT_JOB_TOKEN"     # read by backends/ps/auth.py in every process


def _parse(argv):
    ap = argparse.ArgumentParser(prog="python -m paddle_compat.distributed.launch_ps",
                                 description="start pservers and trainers of a parameter-server job")
    ap.add_argument("--cluster_node_ips", default="127.0.0.1")
    ap.add_argument("--node_ip", default="127.0.0.1")
    ap.add_argument("--start_port", type=int, default=6170, help="first server port (servers take consecutive ports)")
    ap.add_argument("--endpoints", default="", help="explicit server endpoints ip:port,ip:port (overrides --start_port)")
    ap.add_argument("--worker_num", type=int, default=2)
    ap.add_argument("--server_num", type=int, default=2)
    ap.add_argument("--log_dir", default=None, help="write serverlog.N / workerlog.N here")
    ap.add_argument("--server_grace", type=float, default=60.0,
                    help="seconds servers get to exit after the last worker finished")
    ap.add_argument("training_script")
    ap.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return ap.parse_args(argv)


def plan(args, env=None):
    """[(name, kind, index, env)] for this node's servers and workers (pure: starts nothing)."""
    env = dict(os.environ if env is None else env)
    # TensorPipe logs every peer's closing connection as a warning when a job ends: quiet by default
    env.setdefault("TORCH_CPP_LOG_LEVEL", "ERROR")
    if args.server_num < 1 or args.worker_num < 1:
        raise ValueError("--server_num and --worker_num must be >= 1 (got %d and %d)"
                         % (args.server_num, args.worker_num))
    if args.endpoints:
        eps = [e.strip() for e in args.endpoints.split(",") if e.strip()]
        for e in eps:
            host, _, port = e.rpartition(":")
            if not host or not port.isdigit() or not 0 < int(port) < 65536:
                raise ValueError("--endpoints entry %r is not ip:port" % e)
        if len(eps) != args.server_num:
            raise ValueError("--endpoints lists %d servers but --server_num is %d" % (len(eps), args.server_num))
    else:
        if not 0 < args.start_port <= 65536 - args.server_num:
            raise ValueError("--start_port %d leaves no room for %d servers" % (args.start_port, args.server_num))
        eps = ["%s:%d" % (args.node_ip, args.start_port + i) for i in range(args.server_num)]
    common = {"PADDLE_PSERVERS_IP_PORT_LIST": ",".join(eps), "PADDLE_TRAINERS_NUM": str(args.worker_num)}
    out = []
    for i, ep in enumerate(eps):
        host, _, port = ep.rpartition(":")
        if host != args.node_ip:
            continue   # that server runs on another node
        e = dict(env, **common)
        e.update({"TRAINING_ROLE": "PSERVER", "PADDLE_TRAINING_ROLE": "PSERVER", "PADDLE_PORT": port,
                  "POD_IP": host, "PADDLE_PSERVER_ID": str(i), "PADDLE_CURRENT_ENDPOINT": ep})
        out.append(("server %d (%s)" % (i, ep), "server", i, e))
    ips = [ip.strip() for ip in args.cluster_node_ips.split(",") if ip.strip()]
    if args.node_ip not in ips:
        raise ValueError("--node_ip %s is not in --cluster_node_ips %s" % (args.node_ip, ",".join(ips)))
    node = ips.index(args.node_ip)
    for w in range(args.worker_num):
        if w % len(ips) != node:
            continue   # workers are spread over the nodes round-robin
        e = dict(env, **common)
        e.update({"TRAINING_ROLE": "TRAINER", "PADDLE_TRAINING_ROLE": "TRAINER", "PADDLE_TRAINER_ID": str(w),
                  "POD_IP": args.node_ip})
        out.append(("worker %d" % w, "worker", w, e))
    return out


def with_job_token(args, env):
    """The children's environment with the job's RPC secret (see backends/ps/auth.py): a one-node job gets a
    fresh one; a multi-node job needs the same value on every node, so it must come from the environment."""
    env = dict(env)
    if not env.get(TOKEN_ENV):
        if len([ip for ip in args.cluster_node_ips.split(",") if ip.strip()]) == 1:
            env[TOKEN_ENV] = secrets.token_hex(32)
        else:
            sys.stderr.write("launch: %s is not set: this multi-node job's rendezvous and RPC will not be authenticated "
                             "(set it to the same secret on every node)\n" % TOKEN_ENV)
    return env


def main(argv=None):
    args = _parse(sys.argv[1:] if argv is None else argv)
    try:
        todo = plan(args, with_job_token(args, os.environ))
    except ValueError as e:
        sys.stderr.write("launch_ps: %s\n" % e)
        return 2
    # the job is done when every worker is; servers then get --server_grace seconds to leave
    return procs.run_children([(name, "%slog.%d" % (kind, idx), env, kind == "worker")
                               for name, kind, idx, env in todo],
                              args.training_script, args.training_script_args, args.log_dir,
                              others_grace=args.server_grace)


if __name__ == "__main__":
    sys.exit(main())
