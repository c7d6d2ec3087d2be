"""Records program pruning from real PaddlePaddle 1.8.5 (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_prune.py

Writes prune.json beside this script:
  * "programs": the classifier net's ops and variables as layers.cross_entropy records them (cross_entropy2, its
    three outputs, cross_entropy_grad2 after minimize);
  * "prunes": Program._prune / _prune_with_input results (per block: parent, op types, variable names) for
    forward and training programs, fed non-leaf variables, optimize ops as targets, and sub-blocks (While,
    cond) including a pruned loop whose block goes away;
  * "runs": Executor.run(use_prune=True) and optimize ops in fetch_list: fetched losses, parameters after the
    steps, which persistable variables of the program the scope holds afterwards, errors.
tests/unit/test_prune_paddle18.py builds the very same programs with paddle_compat (the functions below take
the fluid module).
"""

import json
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.RandomState(11)
X = rng.uniform(-1, 1, (10, 2)).astype("float32")
X2 = rng.uniform(-1, 1, (10, 2)).astype("float32")
LABEL = rng.randint(0, 2, (10, 1)).astype("int64")
B0 = np.array([0.1, -0.2], "float32")
PROBS = np.abs(X) + 0.05      # fed in place of the softmax output


def net(fluid):
    """test_prune.py's net: fc(softmax) -> cross_entropy -> mean."""
    L = fluid.layers
    x = L.data(name="x", shape=[2], dtype="float32")
    label = L.data(name="label", shape=[1], dtype="int64")
    y = L.fc(input=[x], size=2, act="softmax")
    loss = L.mean(x=L.cross_entropy(input=y, label=label))
    return x, y, label, loss


def _fc(fluid, x, w_name):
    init = fluid.initializer
    return fluid.layers.fc(input=[x], size=2, act="softmax",
                           param_attr=fluid.ParamAttr(name=w_name, learning_rate=0.5,
                                                      initializer=init.Constant(1.0)),
                           bias_attr=fluid.ParamAttr(name=w_name + "_b",
                                                     initializer=init.NumpyArrayInitializer(B0)))


def net1(fluid):
    """One fc, two losses over it (both persistable)."""
    L = fluid.layers
    x = L.data(name="x", shape=[2], dtype="float32")
    label = L.data(name="label", shape=[1], dtype="int64")
    y = _fc(fluid, x, "w")
    loss1 = L.mean(x=L.cross_entropy(input=y, label=label))
    loss2 = L.mean(x=L.cross_entropy(input=y, label=label))
    loss1.persistable = True
    loss2.persistable = True
    return x, y, label, loss1, loss2


def net2(fluid):
    """Two fc towers (x1 -> w1, x2 -> w2), a loss each."""
    L = fluid.layers
    x1 = L.data(name="x1", shape=[2], dtype="float32")
    x2 = L.data(name="x2", shape=[2], dtype="float32")
    label = L.data(name="label", shape=[1], dtype="int64")
    loss1 = L.mean(x=L.cross_entropy(input=_fc(fluid, x1, "w1"), label=label))
    loss2 = L.mean(x=L.cross_entropy(input=_fc(fluid, x2, "w2"), label=label))
    return loss1, loss2


def loops(fluid):
    """Two While loops over their own counters and a cond; out1 needs the second loop only."""
    L = fluid.layers
    x = L.data(name="x", shape=[2], dtype="float32")

    def loop(v, n):
        i = L.fill_constant(shape=[1], dtype="int64", value=0)
        limit = L.fill_constant(shape=[1], dtype="int64", value=n)
        acc = L.assign(v)
        cond = L.less_than(x=i, y=limit)
        w = L.While(cond=cond)
        with w.block():
            L.assign(L.scale(acc, scale=2.0), acc)
            L.increment(x=i, value=1, in_place=True)
            L.less_than(x=i, y=limit, cond=cond)
        return acc

    a = loop(x, 2)
    b = loop(L.scale(x, scale=3.0), 3)
    flag = L.reduce_sum(b) > L.fill_constant(shape=[1], dtype="float32", value=0.0)
    c = L.cond(flag, lambda: L.scale(b, scale=-1.0), lambda: L.scale(b, scale=0.5))
    out0 = L.mean(a)
    out1 = L.mean(c)
    return out0, out1


def _ops(block):
    return [op.type for op in block.ops]


def blocks(program):
    return [{"parent": b.parent_idx, "ops": _ops(b), "vars": sorted(b.vars)} for b in program.blocks]


