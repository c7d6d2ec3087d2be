"""Shared pieces of the side-by-side benchmarks: alternating timed rounds, medians, free loopback ports."""

import statistics
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
