"""fluid.framework.OpProtoHolder, fluid.op.Operator's queries, the desc-level API (core.ProgramDesc, BlockDesc,
OpDesc, VarDesc) and Block.append_op's checks, as Paddle 1.8.5's op tests use them. The protos are
paddle_compat/ir/op_protos.json, recorded from Paddle 1.8.5's registry by make_op_protos.py."""

import json
import os

import pytest

import paddle_compat  # noqa: F401  (the `paddle` namespace)
import paddle.fluid as fluid
import paddle.fluid.core as core
from paddle.fluid.framework import OpProtoHolder
from paddle.fluid.op import Operator
from paddle_compat.ops import protos, registry

TABLE = json.load(open(os.path.join(os.path.dirname(protos.__file__), os.pardir, "ir", "op_protos.json")))


def test_proto_of_mul_is_paddles():
    p = OpProtoHolder.instance().get_op_proto("mul")
    assert OpProtoHolder.instance() is OpProtoHolder.instance()
    assert [v.name for v in p.inputs] == ["X", "Y"] and [v.name for v in p.outputs] == ["Out"]
    assert [a.name for a in p.attrs] == [a[0] for a in TABLE["mul"]["attrs"]]
    assert {a.name: a.default for a in p.attrs}["x_num_col_dims"] == 1
    assert OpProtoHolder.generated_op_attr_names() == {"op_role", "op_role_var", "op_namescope", "op_callstack",
                                                       "op_device"}
    with pytest.raises(ValueError, match='Operator "no_such_op" has not been registered.'):
        OpProtoHolder.instance().get_op_proto("no_such_op")


def test_slot_flags():
    s = OpProtoHolder.instance().get_op_proto("sum")
    assert s.inputs[0].duplicable and not s.inputs[0].dispensable
    bn = {v.name: v for v in OpProtoHolder.instance().get_op_proto("batch_norm").outputs}
    assert bn["SavedMean"].intermediate and bn["ReserveSpace"].dispensable
    nce = {a.name: a for a in OpProtoHolder.instance().get_op_proto("nce").attrs}
    assert nce["num_total_classes"].required and nce["num_neg_samples"].default == 10


def test_operator_queries():
    assert Operator.get_op_inputs("sum") == [("X", True)]
    assert Operator.get_op_outputs("split_ids") == [("Out", True)]
    assert "x_num_col_dims" in Operator.get_op_attr_names("mul")
    assert "mul" in Operator.types()


def test_every_type_we_define_is_known_to_append_op():
    # every type a backend has a kernel for is declared in ops/defs, so append_op accepts it before any
    # backend loads
    from paddle_compat.backends.lowering import registry as lowering
    assert all(protos.is_known_type(t) for t in lowering.known_op_types())


def test_append_op_checks_the_type_and_sets_var_op():
    prog = fluid.Program()
    block = prog.global_block()
    with pytest.raises(ValueError, match="`type` to initialized an Operator can not be None."):
        block.append_op()
    with pytest.raises(ValueError, match='Operator "no_such_op" has not been registered.'):
        block.append_op(type="no_such_op")
    xs = [block.create_var(name="x%d" % i, shape=[3], dtype="float32") for i in range(2)]
    out = block.create_var(name="out", shape=[3], dtype="float32")
    op = block.append_op(type="sum", inputs={"X": xs}, outputs={"Out": out})
    assert out.op is op and op.attr("use_mkldnn") is False


def test_desc_api_builds_and_infers():
    prog = core.ProgramDesc()
    block = prog.block(0)
    x = block.var(b"x")
    x.set_type(core.VarDesc.VarType.LOD_TENSOR)
    x.set_shape([10, 20])
    y = block.var(b"y")
    y.set_shape([20, 30])
    out = block.var(b"out")
    op = block.append_op()
    op.set_type("mul")
    op.set_input("X", ["x"])
    op.set_input("Y", ["y"])
    op.set_output("Out", ["out"])
    assert op.attr_names() == []          # no defaults until check_attrs, as in Paddle
    op.check_attrs()
    assert op.attr("y_num_col_dims") == 1 and op.attr_type("x_num_col_dims") == core.AttrType.INT
    op.infer_shape(block)
    assert out.shape() == [10, 30]
    assert block.op(0) == op and block.op_size() == 1 and set(block.all_vars()) == {x, y, out}
    b1 = prog.append_block(block)
    assert (b1.id, b1.parent, prog.num_blocks()) == (1, 0, 2)
    back = core.ProgramDesc(prog.serialize_to_string())
    assert back.block(0).op(0).type() == "mul" and back.block(0).find_var(b"out").shape() == [10, 30]


def test_program_desc_is_a_view():
    main = fluid.Program()
    with fluid.program_guard(main):
        x = fluid.layers.data("x", shape=[4])
        fluid.layers.fc(x, size=2)
    assert isinstance(main.desc, core.ProgramDesc) and main.desc.block(0).op_size() == len(main.global_block().ops)
    op = main.global_block().ops[0]
    assert op.desc.attr("x_num_col_dims") == 1 and x.desc.shape() == [-1, 4]
    main.desc.block(0)._remove_op(0, 1)
    assert main.global_block().ops[0].type == "elementwise_add"


def test_copy_data_info_from():
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        x = fluid.layers.data("x", shape=[4])
        h = fluid.layers.fc(x, size=2)
    h.stop_gradient = True
    other = main.clone()
    for v in other.global_block().vars.values():
        v.is_data, v.stop_gradient = False, False
    other._copy_data_info_from(main)
    assert other.global_block().var("x").is_data and other.global_block().var(h.name).stop_gradient
    with pytest.raises(ValueError):
        main._copy_data_info_from(start)        # main has variables start lacks
    with pytest.raises(TypeError):
        main._copy_data_info_from(start.global_block())


def test_attribute_types_have_one_source():
    # the ProgramDesc writer's attribute types and the op protos are read from the same recorded file
    from paddle_compat.ir.proto_desc import attr_types
    for t in protos.proto_types():
        assert attr_types()[t] == {a.name: a.type for a in protos.get_proto(t).attrs}, t
    # an op Paddle has cannot restate its attributes in a declaration
    with pytest.raises(ValueError, match="its attribute types and defaults are Paddle 1.8.5's"):
        registry.declare("scale", attrs=(("scale", protos.AttrType.FLOAT, 1.0),))
    # an op only we declare gives its attributes once, and both sides read them
    registry.declare("r2_declared_attrs_op", attrs=(("alpha", protos.AttrType.FLOAT, 0.5),))
    try:
        assert attr_types()["r2_declared_attrs_op"] == {"alpha": protos.AttrType.FLOAT}
        assert ("alpha", 0.5) in protos.attr_defaults("r2_declared_attrs_op")
        assert [a.name for a in protos.get_proto("r2_declared_attrs_op").attrs][0] == "alpha"
    finally:
        del registry._DEFS["r2_declared_attrs_op"]
