"""nce, hsigmoid and sampled_softmax_with_cross_entropy cases, shared by the recording script
(make_sampled_loss.py, run with Paddle 1.8.5) and the test (tests/unit/test_sampled_loss_paddle18.py).

Each case builds `out = f(vars)` with the `fluid` module it is given; the program then trains one SGD step
(learning rate 1) on sum(out * w). Recorded: the forward output, the gradient of the input x, and each
parameter after the step (old - new is its gradient, which also covers is_sparse row gradients). Negative
classes of nce are fixed through the op's `custom_neg_classes` attribute (Paddle's own test hook), since
Paddle's samplers draw from C++ std::mt19937 streams that no other library reproduces. Python 3.7 compatible.
"""

import numpy as np


def _r(seed):
    return np.random.RandomState(seed)


def _set_neg(fluid, program, neg):
    for op in program.global_block().ops:
        if op.type == "nce":
            op._set_attr("custom_neg_classes", list(neg))


def cases():
    """name -> dict(inputs={name: array}, params={name: array}, build=f(fluid, vars, program) -> out)."""
    r = _r(7)
    out = {}

    def nce_case(name, n, d, classes, neg, num_true=1, sampler="uniform", bias=True, weight=False,
                 sparse=False, dist=None):
        x = r.uniform(-1, 1, (n, d)).astype("float32")
        lab = r.randint(0, classes, (n, num_true)).astype("int64")
        inputs = {"x": x, "label": lab}
        if weight:
            # weight=k (an int): k rows of weights for n rows of input (Paddle reads the first n)
            rows = weight if weight is not True else n
            inputs["sw"] = r.uniform(0.5, 2, (rows, 1)).astype("float32")
        params = {name + "_w": r.uniform(-1, 1, (classes, d)).astype("float32")}
        if bias:
            params[name + "_b"] = r.uniform(-0.5, 0.5, (classes, 1)).astype("float32")

        def build(fluid, v, program):
            res = fluid.layers.nce(v["x"], v["label"], classes, sample_weight=v.get("sw"),
                                   param_attr=fluid.ParamAttr(name=name + "_w"),
                                   bias_attr=fluid.ParamAttr(name=name + "_b") if bias else False,
                                   num_neg_samples=len(neg), sampler=sampler, custom_dist=dist, seed=1,
                                   is_sparse=sparse)
            _set_neg(fluid, program, neg)
            return res
        out[name] = dict(inputs=inputs, params=params, build=build)

    nce_case("nce_uniform", 4, 5, 8, [0, 3, 5])
    nce_case("nce_log_uniform_true2_weighted", 5, 3, 10, [1, 2, 9, 4], num_true=2, sampler="log_uniform",
             bias=False, weight=True)
    dist = [0.05, 0.1, 0.2, 0.15, 0.3, 0.05, 0.1, 0.05]
    nce_case("nce_custom_dist_sparse", 6, 4, 8, [4, 2], sampler="custom_dist", dist=dist, sparse=True)
    nce_case("nce_uniform_sparse_repeat", 3, 4, 6, [1, 1, 5], sparse=True)

    def hs_case(name, n, d, classes, bias=True, table=None, code=None, sparse=False, scale=1.0):
        x = (r.uniform(-1, 1, (n, d)) * scale).astype("float32")
        lab = r.randint(0, classes, (n, 1)).astype("int64")
        inputs = {"x": x, "label": lab}
        rows = classes if table is not None else classes - 1
        params = {name + "_w": r.uniform(-1, 1, (rows, d)).astype("float32")}
        if bias:
            params[name + "_b"] = r.uniform(-0.5, 0.5, (rows, 1)).astype("float32")
        if table is not None:
            inputs["ptable"] = np.array(table, "int64")
            inputs["pcode"] = np.array(code, "int64")

        def build(fluid, v, program):
            return fluid.layers.hsigmoid(v["x"], v["label"], classes, param_attr=fluid.ParamAttr(name=name + "_w"),
                                         bias_attr=fluid.ParamAttr(name=name + "_b") if bias else False,
                                         path_table=v.get("ptable"), path_code=v.get("pcode"),
                                         is_custom=table is not None, is_sparse=sparse)
        out[name] = dict(inputs=inputs, params=params, build=build)

    hs_case("hs_default", 5, 4, 6)
    hs_case("hs_default_nobias_odd", 4, 3, 7, bias=False)
    hs_case("hs_default_clipped", 3, 4, 5, scale=40.0)
    table = [[0, 2, -1, -1], [0, 1, 4, -1], [3, -1, -1, -1], [0, 2, 1, 3]]
    code = [[1, 0, -1, -1], [0, 1, 1, -1], [1, -1, -1, -1], [0, 0, 1, 1]]
    hs_case("hs_custom", 4, 3, 5, table=table, code=code)
    hs_case("hs_custom_sparse", 4, 3, 5, table=table, code=code, sparse=True, bias=False)

    def ss_case(name, n, classes, num_true, samples, remove=True):
        logits = r.uniform(-2, 2, (n, classes)).astype("float32")
        lab = np.stack([r.choice(classes, num_true, replace=False) for _ in range(n)]).astype("int64")
        smp = np.concatenate([lab, np.array(samples, "int64")], 1)
        prob = r.uniform(0.05, 0.9, smp.shape).astype("float32")
        inputs = {"x": logits, "label": lab, "samples": smp, "probs": prob}

        def build(fluid, v, program):
            return fluid.layers.sampled_softmax_with_cross_entropy(
                v["x"], v["label"], len(samples[0]), num_true=num_true, remove_accidental_hits=remove,
                use_customized_samples=True, customized_samples=v["samples"],
                customized_probabilities=v["probs"])
        out[name] = dict(inputs=inputs, params={}, build=build)

    ss_case("ssce_true1", 3, 7, 1, [[0, 2, 5], [1, 3, 6], [4, 4, 0]])
    # Paddle 1.8.5 builds one_hot(depth=num_samples + 1) of the [N, num_true] labels, so num_true > 1 fails
    # there; only num_true=1 is recorded
    ss_case("ssce_keep_hits", 4, 9, 1, [[0, 8], [1, 2], [7, 3], [5, 5]], remove=False)
    ss_case("ssce_hits", 4, 9, 1, [[0, 8], [1, 2], [7, 3], [5, 5]])
    # (added last, so the cases above keep their data) more sample weights than rows, as Paddle's test_layers
    nce_case("nce_weight_rows_beyond_batch", 2, 3, 6, [1, 4], weight=5)
    return out


