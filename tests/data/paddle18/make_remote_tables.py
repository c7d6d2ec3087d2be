"""Records hand-built servers used as stores (tests/dist/scripts/remote_table_node.py) under real PaddlePaddle
1.8.5 (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_remote_tables.py

Starts two servers and the client with this interpreter, writes remote_tables.json beside this script (the
client's RESULT), which tests/dist/test_remote_tables_paddle18.py compares with ours. The servers are stopped
with SIGINT, then killed by pid (Paddle's may not exit).
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "dist", "scripts", "remote_table_node.py")
ROWS0 = 5


def _port(p, timeout=60):
    path = "/tmp/paddle.%d.port" % p.pid
    end = time.time() + timeout
    while not os.path.exists(path):
        if p.poll() is not None or time.time() > end:
            raise RuntimeError("server %d wrote no port file" % p.pid)
        time.sleep(0.05)
    time.sleep(0.2)
    with open(path) as f:
        return int(f.read())


def main():
    tmp = tempfile.mkdtemp(prefix="remote_tables_")
    servers = [subprocess.Popen([sys.executable, SCRIPT, "server", str(i), str(ROWS0 * (i + 1))],
                                start_new_session=True) for i in range(2)]
    try:
        eps = ["127.0.0.1:%d" % _port(p) for p in servers]
        out = subprocess.run([sys.executable, SCRIPT, "client", eps[0], eps[1], str(ROWS0), os.path.join(tmp, "ckpt")],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300,
                             universal_newlines=True).stdout
        if "RESULT " not in out:
            raise RuntimeError("the client failed:\n" + out[-5000:])
        rec = json.loads([l for l in out.splitlines() if l.startswith("RESULT ")][0][len("RESULT "):])
    finally:
        for p in servers:
            for sig in (signal.SIGINT, signal.SIGKILL):
                if p.poll() is None:
                    os.kill(p.pid, sig)
                    try:
                        p.wait(5)
                    except subprocess.TimeoutExpired:
                        pass
        shutil.rmtree(tmp, ignore_errors=True)
    with open(os.path.join(HERE, "remote_tables.json"), "w") as f:
        json.dump(rec, f, indent=1, sort_keys=True)
    print("wrote %d cases" % len(rec))


if __name__ == "__main__":
    main()
