"""Reference for data-parallel tests: one process, no data parallelism, whose SGD step uses the mean of the
gradients of several batches (what n trainers / n places each feeding one of them must reproduce)."""

import numpy as np

import paddle_compat as fluid


def averaged_sgd(build, feeds_per_step, steps, lr):
    """build() -> (main, startup, loss) without optimizer; feeds_per_step(step) -> [feed dict per worker].
    Returns (losses [steps][workers], final params {name: array})."""
    import torch
    main, start, loss = build()
    with fluid.program_guard(main, start):
        params_grads = fluid.backward.append_backward(loss)
    names = [p.name for p, _ in params_grads]
    grads = [g.name for _, g in params_grads]
    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(start, scope=scope)
    losses = []
    lr32 = np.float32(lr)
    for s in range(steps):
        outs = [exe.run(main, feed=f, fetch_list=[loss.name] + grads, scope=scope) for f in feeds_per_step(s)]
        losses.append([float(o[0].reshape(-1)[0]) for o in outs])
        for i, name in enumerate(names):
            total = outs[0][1 + i].copy()
            for o in outs[1:]:
                total += o[1 + i]
            avg = total / np.float32(len(outs))
            p = scope.find_var(name).value.detach().numpy()
            scope.find_var(name).value = torch.from_numpy(p - lr32 * avg)
    params = {n: scope.find_var(n).value.detach().numpy().copy() for n in names}
    return np.array(losses), params