def run(fluid, name, case):
    """Build, start, set parameters, train one step; -> {"out", "grad_x", param names...} as numpy."""
    main, startup = fluid.Program(), fluid.Program()
    main.random_seed = startup.random_seed = 1
    with fluid.program_guard(main, startup):
        v = {}
        for k, a in case["inputs"].items():
            v[k] = fluid.layers.data(k, shape=list(a.shape), dtype=str(a.dtype), append_batch_size=False)
            v[k].stop_gradient = k != "x"
        out = case["build"](fluid, v, main)
        w = fluid.layers.data("w__", shape=list(out.shape), dtype="float32", append_batch_size=False)
        loss = fluid.layers.reduce_sum(out * w)
        fluid.optimizer.SGD(learning_rate=1.0).minimize(loss)
    wv = np.linspace(-1.0, 1.5, int(np.prod(out.shape)), dtype="float32").reshape(out.shape)
    exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
    with fluid.scope_guard(scope):
        exe.run(startup)
        for p, a in case["params"].items():
            scope.find_var(p).get_tensor().set(a, fluid.CPUPlace())
        feed = dict(case["inputs"])
        feed["w__"] = wv
        res = exe.run(main, feed=feed, fetch_list=[out, "x@GRAD"])
        got = {"out": np.array(res[0]), "grad_x": np.array(res[1])}
        for p in case["params"]:
            got[p] = np.array(scope.find_var(p).get_tensor())
    return got
