"""paddle.fluid.proto's pure-Python messages against Paddle 1.8.5's generated ones
(tests/data/paddle18/make_proto_messages.py): the same fields and enums (names, numbers, labels, types,
defaults), Paddle's serialized messages parsed and written again byte for byte, the text format, and
fluid.op's OpDescCreationMethod / get_all_op_protos / Operator's debug string."""

import importlib.util
import json
import os

import pytest

import paddle_compat.fluid as fluid
from paddle_compat.fluid import op
from paddle_compat.fluid.proto import data_feed_pb2, framework_pb2, message as m, trainer_desc_pb2
from paddle_compat.fluid.proto.profiler import profiler_pb2

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18")
with open(os.path.join(DATA, "proto_messages.json")) as _fh:
    REF = json.load(_fh)
MODULES = {"framework_pb2": framework_pb2, "profiler_pb2": profiler_pb2, "trainer_desc_pb2": trainer_desc_pb2,
           "data_feed_pb2": data_feed_pb2}
# google.protobuf's FieldDescriptor type numbers
TYPE_CODES = {m.DOUBLE: 1, m.FLOAT: 2, m.INT64: 3, m.UINT64: 4, m.INT32: 5, m.BOOL: 8, m.STRING: 9,
              m.MESSAGE: 11, m.BYTES: 12, m.UINT32: 13, m.ENUM: 14}


def _schema(cls):
    fields = [[f.name, f.number, f.label, TYPE_CODES[f.kind], f._default,
               f.message.__name__ if f.kind == m.MESSAGE else None] for f in cls.FIELDS]
    nested = {k: _schema(v) for k, v in vars(cls).items() if isinstance(v, type) and issubclass(v, m.Message)}
    enums = {k: v.items() for k, v in vars(cls).items() if isinstance(v, m.Enum)}
    return {"fields": fields, "nested": nested, "enums": {k: [list(x) for x in v] for k, v in enums.items()}}


@pytest.mark.parametrize("module", sorted(MODULES))
def test_messages_have_paddles_fields(module):
    want = REF["schema"][module]
    mod = MODULES[module]
    got = {n: _schema(getattr(mod, n)) for n in want["messages"]}
    assert got == want["messages"]
    for name, values in want["enums"].items():
        assert [list(x) for x in getattr(mod, name).items()] == values
        for n, v in values:
            assert getattr(mod, n) == v       # framework_pb2.INT, ... as module constants


@pytest.mark.parametrize("name, cls", [("op_desc", framework_pb2.OpDesc), ("sum_proto", framework_pb2.OpProto),
                                       ("program", framework_pb2.ProgramDesc), ("profile", profiler_pb2.Profile)])
def test_paddles_bytes_parse_and_serialize_back(name, cls):
    data = bytes.fromhex(REF["bytes"][name])
    msg = cls.FromString(data)
    assert msg.IsInitialized()
    assert msg.SerializeToString() == data
    assert cls.FromString(msg.SerializeToString()) == msg
    if name in REF["texts"]:
        assert str(msg) == REF["texts"][name]


def test_program_desc_fields_agree_with_the_program_reader():
    data = bytes.fromhex(REF["bytes"]["program"])
    msg = framework_pb2.ProgramDesc.FromString(data)
    prog = fluid.Program.parse_from_string(data)
    assert len(msg.blocks) == len(prog.blocks) == 3      # (the While body and its grad block)
    for b, pb in zip(msg.blocks, prog.blocks):
        assert (b.idx, b.parent_idx) == (pb.idx, pb.parent_idx)
        assert [o.type for o in b.ops] == [o.type for o in pb.ops]
        assert sorted(v.name for v in b.vars) == sorted(pb.vars)
    label = [v for v in msg.blocks[0].vars if v.name == "label"][0]
    assert label.type.type == framework_pb2.VarType.LOD_TENSOR and label.type.lod_tensor.lod_level == 1
    assert label.type.lod_tensor.tensor.data_type == framework_pb2.VarType.INT64
    assert list(label.type.lod_tensor.tensor.dims) == [-1, 1]


def _attrs_proto():
    proto = framework_pb2.OpProto(type="test", comment="")
    proto.inputs.add(name="X", comment="", duplicable=True)
    proto.outputs.add(name="Out", comment="")
    for name, t in (("int_attr", framework_pb2.INT), ("float_attr", framework_pb2.FLOAT),
                    ("string_attr", framework_pb2.STRING), ("ints_attr", framework_pb2.INTS),
                    ("floats_attr", framework_pb2.FLOATS), ("strings_attr", framework_pb2.STRINGS),
                    ("bool_attr", framework_pb2.BOOLEAN), ("long_attr", framework_pb2.LONG),
                    ("longs_attr", framework_pb2.LONGS), ("bools_attr", framework_pb2.BOOLEANS)):
        proto.attrs.add(name=name, type=t, comment="")
    return proto


