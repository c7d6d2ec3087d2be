"""SelectedRows ops and Adam's less common forms, driven as Paddle's op tests drive them (fluid.op.Operator
on a Scope) or as a small program: sgd on a SelectedRows parameter, split_selected_rows (sections that do
not add up to the height, repeated rows, a row past the sections), sum of SelectedRows (Paddle's MergeAdd:
concatenated when no row repeats, else merged and sorted), adam writing ParamOut / Moment*Out / Beta*PowOut
other than its inputs (lazy and not), and AdamOptimizer with beta1 / beta2 given as Variables.
run(fluid) -> {case: outputs}; make_rows_ops.py records it under Paddle 1.8.5 (rows_ops.json),
tests/unit/test_rows_ops_paddle18.py runs it here. An op that fails gives {"error": True}."""

import numpy as np


def _rows(scope, name, rows, height, values, place):
    sr = scope.var(name).get_selected_rows()
    sr.set_height(height)
    sr.set_rows(rows)
    sr.get_tensor().set(np.asarray(values, dtype="float32"), place)
    return sr


def _run(op):
    """op() runs an Operator; a failure is recorded as such (Paddle raises EnforceNotMet, we our own errors)."""
    try:
        op()
    except Exception:
        return {"error": True}
    return None


def sgd_rows_param(fluid, core, Operator, place):
    got = []
    for grad_rows, param_rows in (([0, 4, 7], list(range(8))), ([7, 2, 7], [9, 7, 2, 5]), ([2], [2, 5, 2]),
                                  ([3], [0, 1])):
        scope = core.Scope()
        width = 3
        g = np.arange(len(grad_rows) * width, dtype="float32").reshape(-1, width) * 0.37 - 1.1
        _rows(scope, "Grad", grad_rows, 10, g, place)
        w = _rows(scope, "Param", param_rows, len(param_rows),
                  np.arange(len(param_rows) * width, dtype="float32").reshape(-1, width) * 0.5 + 0.25, place)
        w.sync_index()          # Paddle looks the rows up in an index built here
        view = w.get_tensor()   # read after the run: the op updates the variable's own SelectedRows
        scope.var("LearningRate").get_tensor().set(np.array([0.1], dtype="float32"), place)
        err = _run(lambda: Operator("sgd", Param="Param", Grad="Grad", ParamOut="Param",
                                    LearningRate="LearningRate").run(scope, place))
        got.append(err or [w.rows(), w.height(), np.array(view).tolist()])
    return got


def split_selected_rows(fluid, core, Operator, place):
    got = []
    for rows, height, sections in (([0, 5, 7, 4, 20], 21, [5, 5, 5, 5, 3]), ([0, 5, 7, 4, 20], 21, [5, 5]),
                                   ([0, 5, 7, 4, 9], 21, [5, 5]), ([0, 5, 7, 4, 9, 3, 3], 10, [5, 5]),
                                   ([0, 5, 7, 4, 9], 10, [4, 3, 3]), ([0, 5, 7, 4, 9], 10, [10])):
        scope = core.Scope()
        _rows(scope, "X", rows, height, np.arange(len(rows) * 2, dtype="float32").reshape(-1, 2), place)
        names = ["out%d" % i for i in range(len(sections))]
        held = [scope.var(n).get_selected_rows() for n in names]
        err = _run(lambda: Operator("split_selected_rows", X="X", Out=names,
                                    height_sections=sections).run(scope, place))
        got.append(err or [[o.rows(), o.height(), np.array(o.get_tensor()).tolist(), o.numel()] for o in held])
    return got


def sum_rows(fluid, core, Operator, place):
    """Paddle's sum of SelectedRows (what split_selected_rows' gradient is), in place (Out is X[0]) too."""
    got = []
    for rows_list, out in (([[0, 5], [2, 0]], "o"), ([[7, 5, 5], [2, 0]], "o"), ([[3], [1]], "o"),
                           ([[3, 1, 3]], "o"), ([[3, 1]], "o"), ([[3, 1, 3], [2]], "x0"),
                           ([[3, 1], [2], [4, 0]], "o"), ([[], [2, 2]], "o")):
        scope = core.Scope()
        names = []
        for i, r in enumerate(rows_list):
            names.append("x%d" % i)
            _rows(scope, names[-1], r, 10,
                  (np.arange(len(r) * 2, dtype="float32").reshape(-1, 2) + 1) * (i + 1.5), place)
        o = scope.var(out).get_selected_rows()
        err = _run(lambda: Operator("sum", X=names, Out=out).run(scope, place))
        got.append(err or [o.rows(), o.height(), np.array(o.get_tensor()).tolist()])
    return got


