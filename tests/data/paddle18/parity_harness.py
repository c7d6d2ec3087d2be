"""Runs one layer case on a Fluid implementation (real Paddle 1.8.5 or paddle_compat) and returns its numbers.

The same case code runs on both: make_<family>.py records Paddle's numbers into <family>.npz, and
tests/unit/test_<family>_paddle18.py runs the cases on paddle_compat and compares. Python 3.7 compatible
(Paddle 1.8.5's venv). A case builds its layer from data variables; gradients are those of
sum(square(out)) over the outputs named in `grad_outs`, w.r.t. every float input (unless in `no_grad`)
and every parameter the case created (parameters take fixed values, stored with the numbers).
"""

import numpy as np


class Case:
    def __init__(self, name, inputs, fn, grad=True, grad_outs=(0,), no_grad=(), params=None, fwd_only_outs=()):
        self.name, self.inputs, self.fn = name, list(inputs), fn
        self.grad, self.grad_outs, self.no_grad = grad, tuple(grad_outs), set(no_grad)
        self.params = params          # optional {param index: array}; other values drawn from the case name
        self.skip_outs = set(fwd_only_outs)   # outputs not compared (e.g. random or order-free)


def rand(shape, seed, lo=-1.0, hi=1.0, dtype="float32"):
    return np.random.RandomState(seed).uniform(lo, hi, size=shape).astype(dtype)


def _param_value(case, i, shape):
    seed = sum(ord(c) for c in case.name) * 7 + i
    return rand(shape, seed, -0.5, 0.5)


def run(fluid, case, param_values=None):
    """-> dict name -> array: out/<i>, grad/<input name>, grad/param<i>, param/<i>."""
    main, startup = fluid.Program(), fluid.Program()
    main.random_seed = startup.random_seed = 1
    with fluid.program_guard(main, startup):
        vs = []
        for inp in case.inputs:
            name, arr = inp[0], inp[1]
            v = fluid.layers.data(name, shape=list(arr.shape), dtype=str(arr.dtype), append_batch_size=False,
                                  lod_level=1 if len(inp) > 2 else 0)
            v.stop_gradient = not (arr.dtype.kind == "f" and case.grad and name not in case.no_grad)
            vs.append(v)
        outs = case.fn(fluid, *vs)
        outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
        params = list(main.global_block().all_parameters())
        names, targets = [], []
        if case.grad:
            for inp, v in zip(case.inputs, vs):
                name = inp[0]
                if not v.stop_gradient:
                    names.append("grad/" + name)
                    targets.append(v)
            for i, p in enumerate(params):
                if not p.stop_gradient:
                    names.append("grad/param%d" % i)
                    targets.append(p)
            loss = None
            for i in case.grad_outs:
                term = fluid.layers.reduce_sum(fluid.layers.square(outs[i]))
                loss = term if loss is None else loss + term
            grads = fluid.gradients([loss], targets) if targets else []
            pairs = [(n, g) for n, g in zip(names, grads) if g is not None]
        else:
            pairs = []
    scope = fluid.Scope()
    res = {}
    with fluid.scope_guard(scope):
        exe = fluid.Executor(fluid.CPUPlace())
        exe.run(startup)
        for i, p in enumerate(params):
            t = scope.find_var(p.name).get_tensor()
            cur = np.array(t)
            if param_values is not None:
                val = param_values["param/%d" % i]
            elif case.params and i in case.params:
                val = case.params[i]
            else:
                val = _param_value(case, i, cur.shape)
            t.set(np.asarray(val, dtype=cur.dtype), fluid.CPUPlace())
            res["param/%d" % i] = val
        feed = {inp[0]: (fluid.create_lod_tensor(inp[1], inp[2], fluid.CPUPlace()) if len(inp) > 2 else inp[1])
                for inp in case.inputs}
        raw = getattr(case, "lod_outs", False)     # outputs carrying LoD: Paddle will not return them as arrays
        fetched = exe.run(main, feed=feed, fetch_list=outs + [g for _, g in pairs], return_numpy=not raw)
        fetched = [np.array(t) for t in fetched]
    for i, o in enumerate(fetched[:len(outs)]):
        if i not in case.skip_outs:
            res["out/%d" % i] = np.asarray(o)
    for (n, _), g in zip(pairs, fetched[len(outs):]):
        res[n] = np.asarray(g)
    return res


def record(fluid, cases, path):
    data = {}
    for c in cases:
        for k, v in run(fluid, c).items():
            data[c.name + "|" + k] = v
    np.savez_compressed(path, **data)
    print("wrote %d cases, %d arrays to %s" % (len(cases), len(data), path))


def check(fluid, case, path_or_data, rtol=1e-4, atol=1e-5):
    """Runs case on `fluid` and compares with the recorded numbers; every recorded array must match."""
    data = np.load(path_or_data) if isinstance(path_or_data, str) else path_or_data
    prefix = case.name + "|"
    ref = {k[len(prefix):]: data[k] for k in data.files if k.startswith(prefix)}
    assert ref, "no recorded numbers for case %s" % case.name
    params = {k: v for k, v in ref.items() if k.startswith("param/")}
    got = run(fluid, case, params)
    for k, v in ref.items():
        if k.startswith("param/"):
            continue
        assert k in got, "%s: recorded %s but paddle_compat gave none (got %s)" % (case.name, k, sorted(got))
        g = got[k]
        # Paddle fetches a 0-d tensor as shape (); we fetch (1,).
        same = tuple(g.shape) == tuple(v.shape) or (v.shape == () and g.shape == (1,))
        assert same, "%s %s: shape %s, Paddle %s" % (case.name, k, g.shape, v.shape)
        g = g.reshape(v.shape)
        if v.dtype.kind in "biu":
            np.testing.assert_array_equal(g, v, err_msg="%s %s" % (case.name, k))
        else:
            np.testing.assert_allclose(g, v, rtol=rtol, atol=atol, err_msg="%s %s" % (case.name, k))
    extra = [k for k in got if k.startswith("grad/") and k not in ref]
    assert not extra, "%s: paddle_compat gave gradients Paddle has none of: %s" % (case.name, extra)