def test_op_desc_creation_method_writes_paddles_op_desc():
    desc = op.OpDescCreationMethod(_attrs_proto())(
        X=["a", "b"], Out="o", int_attr=-10, float_attr=3.2, string_attr="test_str", ints_attr=[0, -1, 2],
        floats_attr=[0.2, 3.2, -4.5], strings_attr=["a", "b", "c"], bool_attr=True, long_attr=2 ** 40,
        longs_attr=[1, -(2 ** 40)], bools_attr=[True, False])
    assert desc.SerializeToString() == bytes.fromhex(REF["bytes"]["op_desc"])
    assert desc == framework_pb2.OpDesc.FromString(bytes.fromhex(REF["bytes"]["op_desc"]))
    with pytest.raises(ValueError, match="Out expects only one output"):
        op.OpDescCreationMethod(_attrs_proto())(X="a", Out=["o", "p"])
    with pytest.raises(TypeError):
        op.OpDescCreationMethod("not a proto")


def test_all_op_protos_hold_paddles_slots_and_attributes():
    protos = op.get_all_op_protos()
    assert all(p.IsInitialized() for p in protos)
    ours = [p for p in protos if p.type == "sum"][0]
    want = framework_pb2.OpProto.FromString(bytes.fromhex(REF["bytes"]["sum_proto"]))

    def shape(p):   # (the comments are Paddle's documentation: not kept here)
        return ([(v.name, v.duplicable, v.intermediate, v.dispensable) for v in p.inputs],
                [(v.name, v.duplicable) for v in p.outputs], [(a.name, a.type) for a in p.attrs])
    assert shape(ours) == shape(want)


def test_operator_debug_string():
    # Paddle 1.8.5's C++ DebugString: every slot of the proto, sorted, empty ones too
    assert str(op.Operator("sum", X=["a", "b"], Out="z")) == "Op(sum), inputs:{X[a, b]}, outputs:{Out[z]}."
    assert str(op.Operator("batch_norm", X="x", Scale="s", Bias="b", Mean="m", Variance="v", Y="y", MeanOut="m",
                           VarianceOut="v", SavedMean="sm", SavedVariance="sv")) == (
        "Op(batch_norm), inputs:{Bias[b], Mean[m], MomentumTensor[], Scale[s], Variance[v], X[x]}, "
        "outputs:{MeanOut[m], ReserveSpace[], SavedMean[sm], SavedVariance[sv], VarianceOut[v], Y[y]}.")


def test_message_behaviour():
    a = framework_pb2.OpDesc.Attr()
    assert not a.IsInitialized() and a.FindInitializationErrors() == ["name", "type"]
    with pytest.raises(m.EncodeError, match="name"):
        a.SerializeToString()
    assert a.i == 0 and not a.HasField("i") and a.SerializePartialToString() == b""
    a.name, a.type, a.f = "x", framework_pb2.FLOAT, 0.1
    assert a.HasField("f") and a.f != 0.1 and abs(a.f - 0.1) < 1e-8      # float32, as Paddle's field
    with pytest.raises(TypeError):
        a.i = "3"
    with pytest.raises(AttributeError):
        a.nope = 1
    with pytest.raises(AttributeError):
        a.ints = [1]
    b = framework_pb2.BlockDesc()
    assert b.forward_block_idx == -1 and not b.HasField("forward_block_idx")
    v = framework_pb2.VarDesc(name="w")
    assert not v.HasField("type")
    v.type.type = framework_pb2.VarType.FP32
    assert v.HasField("type") and v.IsInitialized()
    with pytest.raises(m.DecodeError):
        framework_pb2.ProgramDesc.FromString(b"\x0a\x05ab")
    assert framework_pb2.AttrType.Name(3) == "INTS" and framework_pb2.AttrType.Value("LONG") == 9
    assert profiler_pb2.Event.GPUKernel == 1 and profiler_pb2.Event.EventType.Name(0) == "CPU"


def test_trainer_desc_writes_paddles_description():
    spec = importlib.util.spec_from_file_location("make_proto_messages",
                                                  os.path.join(DATA, "make_proto_messages.py"))
    mk = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mk)
    want = bytes.fromhex(REF["bytes"]["trainer_desc"])
    got = mk.trainer_desc(fluid)
    assert got.SerializeToString() == want
    assert trainer_desc_pb2.TrainerDesc.FromString(want) == got
    assert got.class_name == "MultiTrainer" and got.device_worker_name == "HogwildWorker"
    assert list(got.dump_fields) == ["a", "b"] and got.mpi_rank == 1 and got.dump_fields_path == "path"
    assert got.fetch_config.fetch_var_names == ["mean_0.tmp_0"] and got.fetch_config.print_period == 10
    t = fluid.trainer_desc.TrainerDesc()
    assert t.proto_desc.mpi_size == -1 and t.proto_desc.dump_file_num == 16     # proto defaults
    with pytest.raises(ValueError, match="src_var_list"):
        t._set_copy_table_config({"src_var_list": ["a"], "dest_var_list": []})
    with pytest.raises(RuntimeError, match="program"):
        fluid.trainer_desc.MultiTrainer()._gen_trainer_desc()