def op_records(block, types=None):
    out = []
    for op in block.ops:
        if types is not None and op.type not in types:
            continue
        out.append({"type": op.type, "inputs": {k: op.input(k) for k in op.input_names},
                    "outputs": {k: op.output(k) for k in op.output_names},
                    "attrs": sorted(k for k in op.attr_names if k != "op_callstack")})
    return out


def _guard(fluid):
    main, startup = fluid.Program(), fluid.Program()
    return main, startup


def programs(fluid):
    out = {}
    main, startup = _guard(fluid)
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        x, y, label, loss = net(fluid)
        b = main.global_block()
        out["forward_ops"] = op_records(b)
        out["forward_vars"] = {n: {"shape": list(v.shape), "persistable": bool(v.persistable),
                                   "stop_gradient": bool(v.stop_gradient)} for n, v in b.vars.items()}
        fluid.optimizer.SGD(0.1).minimize(loss)
        out["train_ops"] = _ops(b)
        out["cross_entropy_ops"] = op_records(b, {"cross_entropy2", "cross_entropy_grad2"})
    return out


def prunes(fluid):
    out = {}
    main, startup = _guard(fluid)
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        x, y, label, loss = net(fluid)
    out["feed_y"] = blocks(main._prune_with_input([y.name, label.name], [loss]))
    out["targets_loss"] = blocks(main._prune(loss))
    out["target_name"] = blocks(main._prune([loss.name]))
    out["fed_target"] = blocks(main._prune_with_input([y.name, label.name], [y, loss]))
    try:
        main._prune(None)
        out["target_none"] = None
    except ValueError as e:
        out["target_none"] = str(e).splitlines()[0]

    main, startup = _guard(fluid)
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        x, y, label, loss1, loss2 = net1(fluid)
        opt_ops, _ = fluid.optimizer.SGD(0.5).minimize(loss1)
        cloned = main.clone()
        fluid.optimizer.SGD(0.5).minimize(loss2)
    out["train_loss1"] = blocks(main._prune_with_input(["x", "label"], [loss1] + opt_ops))
    out["train_fetch_loss2_no_opt"] = blocks(main._prune_with_input(["x", "label"], [loss2]))
    out["train_feed_y"] = blocks(cloned._prune_with_input([y.name, "label"], [loss1] + opt_ops))
    out["train_opt_only"] = blocks(main._prune_with_input(["x", "label"], opt_ops))

    main, startup = _guard(fluid)
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        out0, out1 = loops(fluid)
    out["loops_out1"] = blocks(main._prune_with_input(["x"], [out1]))
    out["loops_out0"] = blocks(main._prune_with_input(["x"], [out0]))
    out["loops_all"] = blocks(main._prune([out0, out1]))
    return out


def _persist_in_scope(fluid, program, scope):
    return sorted(v.name for v in program.list_vars() if v.persistable and scope.find_var(v.name) is not None)


def _val(scope, name):
    return np.array(scope.find_var(name).get_tensor()).tolist()


