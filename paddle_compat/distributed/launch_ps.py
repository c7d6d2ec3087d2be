"""python -m paddle_compat.distributed.launch_ps: start parameter servers and workers of a pserver-mode job
on this node, as Paddle's `paddle.distributed.launch_ps` did.

    python -m paddle_compat.distributed.launch_ps --server_num 2 --worker_num 2 --log_dir logs train.py

Servers get PADDLE_PSERVERS_IP_PORT_LIST, PADDLE_PORT, POD_IP, TRAINING_ROLE=PSERVER, PADDLE_TRAINERS_NUM
(and PADDLE_PSERVER_ID); workers the list, PADDLE_TRAINERS_NUM, TRAINING_ROLE=TRAINER, PADDLE_TRAINER_ID.
The job succeeds when every worker exits 0 (servers then leave by themselves, or are stopped after a
grace period); if any process fails, all are stopped and the launcher exits non-zero, naming it.

The job key (backends/job_env.py): unless the user gave one (PADDLE_COMPAT_JOB_TOKEN / _FILE, or opted out),
a one-node job gets a fresh key in a 0600 file handed to the children as PADDLE_COMPAT_JOB_TOKEN_FILE and
deleted when the launcher ends; a multi-node job uses the per-user key file, which the nodes must share.
"""

import argparse
import os
import sys

from ..backends import cluster, job_env
from . import procs


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
    out = []
    for i, ep in enumerate(eps):
        host, _, port = ep.rpartition(":")
        if host != args.node_ip:
            continue   # that server runs on another node
        e = dict(env, **cluster.pserver_env(eps, i, args.worker_num))
        out.append(("server %d (%s)" % (i, ep), "server", i, e))
    ips = [ip.strip() for ip in args.cluster_node_ips.split(",") if ip.strip()]
    if args.node_ip not in ips:
        raise ValueError("--node_ip %s is not in --cluster_node_ips %s" % (args.node_ip, ",".join(ips)))
    node = ips.index(args.node_ip)
    for w in range(args.worker_num):
        if w % len(ips) != node:
            continue   # workers are spread over the nodes round-robin
        e = dict(env, **cluster.ps_trainer_env(eps, w, args.worker_num, pod_ip=args.node_ip))
        out.append(("worker %d" % w, "worker", w, e))
    return out


def with_job_key(args, env):
    """(the children's environment with the job key, the key file to delete at the end or None)."""
    env = dict(env)
    if job_env.user_gave_key(env):
        return env, None
    if len([ip for ip in args.cluster_node_ips.split(",") if ip.strip()]) == 1:
        kf = job_env.JobKeyFile()
        return kf.env(env), kf
    sys.stderr.write("launch: no job key given (%s / %s): every node's processes use the per-user key file %s, "
                     "which the nodes must share (a shared home), or set %s on every node\n"
                     % (job_env.TOKEN_ENV, job_env.TOKEN_FILE_ENV, job_env.user_key_file(), job_env.TOKEN_FILE_ENV))
    return env, None


def main(argv=None):
    args = _parse(sys.argv[1:] if argv is None else argv)
    env, keyfile = with_job_key(args, os.environ)
    try:
        try:
            todo = plan(args, env)
        except ValueError as e:
            sys.stderr.write("launch_ps: %s\n" % e)
            return 2
        # the job is done when every worker is; servers then get --server_grace seconds to leave
        return procs.run_children([(name, "%slog.%d" % (kind, idx), env, kind == "worker")
                                   for name, kind, idx, env in todo],
                                  args.training_script, args.training_script_args, args.log_dir,
                                  others_grace=args.server_grace)
    finally:
        if keyfile is not None:
            keyfile.remove()


if __name__ == "__main__":
    sys.exit(main())
