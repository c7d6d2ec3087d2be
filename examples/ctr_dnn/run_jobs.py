"""Run the CTR-DNN example end to end with a given Python (ours or Paddle 1.8.5's): make the data, train
locally or as a 2-pserver x 2-trainer job through a launch_ps module, and collect the RESULT lines.
Used by the tests, the benchmark and tests/data/paddle18/make_ctr_dnn.py; Python 3.7 compatible.

    python run_jobs.py --python /path/to/python --launcher paddle.distributed.launch_ps --work_dir /tmp/ctr
"""

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SMALL = ["--train_files", "2", "--samples_per_file", "8000", "--test_samples", "4000"]


def auc_threshold(info):
    """The test AUC a trained model must reach on data described by make_data.py's data_info: a fifth of
    the way from the best AUC the dense features alone allow (dense_only_auc, ~0.63) to the Bayes-optimal
    one (oracle_auc, ~0.87), about 0.68. Reaching it needs the id slots' signal, learnt through the sparse
    embedding (and, in a job, through the pservers); an untrained model scores 0.5."""
    return info["dense_only_auc"] + 0.2 * (info["oracle_auc"] - info["dense_only_auc"])


def make_data(python, out_dir, data_args=()):
    out = subprocess.run([python, os.path.join(HERE, "make_data.py"), "--out_dir", out_dir] + list(data_args),
                         check=True, stdout=subprocess.PIPE, universal_newlines=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def free_ports(n):
    """A first port p with p..p+n-1 free on 127.0.0.1 (the launchers take consecutive ports)."""
    for _ in range(200):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            base = s.getsockname()[1]
        if base + n >= 65536:
            continue
        try:
            socks = []
            for p in range(base, base + n):
                t = socket.socket()
                socks.append(t)
                t.bind(("127.0.0.1", p))
            return base
        except OSError:
            continue
        finally:
            for t in socks:
                t.close()
    raise RuntimeError("no %d consecutive free ports" % n)


def _results(text):
    return [json.loads(l[len("RESULT "):]) for l in text.splitlines() if l.startswith("RESULT ")]


def _run(cmd, env, timeout, cwd):
    """Run cmd in its own process group; the whole group is killed afterwards (Paddle 1.8's pservers
    may outlive their launcher)."""
    p = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         universal_newlines=True, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        raise RuntimeError("%s did not finish in %ss:\n%s" % (" ".join(cmd[:6]), timeout, out[-3000:]))
    finally:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass
    if p.returncode != 0:
        raise RuntimeError("%s exited with %s:\n%s" % (" ".join(cmd), p.returncode, out[-4000:]))
    return out


def _env(extra=None):
    env = dict(os.environ, OMP_NUM_THREADS="1", CPU_NUM="1", GLOG_v="0")
    env.pop("PYTHONPATH", None)
    env.update(extra or {})
    return env


def run_local(python, data_dir, train_args=(), timeout=600, cwd=None, script=None):
    """script: a train.py printing RESULT lines (default: this example's)."""
    cmd = [python, script or os.path.join(HERE, "train.py"), "--data_dir", data_dir] + list(train_args)
    t0 = time.time()
    out = _run(cmd, _env(), timeout, cwd or data_dir)
    return {"command": cmd, "wall_s": round(time.time() - t0, 2), "results": _results(out)}


def run_job(python, launcher, data_dir, log_dir, train_args=(), servers=2, workers=2, timeout=600, cwd=None,
            script=None):
    cmd = [python, "-m", launcher, "--server_num", str(servers), "--worker_num", str(workers),
           "--start_port", str(free_ports(servers)), "--log_dir", log_dir,
           script or os.path.join(HERE, "train.py"), "--data_dir", data_dir] + list(train_args)
    for i in range(workers):     # a launcher may append to the logs of an earlier run
        old = os.path.join(log_dir, "workerlog.%d" % i)
        if os.path.exists(old):
            os.remove(old)
    t0 = time.time()
    _run(cmd, _env(), timeout, cwd or data_dir)
    wall = time.time() - t0
    text = "".join(open(os.path.join(log_dir, "workerlog.%d" % i)).read() for i in range(workers))
    res = sorted(_results(text), key=lambda r: r["trainer_id"])
    if len(res) != workers:
        raise RuntimeError("expected %d RESULT lines in %s, got %d:\n%s" % (workers, log_dir, len(res), text[-3000:]))
    return {"command": cmd, "wall_s": round(wall, 2), "results": res}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--launcher", default="paddle_compat.distributed.launch_ps")
    ap.add_argument("--work_dir", required=True)
    ap.add_argument("--small", action="store_true", help="the tests' data size")
    args, train_args = ap.parse_known_args()
    data = os.path.join(args.work_dir, "data")
    info = make_data(args.python, data, SMALL if args.small else ())
    print(json.dumps({"data": info,
                      "local": run_local(args.python, data, train_args),
                      "job_2x2": run_job(args.python, args.launcher, data, os.path.join(args.work_dir, "log"),
                                         train_args)}, indent=1))


if __name__ == "__main__":
    main()
