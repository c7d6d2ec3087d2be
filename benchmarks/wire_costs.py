"""What one pserver message costs on our wire transport (backends/wire): the inputs of docs/capacity.md.

One server process (a wire Server with a [2^20, dim] float32 table and dense parameters, handlers as the
pserver's: row lookup, row push with an SGD step, dense exchange = gradients in, SGD, parameters back) and
this process as its one client, over 127.0.0.1, one thread each; authenticated as every job is.

    python benchmarks/wire_costs.py [--calls 200] [--dims 10,64] [--rows 1,64,1024,8192,65536]

Per case, median over --calls sequential calls of the round-trip time, and the server's CPU per call (all its
threads, /proc). A least-squares line over the row counts gives the fixed cost of a message and the cost of a
row, for pull and for push; the dense cases give the cost per MB exchanged. Prints a table and the fits.
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, REPO)
HEIGHT = 1 << 20
KEY = b"wire-costs-benchmark-key-0123456"
DENSE = {"mlp 784-200-200-10": [(784, 200), (200,), (200, 200), (200,), (200, 10), (10,)],
         "ctr tower 273-400-400-400-2": [(273, 400), (400,), (400, 400), (400,), (400, 400), (400,), (400, 2),
                                         (2,)]}


def server(endpoint, dims):
    import threading
    import torch
    torch.set_num_threads(1)
    from paddle_compat.backends.wire.server import Server
    tables = {d: torch.full((HEIGHT, d), 0.01) for d in dims}
    moments = {d: (torch.zeros(HEIGHT, d), torch.zeros(HEIGHT, d)) for d in dims}
    dense = {name: [torch.zeros(s) for s in shapes] for name, shapes in DENSE.items()}
    lock = threading.Lock()
    done = threading.Event()

    def pull(dim, ids):
        with lock:
            return tables[dim].index_select(0, ids)

    def push(dim, ids, grads):
        with lock:
            tables[dim].index_add_(0, ids, grads, alpha=-0.01)

    def push_adam(dim, ids, grads):
        # lazy (row-wise) Adam as a sparse table runs it: gather the rows' moments, update, scatter back
        with lock, torch.no_grad():
            m1, m2 = moments[dim]
            m = m1.index_select(0, ids).mul_(0.9).add_(grads, alpha=0.1)
            v = m2.index_select(0, ids).mul_(0.999).addcmul_(grads, grads, value=0.001)
            m1.index_copy_(0, ids, m)
            m2.index_copy_(0, ids, v)
            tables[dim].index_add_(0, ids, m.div_(v.sqrt_().add_(1e-8)), alpha=-0.001)

    def exchange(name, grads):
        ps = dense[name]
        with lock, torch.no_grad():
            for p, g in zip(ps, grads):
                p.sub_(g, alpha=0.01)
        return ps

    handlers = {"ping": lambda: None, "pull": pull, "push": push, "push_adam": push_adam, "exchange": exchange,
                "stop": lambda: done.set(), "pid": lambda: os.getpid()}
    Server(endpoint, "wire-costs server", "pserver", handlers, key=KEY)
    print("LISTENING", flush=True)
    done.wait(600)
    time.sleep(0.1)


def _proc_cpu(pid):
    """CPU seconds of all the process's live threads, in nanoseconds' precision (schedstat; /proc/pid/stat
    counts 10 ms ticks)."""
    total = 0
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                total += int(f.read().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass
    return total / 1e9


def _fit(xs, ys):
    """(intercept, slope) of the least-squares line."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    return my - slope * mx, slope


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--server", default=None)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--dims", default="10,64")
    ap.add_argument("--rows", default="1,64,1024,8192,65536")
    args = ap.parse_args()
    dims = [int(d) for d in args.dims.split(",")]
    if args.server:
        server(args.server, dims)
        return 0
    import numpy as np
    import torch
    torch.set_num_threads(1)
    from bench_util import free_ports
    from paddle_compat.backends.wire.client import Connection
    ep = "127.0.0.1:%d" % free_ports(1)[0]
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=REPO)
    proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--server", ep, "--dims", args.dims],
                            env=env, stdout=subprocess.PIPE, start_new_session=True)
    try:
        assert proc.stdout.readline().strip() == b"LISTENING"
        conn = Connection(ep, "trainer 0", time.monotonic() + 30, "the wire-costs server", key=KEY)
        spid = conn.call("pid")
        rows_list = [int(r) for r in args.rows.split(",")]
        results = []

        def measure(label, fn, nbytes, calls):
            for _ in range(max(3, calls // 10)):
                fn()
            times = []
            c0 = _proc_cpu(spid)
            for _ in range(calls):
                t0 = time.perf_counter()
                fn()
                times.append(time.perf_counter() - t0)
            scpu = (_proc_cpu(spid) - c0) / calls
            results.append((label, statistics.median(times), scpu, nbytes))
            print("%-34s %9.1f us round trip  %9.1f us server CPU  %9.0f KB" % (
                label, statistics.median(times) * 1e6, scpu * 1e6, nbytes / 1024), flush=True)
            return statistics.median(times), scpu

        measure("ping (empty message)", lambda: conn.call("ping"), 0, args.calls * 5)
        fits = {}
        for dim in dims:
            for what in ("pull", "push", "push_adam"):
                pts = []
                for n in rows_list:
                    ids = torch.from_numpy(np.random.RandomState(n).choice(HEIGHT, n, replace=False))
                    grads = torch.full((n, dim), 0.001)
                    calls = max(20, min(args.calls, int(args.calls * 1024 / max(n, 1024))))
                    if what == "pull":
                        fn = lambda ids=ids: conn.call("pull", dim, ids)   # noqa: E731
                        nb = n * 8 + n * dim * 4
                    else:
                        fn = lambda ids=ids, grads=grads, w=what: conn.call(w, dim, ids, grads)   # noqa: E731
                        nb = n * 8 + n * dim * 4
                    t, c = measure("%s %6d rows x %d" % (what, n, dim), fn, nb, calls)
                    pts.append((n, t, c))
                fits[(what, dim)] = (_fit([p[0] for p in pts], [p[1] for p in pts]),
                                     _fit([p[0] for p in pts], [p[2] for p in pts]))
        for name, shapes in DENSE.items():
            grads = [torch.full(s, 0.001) for s in shapes]
            nb = sum(g.numel() for g in grads) * 4
            measure("dense %s" % name, lambda grads=grads, name=name: conn.call("exchange", name, grads), 2 * nb,
                    args.calls)
        conn.call_async("stop")
        conn.close()
        print("\nfits (least squares over %s rows): round trip = a + b x rows; server CPU = c + d x rows" % args.rows)
        for (what, dim), ((a, b), (c, d)) in sorted(fits.items()):
            print("  %-9s dim %-3d  a %7.1f us  b %6.3f us/row (%5.1f MB/s)   c %7.1f us  d %6.3f us/row" % (
                what, dim, a * 1e6, b * 1e6, (8 + 4 * dim) / b / 1e6, c * 1e6, d * 1e6))
        for label, t, c, nb in results:
            if label.startswith("dense"):
                print("  %-34s %.0f MB/s round trip, server %.0f us CPU per MB" % (label, nb / t / 1e6,
                                                                                 c * 1e6 / (nb / 1e6)))
    finally:
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
