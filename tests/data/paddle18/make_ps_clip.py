"""Records GradientClipByGlobalNorm in pserver mode from real PaddlePaddle 1.8.5 (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_ps_clip.py

Writes ps_clip.json beside this script: the trainer and pserver programs' op types in sync, async and geo mode
(ps_clip_job.structure), and the losses and final parameters of both trainers of a 2-pserver, 2-trainer sync
job on 127.0.0.1 (ps_clip_job.py; Paddle's pservers do not always exit: they are killed by pid once the
trainers are done).
"""

import json
import os
import signal
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ps_clip_job  # noqa: E402


def free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def run_job(mode):
    eps = ["127.0.0.1:%d" % p for p in free_ports(2)]
    common = dict(os.environ, PADDLE_PSERVERS_IP_PORT_LIST=",".join(eps), GLOG_v="0", OMP_NUM_THREADS="1",
                  CPU_NUM="1", FLAGS_rpc_deadline="60000")
    script = os.path.join(HERE, "ps_clip_job.py")
    procs = []
    try:
        for ep in eps:
            procs.append(subprocess.Popen([sys.executable, script, mode], env=dict(common, TRAINING_ROLE="PSERVER",
                                          PADDLE_CURRENT_ENDPOINT=ep), stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL, start_new_session=True))
        trainers = [subprocess.Popen([sys.executable, script, mode], env=dict(common, TRAINING_ROLE="TRAINER",
                                     PADDLE_TRAINER_ID=str(i)), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     start_new_session=True) for i in range(2)]
        procs += trainers
        results = []
        for t in trainers:
            out, _ = t.communicate(timeout=300)
            line = [l for l in out.decode().splitlines() if l.startswith("RESULT ")][-1]
            results.append(json.loads(line[len("RESULT "):]))
        return sorted(results, key=lambda r: r["trainer"])
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()


if __name__ == "__main__":
    import paddle.fluid as fluid
    rec = {"structure": {m: ps_clip_job.structure(fluid, m) for m in ("sync", "async", "geo")},
           "sync_job": run_job("sync")}
    with open(os.path.join(HERE, "ps_clip.json"), "w") as f:
        json.dump(rec, f, indent=1)
    print("sync losses", [r["losses"] for r in rec["sync_job"]])
