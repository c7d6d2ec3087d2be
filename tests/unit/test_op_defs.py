"""The op table (paddle_compat/ops): one definition per op, facts below front end and backends.

cumsum is the template of an op defined in one place and checked against Paddle 1.8.5's numbers
(tests/data/paddle18/make_cumsum.py recorded them).
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import paddle_compat as fluid
from paddle_compat import ops

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18")


def test_import_and_building_load_no_torch():
    code = ("import sys, paddle_compat as fluid\n"
            "x = fluid.layers.data('x', shape=[3], dtype='float32')\n"
            "y = fluid.layers.cumsum(x)\n"
            "assert y.shape == (-1, 3), y.shape\n"
            "z = fluid.layers.softmax(fluid.layers.relu(fluid.layers.fc(y, 4)))\n"
            "s = fluid.layers.sequence_pool(fluid.layers.data('s', shape=[2], lod_level=1), 'sum')\n"
            "assert z.shape == (-1, 4) and s.shape == (-1, 2) and s.lod_level == 0, (z.shape, s.shape)\n"
            "assert 'torch' not in sys.modules, 'building a layer imported torch'\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_the_pserver_runtime_loads_only_for_programs_holding_its_ops():
    # its kernels register from backends/ps/kernels.py on the first lookup of an op declared runtime="ps"
    code = ("import sys, numpy as np, paddle_compat as fluid\n"
            "x = fluid.layers.data('x', shape=[3], dtype='float32')\n"
            "y = fluid.layers.fc(x, 2)\n"
            "exe = fluid.Executor(fluid.CPUPlace())\n"
            "exe.run(fluid.default_startup_program())\n"
            "exe.run(feed={'x': np.ones((2, 3), 'float32')}, fetch_list=[y])\n"
            "assert 'torch' in sys.modules\n"
            "loaded = [m for m in ('paddle_compat.backends.ps.kernels', 'paddle_compat.backends.ps.service') "
            "if m in sys.modules]\n"
            "assert not loaded, loaded\n"
            "from paddle_compat.backends.lowering import registry\n"
            "assert registry.get('send').kernel_where == 'paddle_compat.backends.ps.kernels'\n"
            "assert 'paddle_compat.backends.ps.service' in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_defining_an_op_twice_names_both_places():
    with pytest.raises(ValueError, match="cumsum is defined twice"):
        ops.defop("cumsum")(lambda op, ctx: None)


def test_backend_kernels_and_defs_share_one_table():
    from paddle_compat.backends.lowering import registry
    assert registry.get("cumsum") is ops.get("cumsum")
    assert registry.get("sgd") is ops.get("sgd")          # an op of the older, kernel-only form (optimizers)
    assert not ops.is_differentiable("fill_constant")
    assert ops.is_differentiable("cumsum")


# families whose kernels live with the backend (communication, I/O, optimizer updates, tables, SelectedRows
# accessors, the lowering's fused ops): declared in ops/defs, kernels registered in backends/lowering/kernels,
# and the pserver runtime's (declared runtime="ps") in backends/ps/kernels
_BACKEND_KERNELS = ("collective_ops", "fused_ops", "io_ops", "optimizer_ops", "reader_ops", "rows_ops", "table_ops",
                    "paddle_compat.backends.ps.kernels")


def test_every_op_is_declared_once_in_ops_defs():
    from paddle_compat.backends.lowering import registry
    registry.known_op_types()      # loads the backend kernels too
    registry.get("send")           # and the pserver runtime's
    by_module = {}
    for t in ops.known_op_types():
        d = ops.get(t)
        assert (d.where or "").startswith("paddle_compat.ops.defs."), "%s is declared in %s" % (t, d.where)
        if d.factory is not None and d.kernel_where != d.where:
            assert (d.kernel_where.rsplit(".", 1)[1] in _BACKEND_KERNELS
                    or d.kernel_where in _BACKEND_KERNELS), (t, d.kernel_where)
        assert (d.runtime == "ps") == (d.kernel_where == "paddle_compat.backends.ps.kernels"), (t, d.runtime)
        assert d.differentiable in (True, False), t
        by_module.setdefault(d.where.split(".")[3], []).append(d)     # the family: module or package
    moved = ("activation_ops", "init_ops", "loss_ops", "math_ops", "metric_ops", "nn_ops", "sequence_ops",
             "tensor_ops", "lookup_table")
    for family in moved:
        missing = [d.type for d in by_module[family] if d.infer_shape is None]
        assert not missing, "%s: ops without infer_shape: %s" % (family, missing)
    assert sum(len(by_module[f]) for f in moved) == 185
    # only the executor's own feed and fetch have no kernel
    assert {t for t in ops.known_op_types() if ops.get(t).factory is None} == {"feed", "fetch"}


def test_a_kernel_for_an_undeclared_type_is_an_error():
    with pytest.raises(ValueError, match="'no_such_op_r2' is not declared"):
        ops.kernel("no_such_op_r2")(lambda op, ctx: None)
    with pytest.raises(ValueError, match="op sgd has two kernels"):
        from paddle_compat.backends.lowering import registry
        registry.known_op_types()
        ops.kernel("sgd")(lambda op, ctx: None)


def test_distributed_facts_are_declaration_fields():
    row_wise = {t for t in ops.known_op_types() if ops.info(t).row_wise}
    assert row_wise == {"scale", "sum", "clip", "sign", "assign", "cast", "abs", "square", "elementwise_add",
                        "elementwise_sub", "elementwise_mul", "elementwise_div", "elementwise_max",
                        "elementwise_min"}
    assert {t: ops.info(t).sparse_grad_slot for t in ops.known_op_types() if ops.info(t).sparse_grad_slot} == {
        "lookup_table": "W", "lookup_table_v2": "W", "nce": "Weight", "hierarchical_sigmoid": "W"}
    assert {t for t in ops.known_op_types() if ops.info(t).random_init} == {
        "uniform_random", "gaussian_random", "truncated_gaussian_random"}
    assert {t for t in ops.known_op_types() if ops.info(t).lookup} == {"lookup_table", "lookup_table_v2"}
    # an undeclared type (a grad op) has every fact off
    assert not ops.info("lookup_table_grad").lookup and ops.info("lookup_table_grad").sparse_grad_slot is None


def test_host_facts_are_declaration_fields():
    # what keeps a step off a CUDA graph (capture_check) and what Paddle runs without a kernel (nan_check)
    host = {t: ops.info(t).host for t in ops.known_op_types() if ops.info(t).host}
    assert set(host.values()) <= set(ops.HOST_REASONS)
    assert host["py_func"] == "python" and host["send"] == "rpc" and host["while"] == "control"
    assert host["unique"] == "data" and host["c_allreduce_sum"] == "collective" and host["save"] == "file"
    assert "mul" not in host and "relu" not in host
    assert {t for t in ops.known_op_types() if ops.info(t).random} >= {"dropout", "uniform_random", "randint"}
    base = {t for t in ops.known_op_types() if ops.info(t).operator_base}
    assert {"feed", "fetch", "while", "recv", "send", "print", "py_func", "read"} <= base
    assert not base & {"mul", "sgd", "sqrt", "lookup_table"}
    with pytest.raises(ValueError, match="host='gpu' is not one of"):
        ops.OpDef("no_such_op_r3", host="gpu")


def test_input_and_record_facts_are_declaration_fields():
    # which inputs a kernel reads on the host (capture_check), which kernels take a SelectedRows as it is (emit),
    # which ops carry the transpiler's records (backends/ps/records.py)
    assert ops.info("reshape2").reads_on_host("Shape") and not ops.info("reshape2").reads_on_host("X")
    assert ops.info("bilinear_interp").reads_on_host("Scale") and not ops.info("layer_norm").reads_on_host("Scale")
    assert ops.info("expand").reads_on_host("expand_times_tensor") and ops.info("slice").reads_on_host("StartsTensor")
    assert ops.info("no_such_op_r4").reads_on_host("ShapeTensorList")     # Paddle's ...Tensor(List) naming, any op
    rows = {t for t in ops.known_op_types() if ops.info(t).native_rows}
    assert rows == {"split_ids", "merge_ids", "prefetch", "lookup_sparse_table"}
    plans = {t: ops.info(t).ps_plan for t in ops.known_op_types() if ops.info(t).ps_plan}
    assert plans == dict({t: "trainer" for t in ("send", "recv", "send_barrier", "fetch_barrier", "prefetch",
                                                 "geo_sgd")}, listen_and_serv="pserver")
    with pytest.raises(ValueError, match="ps_plan='worker' is not one of"):
        ops.OpDef("no_such_op_r4", ps_plan="worker")


def test_tensor_op_shapes_agree_with_their_builders():
    # these builders record their own output variables; the definitions' infer_shape must say the same
    from paddle_compat.ir.dtypes import dtype_name
    main, startup = fluid.Program(), fluid.Program()
    L = fluid.layers
    with fluid.program_guard(main, startup):
        x = L.data("x", shape=[3, 4], dtype="float32")
        s = L.data("s", shape=[1], dtype="float32", lod_level=1)
        ids = L.data("ids", shape=[1], dtype="int64", lod_level=1)
        lab = L.data("lab", shape=[1], dtype="int64")
        L.cast(s, "float64")
        L.concat([x, x], axis=-1)
        L.split(x, 2, dim=2)
        L.split(x, [1, -1], dim=1)
        L.reshape(x, [0, -1])
        L.reshape(x, [-1, 6])
        L.transpose(x, [0, 2, 1])
        L.flatten(x, axis=2)
        L.squeeze(L.unsqueeze(x, [1, -1]), [1])
        L.stack([x, x], axis=-1)
        L.gather(x, lab)
        L.expand(x, [2, 1, 3])
        L.embedding(ids, size=[10, 5], is_sparse=True)
        fluid.embedding(L.data("ids2", shape=[7], dtype="int64"), size=[10, 5], padding_idx=-1)
        L.accuracy(L.fc(x, 5), lab, k=2)
        L.slice(x, axes=[1, 2], starts=[-2, 1], ends=[10, -1])
        x[:, 1]
        L.pad(x, [0, 0, 1, 2, 0, 3])
        L.label_smooth(x)
    checked = set()
    for op in main.global_block().ops:
        d = ops.find(op.type)
        if d is None or d.where not in ("paddle_compat.ops.defs.tensor_ops", "paddle_compat.ops.defs.lookup_table"):
            continue
        block = main.global_block()
        ins = {slot: [block.var(n) for n in op.input(slot)] for slot in d.input_slots() if op.input(slot)}
        got = d.infer_shape(ins, op.attrs)
        for slot, metas in got.items():
            metas = metas if isinstance(metas, list) else [metas]
            outs = [block.var(n) for n in op.output(slot)]
            assert len(metas) == len(outs), (op.type, slot)
            for m, v in zip(metas, outs):
                assert (list(m.shape), m.dtype, m.lod_level) == \
                    (list(v.shape), dtype_name(v.dtype), v.lod_level), (op.type, slot, m, v)
        checked.add(op.type)
    assert {"cast", "concat", "split", "reshape2", "transpose2", "flatten2", "squeeze2", "unsqueeze2", "stack",
            "gather", "expand", "lookup_table", "lookup_table_v2", "accuracy", "slice", "pad", "label_smooth"} <= checked


def test_gradient_facts_are_stated_in_declarations():
    from paddle_compat.fluid.backward import NON_DIFFERENTIABLE_OPS
    assert {"fill_constant", "less_than", "auc", "sign", "accuracy", "feed", "fetch"} <= NON_DIFFERENTIABLE_OPS
    assert "relu" not in NON_DIFFERENTIABLE_OPS


def test_no_grad_slot_gets_no_gradient_var():
    ops.registry._add(ops.OpDef("test_scaled_by", inputs=("X", "Factor"), no_grad=("Factor",),
                                infer_shape=lambda ins, attrs: {"Out": ops.OutMeta(ins["X"][0].shape,
                                                                                   ins["X"][0].dtype)},
                                factory=lambda op, ctx: (lambda x, f: x * f)))
    try:
        from paddle_compat.fluid.layers.utils import append_defined
        main, startup = fluid.Program(), fluid.Program()
        with fluid.program_guard(main, startup):
            x = fluid.layers.data("x", shape=[2], dtype="float32")
            f = fluid.layers.data("f", shape=[2], dtype="float32")
            x.stop_gradient = f.stop_gradient = False
            out = append_defined("test_scaled_by", {"X": x, "Factor": f})["Out"][0]
            gx, gf = fluid.gradients([fluid.layers.reduce_sum(out)], [x, f])
        assert gx is not None and gf is None
        exe = fluid.Executor(fluid.CPUPlace())
        xv, fv = np.ones((2, 2), "float32"), np.full((2, 2), 3.0, "float32")
        g, = exe.run(main, feed={"x": xv, "f": fv}, fetch_list=[gx])
        np.testing.assert_allclose(g, fv)
    finally:
        del ops.registry._DEFS["test_scaled_by"]


@pytest.mark.parity
def test_cumsum_matches_paddle18():
    with open(os.path.join(DATA, "cumsum.json")) as fh:
        ref = json.load(fh)
    x0, w0 = np.array(ref["x"], "float32"), np.array(ref["w"], "float32")
    for c in ref["cases"]:
        main, startup = fluid.Program(), fluid.Program()
        with fluid.program_guard(main, startup):
            x = fluid.layers.data("x", shape=[3, 4], dtype="float32", append_batch_size=False)
            x.stop_gradient = False
            w = fluid.layers.data("w", shape=[3, 4], dtype="float32", append_batch_size=False)
            out = fluid.layers.cumsum(x, **c["attrs"])
            gx, = fluid.gradients([fluid.layers.reduce_sum(out * w)], [x])
        o, g = fluid.Executor(fluid.CPUPlace()).run(main, feed={"x": x0, "w": w0}, fetch_list=[out, gx])
        np.testing.assert_allclose(o, c["out"], rtol=1e-5, atol=1e-6, err_msg=str(c["attrs"]))
        np.testing.assert_allclose(g, c["grad_x"], rtol=1e-5, atol=1e-6, err_msg=str(c["attrs"]))
