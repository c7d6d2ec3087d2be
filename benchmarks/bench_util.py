"""Shared pieces of the side-by-side benchmarks: alternating timed rounds, medians, free loopback ports, and
Paddle 1.8.5 timed in a subprocess."""

import os
import statistics
import subprocess
import time



def timed(step, data, steps):
    """Seconds for `steps` calls of step(*batch), cycling through `data`."""
    t0 = time.perf_counter()
    for i in range(steps):
        step(*data[i % len(data)])
    return time.perf_counter() - t0


def alternate(ours, ref, data, rounds, steps, warmup=5):
    """Warm both up, then time them in alternating rounds (slow drift of a shared machine hits both).
    Returns (per-round seconds of ours, of ref)."""
    timed(ours, data, warmup)
    timed(ref, data, warmup)
    t_ours, t_ref = [], []
    for _ in range(rounds):
        t_ours.append(timed(ours, data, steps))
        t_ref.append(timed(ref, data, steps))
    return t_ours, t_ref


def median(xs):
    return statistics.median(xs)


def fluid_mlp(fluid, init, lr):
    """The benchmarks' Fluid MLP: fc layers with the given [(w, b)] weights, relu inside, softmax last,
    cross_entropy, mean, SGD. Returns (main, startup, loss)."""
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start), fluid.unique_name.guard():
        h = fluid.layers.data(name="img", shape=[init[0][0].shape[0]], dtype="float32")
        label = fluid.layers.data(name="label", shape=[1], dtype="int64")
        for i, (w, b) in enumerate(init):
            h = fluid.layers.fc(h, size=w.shape[1], act="softmax" if i == len(init) - 1 else "relu",
                                param_attr=fluid.ParamAttr(initializer=fluid.initializer.NumpyArrayInitializer(w)),
                                bias_attr=fluid.ParamAttr(initializer=fluid.initializer.NumpyArrayInitializer(b)))
        loss = fluid.layers.mean(fluid.layers.cross_entropy(h, label))
        fluid.optimizer.SGD(learning_rate=lr).minimize(loss)
    return main, start, loss


def free_ports(n):
    """n free loopback ports (the package's own helper). Imported when called: the Paddle 1.8.5 workers of
    startup.py and ps_scale.py load this module in Paddle's interpreter, where paddle_compat is absent."""
    from paddle_compat.distributed.procs import free_ports as _free_ports
    return _free_ports(n)


class Paddle18Process:
    """A Paddle 1.8.5 script in a subprocess, timed a round at a time so its rounds alternate with ours. The
    script prints `FIRST <loss>` once set up, then for each line it reads (a number of steps) runs them and
    prints `TIME <seconds>`. It runs in `cwd` (a temp dir: the checkout's paddle/ package would shadow the
    real one), one thread, no PYTHONPATH."""

    def __init__(self, python, script, cwd, args=()):
        env = dict(os.environ, OMP_NUM_THREADS="1", CPU_NUM="1", GLOG_v="0")
        env.pop("PYTHONPATH", None)
        self.proc = subprocess.Popen([python, script] + list(args), cwd=cwd, env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, universal_newlines=True)
        self.first = float(self._expect("FIRST"))

    def _expect(self, tag):
        for line in self.proc.stdout:
            if line.startswith(tag + " "):
                return line.split()[1]
        raise RuntimeError("Paddle 1.8.5 subprocess ended (exit %s) before printing %s" % (self.proc.wait(), tag))

    def __call__(self, steps):
        self.proc.stdin.write("%d\n" % steps)
        self.proc.stdin.flush()
        return float(self._expect("TIME"))

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=60)
