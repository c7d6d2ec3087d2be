"""Paddle's table ops driven one at a time through fluid.op.Operator on a Scope (as Paddle's op tests drive
them): split_ids (dense ids and a SelectedRows), merge_ids (rows in any order), lookup_sparse_table (rows
grown on first use; is_test leaves unknown ids zero) and ref_by_trainer_id. run(fluid) -> {case: outputs};
make_table_ops.py records it under Paddle 1.8.5, tests/unit/test_table_ops_paddle18.py runs it here."""

import numpy as np


def _lod_tensor(scope, name, array, place):
    scope.var(name).get_tensor().set(array, place)


def split_ids_dense(fluid, core, Operator, place):
    scope = core.Scope()
    ids = [np.array([[0], [2], [2], [3], [5], [5], [6]]), np.array([[6], [2], [3], [3], [5], [2], [6]]),
           np.array([[2], [9], [2], [3], [5], [13], [6]])]
    for i, a in enumerate(ids):
        _lod_tensor(scope, "ids%d" % i, a.astype("int64"), place)
    outs = ["out%d" % i for i in range(3)]
    for n in outs:
        scope.var(n).get_tensor()
    Operator("split_ids", Ids=["ids0", "ids1", "ids2"], Out=outs).run(scope, place)
    return [np.array(scope.find_var(n).get_tensor()).reshape(-1).tolist() for n in outs]


def split_ids_rows(fluid, core, Operator, place):
    scope = core.Scope()
    x = scope.var("X").get_selected_rows()
    rows = [0, 5, 7, 4, 9, 10]
    x.set_rows(rows)
    x.set_height(20)
    x.get_tensor().set(np.arange(12, dtype="float32").reshape(6, 2) + 0.5, place)
    outs = ["out%d" % i for i in range(3)]
    held = [scope.var(n).get_selected_rows() for n in outs]
    Operator("split_ids", Ids="X", Out=outs).run(scope, place)
    return [[o.rows(), o.height(), np.array(o.get_tensor()).tolist()] for o in held]


def merge_ids(fluid, core, Operator, place):
    scope = core.Scope()
    ids = {"ids0": [[0], [2], [5], [6], [3]], "ids1": [[6], [2], [2], [3]]}
    rows = {"rows0": [[0], [3], [6]], "rows1": [[2], [5]]}
    xs = {"x0": [[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]], "x1": [[1.1, 1.2], [1.3, 1.4]]}
    for n, v in ids.items():
        _lod_tensor(scope, n, np.array(v, dtype="int64"), place)
    for n, v in rows.items():
        _lod_tensor(scope, n, np.array(v, dtype="int64"), place)
    for n, v in xs.items():
        _lod_tensor(scope, n, np.array(v, dtype="float32"), place)
    for n in ("out0", "out1"):
        scope.var(n).get_tensor()
    Operator("merge_ids", Ids=sorted(ids), Rows=sorted(rows), X=sorted(xs), Out=["out0", "out1"]).run(scope, place)
    return [np.array(scope.find_var(n).get_tensor()).tolist() for n in ("out0", "out1")]


def lookup_sparse_table(fluid, core, Operator, place):
    scope = core.Scope()
    w = scope.var("W").get_selected_rows()
    w.set_height(1000)
    w.get_tensor().set(np.arange(40, dtype="float32").reshape(10, 4), place)
    scope.var("Out").get_tensor()
    got = []
    for ids, is_test in (([3, 7, 3, 100], False), ([7, 5, 100, 8], False), ([5, 42, 3, 9], True)):
        _lod_tensor(scope, "Ids", np.array(ids, dtype="int64"), place)
        Operator("lookup_sparse_table", W="W", Ids="Ids", Out="Out", min=-5.0, max=10.0, seed=10,
                 is_test=is_test).run(scope, place)
        got.append([np.array(scope.find_var("Out").get_tensor()).tolist(), w.rows()])
    return got


def ref_by_trainer_id(fluid, core, Operator, place):
    scope = core.Scope()
    names = ["x%d" % i for i in range(4)]
    for i, n in enumerate(names):
        _lod_tensor(scope, n, np.full((2, 3), i, dtype="float32") + np.arange(6, dtype="float32").reshape(2, 3), place)
    _lod_tensor(scope, "TrainerId", np.array([2], dtype="int64"), place)
    scope.var("Out").get_tensor()
    Operator("ref_by_trainer_id", X=names, TrainerId="TrainerId", Out="Out").run(scope, place)
    return np.array(scope.find_var("Out").get_tensor()).tolist()


CASES = [split_ids_dense, split_ids_rows, merge_ids, lookup_sparse_table, ref_by_trainer_id]


def run(fluid):
    import paddle.fluid.core as core
    from paddle.fluid.op import Operator
    place = core.CPUPlace()
    return {c.__name__: c(fluid, core, Operator, place) for c in CASES}
