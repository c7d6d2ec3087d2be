"""python -m paddle_compat.distributed.launch: start the collective (nccl2 / Fleet collective) trainers of
this node, as Paddle's `paddle.distributed.launch` did.

    python -m paddle_compat.distributed.launch --nproc_per_node 2 --log_dir logs train.py --arg ...

Each child gets PADDLE_TRAINER_ID, PADDLE_CURRENT_ENDPOINT, PADDLE_TRAINERS_NUM, PADDLE_TRAINER_ENDPOINTS
and FLAGS_selected_gpus. Ranks run node by node in --cluster_node_ips order, ports from --started_port.
If any child fails, all are stopped and the launcher exits non-zero, naming it.
"""

import argparse
import os
import sys

from ..backends import cluster
from . import procs
from .launch_ps import with_job_key


def _parse(argv):
    ap = argparse.ArgumentParser(prog="python -m paddle_compat.distributed.launch",
                                 description="start collective training processes on this node")
    ap.add_argument("--cluster_node_ips", default="127.0.0.1", help="comma-separated IPs of all nodes")
    ap.add_argument("--node_ip", default="127.0.0.1", help="this node's IP (one of --cluster_node_ips)")
    ap.add_argument("--started_port", type=int, default=6170, help="first port of this node's trainers")
    ap.add_argument("--selected_gpus", default=None, help="comma-separated GPU ids, one process each")
    ap.add_argument("--nproc_per_node", type=int, default=None,
                    help="processes per node (CPU); default: one per selected GPU, else 1")
    ap.add_argument("--log_dir", default=None, help="write workerlog.N here instead of to the terminal")
    ap.add_argument("--print_config", type=lambda s: s.lower() in ("1", "true", "yes"), default=True)
    ap.add_argument("--use_paddlecloud", action="store_true", help="accepted for compatibility; ignored")
    ap.add_argument("--log_level", default="INFO", help="accepted for compatibility; ignored")
    ap.add_argument("training_script")
    ap.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return ap.parse_args(argv)


def plan(args, env=None):
    """Per-process environments for this node (pure: no processes started)."""
    env = dict(os.environ if env is None else env)
    ips = [ip.strip() for ip in args.cluster_node_ips.split(",") if ip.strip()]
    if args.node_ip not in ips:
        raise ValueError("--node_ip %s is not in --cluster_node_ips %s" % (args.node_ip, ",".join(ips)))
    if not 0 < args.started_port < 65536:
        raise ValueError("--started_port %d is out of range 1..65535" % args.started_port)
    gpus = None
    if args.selected_gpus:
        gpus = [g.strip() for g in args.selected_gpus.split(",") if g.strip()]
    n = args.nproc_per_node or (len(gpus) if gpus else 1)
    if n < 1:
        raise ValueError("--nproc_per_node must be >= 1, got %d" % n)
    if gpus is not None and len(gpus) != n:
        raise ValueError("--selected_gpus lists %d GPUs but --nproc_per_node is %d" % (len(gpus), n))
    if args.started_port + n - 1 > 65535:
        raise ValueError("--started_port %d + %d processes runs past port 65535" % (args.started_port, n))
    all_eps = ["%s:%d" % (ip, args.started_port + i) for ip in ips for i in range(n)]
    node = ips.index(args.node_ip)
    out = []
    for local in range(n):
        rank = node * n + local
        e = dict(env, **cluster.collective_trainer_env(rank, all_eps))
        e["FLAGS_selected_gpus"] = gpus[local] if gpus else ""
        out.append(("trainer %d" % rank, local, e))
    return out


def main(argv=None):
    args = _parse(sys.argv[1:] if argv is None else argv)
    # the job key of the rendezvous at trainer 0 (backends/job_env.py): a fresh one per one-node job
    env, keyfile = with_job_key(args, os.environ)
    try:
        try:
            todo = plan(args, env)
        except ValueError as e:
            sys.stderr.write("launch: %s\n" % e)
            return 2
        if args.print_config:
            sys.stderr.write("launch: %d trainer(s) on %s, endpoints %s\n"
                             % (len(todo), args.node_ip, todo[0][2][cluster.TRAINER_ENDPOINTS_ENV]))
        return procs.run_children([(name, "workerlog.%d" % local, env, True) for name, local, env in todo],
                                  args.training_script, args.training_script_args, args.log_dir)
    finally:
        if keyfile is not None:
            keyfile.remove()


if __name__ == "__main__":
    sys.exit(main())