def adam_outputs_apart(fluid, core, Operator, place):
    """adam with a SelectedRows gradient whose outputs are (some of them) other variables than its inputs:
    the inputs stay as they were; lazy mode leaves the untouched rows of such an output as they were."""
    got = []
    h, w = 6, 3
    for lazy in (True, False):
        for apart_pows in (True, False):
            for apart_moments in (True, False):
                scope = core.Scope()
                rng = np.random.RandomState(1)
                ins = {"Param": rng.rand(h, w), "Moment1": rng.rand(h, w), "Moment2": rng.rand(h, w),
                       "Beta1Pow": np.array([0.78 ** 3]), "Beta2Pow": np.array([0.836 ** 3]),
                       "LearningRate": np.array([0.5])}
                for k, v in ins.items():
                    scope.var(k).get_tensor().set(np.asarray(v, dtype="float32"), place)
                _rows(scope, "Grad", [4, 0, 4], h, rng.rand(3, w), place)
                outs = {"ParamOut": "PO", "Moment1Out": "M1O" if apart_moments else "Moment1",
                        "Moment2Out": "M2O" if apart_moments else "Moment2",
                        "Beta1PowOut": "B1O" if apart_pows else "Beta1Pow",
                        "Beta2PowOut": "B2O" if apart_pows else "Beta2Pow"}
                for k, n in outs.items():
                    if n not in ins:
                        scope.var(n).get_tensor().set(
                            np.full((1,) if "Pow" in k else (h, w), -7.0, dtype="float32"), place)
                args = dict((k, k) for k in ins)
                args.update(outs, Grad="Grad")
                err = _run(lambda: Operator("adam", lazy_mode=lazy, beta1=0.78, beta2=0.836, epsilon=1e-4,
                                            **args).run(scope, place))
                names = sorted(set(list(ins) + list(outs.values())) - {"LearningRate"})
                got.append(err or {n: np.array(scope.find_var(n).get_tensor()).tolist() for n in names})
    return got


def adam_beta_variables(fluid, core, Operator, place):
    """AdamOptimizer(beta1=Variable, beta2=Variable): the betas are read each step (changed between steps
    here), the pow accumulators start at 0.9 / 0.999."""
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        with fluid.unique_name.guard():
            x = fluid.layers.data(name="x", shape=[4], dtype="float32")
            y = fluid.layers.fc(x, size=3, param_attr=fluid.ParamAttr(
                name="w", initializer=fluid.initializer.NumpyArrayInitializer(
                    (np.arange(12, dtype="float32").reshape(4, 3) - 5.5) * 0.1)),
                bias_attr=fluid.ParamAttr(name="b", initializer=fluid.initializer.Constant(0.2)))
            loss = fluid.layers.reduce_mean(fluid.layers.square(y))
            beta1 = fluid.layers.create_global_var(shape=[1], value=0.85, dtype="float32", persistable=True,
                                                   name="beta1_var")
            beta2 = fluid.layers.create_global_var(shape=[1], value=0.95, dtype="float32", persistable=True,
                                                   name="beta2_var")
            fluid.optimizer.Adam(learning_rate=0.05, beta1=beta1, beta2=beta2).minimize(loss)
    scope = core.Scope()
    exe = fluid.Executor(place)
    rec = {"losses": []}
    with fluid.scope_guard(scope):
        exe.run(startup)
        rec["init_pows"] = [np.array(scope.find_var(v.name).get_tensor()).tolist()
                            for v in main.list_vars() if "pow_acc" in v.name]
        xs = (np.arange(8, dtype="float32").reshape(2, 4) - 3.0) * 0.3
        for step in range(4):
            if step == 2:
                scope.find_var("beta1_var").get_tensor().set(np.array([0.5], dtype="float32"), place)
            l, = exe.run(main, feed={"x": xs}, fetch_list=[loss])
            rec["losses"].append(float(np.array(l).reshape(-1)[0]))
        rec["w"] = np.array(scope.find_var("w").get_tensor()).tolist()
        rec["b"] = np.array(scope.find_var("b").get_tensor()).tolist()
        rec["pows"] = sorted([v.name, np.array(scope.find_var(v.name).get_tensor()).tolist()]
                             for v in main.list_vars() if "pow_acc" in v.name)
    adam = [op for op in main.global_block().ops if op.type == "adam"]
    rec["adam_inputs"] = sorted(sorted(op.input_names) for op in adam)
    rec["adam_beta_inputs"] = sorted([op.input("Beta1Tensor"), op.input("Beta2Tensor")] for op in adam)
    rec["adam_beta_attrs"] = sorted([op.attr("beta1") if "beta1" in op.attr_names else None,
                                     op.attr("beta2") if "beta2" in op.attr_names else None] for op in adam)
    return rec


CASES = [sgd_rows_param, split_selected_rows, sum_rows, adam_outputs_apart, adam_beta_variables]


def run(fluid):
    import paddle.fluid.core as core
    from paddle.fluid.op import Operator
    place = core.CPUPlace()
    return {c.__name__: c(fluid, core, Operator, place) for c in CASES}