def runs(fluid):
    out = {}
    exe = fluid.Executor(fluid.CPUPlace())
    feed = {"x": X, "label": LABEL}

    # one optimizer, fetch loss1 with pruning: loss2 is not computed, the weights train
    main, startup = _guard(fluid)
    scope = fluid.Scope()
    with fluid.scope_guard(scope), fluid.program_guard(main, startup), fluid.unique_name.guard():
        x, y, label, loss1, loss2 = net1(fluid)
        fluid.optimizer.SGD(0.5).minimize(loss1)
        exe.run(startup)
        losses = [float(np.array(exe.run(main, feed=dict(feed), fetch_list=[loss1.name], use_prune=True)[0])
                        .reshape(-1)[0]) for _ in range(3)]
        out["sgd_prune"] = {"losses": losses, "w": _val(scope, "w"), "w_b": _val(scope, "w_b"),
                            "scope": _persist_in_scope(fluid, main, scope)}

    # inference-only pruning: nothing trains
    main, startup = _guard(fluid)
    scope = fluid.Scope()
    with fluid.scope_guard(scope), fluid.program_guard(main, startup), fluid.unique_name.guard():
        x, y, label, loss1, loss2 = net1(fluid)
        exe.run(startup)
        res = exe.run(main, feed={y.name: PROBS, "label": LABEL}, fetch_list=[y.name, loss1.name],
                      use_prune=True)
        out["feed_y_no_opt"] = {"fetched": [np.array(r).tolist() for r in res], "w": _val(scope, "w"),
                                "scope": _persist_in_scope(fluid, main, scope)}

    # two optimizers on one program: the one in fetch_list runs (a tuple, a list of ops, use_prune implied)
    for form in ("tuple", "ops"):
        main, startup = _guard(fluid)
        scope = fluid.Scope()
        with fluid.scope_guard(scope), fluid.program_guard(main, startup), fluid.unique_name.guard():
            x, y, label, loss1, loss2 = net1(fluid)
            train1 = fluid.optimizer.SGD(0.5).minimize(loss1)
            train2 = fluid.optimizer.SGD(0.3).minimize(loss2)
            exe.run(startup)
            got = []
            for step in range(4):
                t, l = (train1, loss1) if step % 2 == 0 else (train2, loss2)
                item = t if form == "tuple" else t[0]
                res = exe.run(main, feed=dict(feed), fetch_list=[l.name, item])
                got.append(float(np.array(res[0]).reshape(-1)[0]))
            out["multi_opt_" + form] = {"losses": got, "w": _val(scope, "w"), "w_b": _val(scope, "w_b"),
                                        "scope": _persist_in_scope(fluid, main, scope)}

    # two Adam towers, each step runs one of them; the other tower's parameters do not move
    main, startup = _guard(fluid)
    scope = fluid.Scope()
    with fluid.scope_guard(scope), fluid.program_guard(main, startup), fluid.unique_name.guard():
        loss1, loss2 = net2(fluid)
        train1 = fluid.optimizer.Adam(0.05).minimize(loss1)
        train2 = fluid.optimizer.Adam(0.05).minimize(loss2)
        exe.run(startup)
        got = []
        for step in range(5):
            t, l = (train1, loss1) if step % 2 == 0 else (train2, loss2)
            res = exe.run(main, feed={"x1": X, "x2": X2, "label": LABEL}, fetch_list=[l, t], use_prune=True)
            got.append(float(np.array(res[0]).reshape(-1)[0]))
        out["adam_towers"] = {"losses": got, "w1": _val(scope, "w1"), "w2": _val(scope, "w2"),
                              "scope": _persist_in_scope(fluid, main, scope)}

    # a CompiledProgram on one CPU place, pruned
    main, startup = _guard(fluid)
    scope = fluid.Scope()
    with fluid.scope_guard(scope), fluid.program_guard(main, startup), fluid.unique_name.guard():
        x, y, label, loss1, loss2 = net1(fluid)
        fluid.optimizer.SGD(0.5).minimize(loss1)
        exe.run(startup)
        compiled = fluid.CompiledProgram(main).with_data_parallel(loss_name=loss1.name, places=fluid.CPUPlace())
        losses = [float(np.array(exe.run(compiled, feed=dict(feed), fetch_list=[loss1.name], use_prune=True)[0])
                        .reshape(-1)[0]) for _ in range(3)]
        out["compiled"] = {"losses": losses, "w": _val(scope, "w"), "scope": _persist_in_scope(fluid, main, scope)}

    # a fed non-leaf variable with the optimizer kept: its backward needs x, which is not fed
    main, startup = _guard(fluid)
    scope = fluid.Scope()
    with fluid.scope_guard(scope), fluid.program_guard(main, startup), fluid.unique_name.guard():
        x, y, label, loss1, loss2 = net1(fluid)
        fluid.optimizer.SGD(0.5).minimize(loss1)
        exe.run(startup)
        try:
            exe.run(main, feed={y.name: PROBS, "label": LABEL}, fetch_list=[loss1.name], use_prune=True)
            raised = False
        except Exception:
            raised = True
        out["feed_y_with_opt"] = {"raised": raised, "scope": _persist_in_scope(fluid, main, scope)}

    # an op that is not an optimize op in fetch_list
    main, startup = _guard(fluid)
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        x, y, label, loss1, loss2 = net1(fluid)
        exe.run(startup)
        try:
            exe.run(main, feed=dict(feed), fetch_list=[loss1.name, main.global_block().ops[0]])
            out["non_optimize_op"] = None
        except TypeError as e:
            out["non_optimize_op"] = str(e)
    return out


def main():
    import paddle.fluid as fluid
    out = {"programs": programs(fluid), "prunes": prunes(fluid), "runs": runs(fluid)}
    with open(os.path.join(HERE, "prune.json"), "w") as f:
        json.dump(out, f, indent=0, sort_keys=True)
    print("wrote", {k: len(v) for k, v in out.items()})


if __name__ == "__main__":
    main()
