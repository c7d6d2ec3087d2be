"""Records Paddle 1.8.5's protobuf messages (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_proto_messages.py

Writes proto_messages.json beside this script:
  * "schema": every message of framework_pb2, profiler_pb2, trainer_desc_pb2 and data_feed_pb2 (its fields: name,
    number, label, type, default, message type; nested messages and enums), from the generated modules' descriptors;
  * "bytes": messages serialized by Paddle's protobuf (hex): an OpDesc made by op.OpDescCreationMethod, the
    OpProto of `sum` from op.get_all_op_protos(), a training ProgramDesc with a While sub-block, a Profile with
    events, a TrainerDesc as fluid.trainer_desc fills it;
  * "texts": str() of some of them (protobuf's text format).
tests/unit/test_proto_messages_paddle18.py parses them with paddle_compat.fluid.proto and writes them again.
"""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def schema(mod):
    def msg(d):
        return {"fields": [[f.name, f.number, f.label, f.type,
                            f.default_value if f.has_default_value else None,
                            f.message_type.name if f.message_type else None] for f in d.fields],
                "nested": {n.name: msg(n) for n in d.nested_types},
                "enums": {e.name: [[v.name, v.number] for v in e.values] for e in d.enum_types}}
    fd = mod.DESCRIPTOR
    return {"messages": {n: msg(d) for n, d in fd.message_types_by_name.items()},
            "enums": {n: [[v.name, v.number] for v in e.values] for n, e in fd.enum_types_by_name.items()}}


def op_desc_with_attrs(framework_pb2, op):
    proto = framework_pb2.OpProto()
    proto.type = "test"
    ipt = proto.inputs.add()
    ipt.name, ipt.comment, ipt.duplicable = "X", "", True
    out = proto.outputs.add()
    out.name, out.comment = "Out", ""
    for name, t in (("int_attr", framework_pb2.INT), ("float_attr", framework_pb2.FLOAT),
                    ("string_attr", framework_pb2.STRING), ("ints_attr", framework_pb2.INTS),
                    ("floats_attr", framework_pb2.FLOATS), ("strings_attr", framework_pb2.STRINGS),
                    ("bool_attr", framework_pb2.BOOLEAN), ("long_attr", framework_pb2.LONG),
                    ("longs_attr", framework_pb2.LONGS), ("bools_attr", framework_pb2.BOOLEANS)):
        a = proto.attrs.add()
        a.name, a.type, a.comment = name, t, ""
    proto.comment = ""
    return op.OpDescCreationMethod(proto)(
        X=["a", "b"], Out="o", int_attr=-10, float_attr=3.2, string_attr="test_str", ints_attr=[0, -1, 2],
        floats_attr=[0.2, 3.2, -4.5], strings_attr=["a", "b", "c"], bool_attr=True, long_attr=2 ** 40,
        longs_attr=[1, -(2 ** 40)], bools_attr=[True, False])


def program(fluid):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        L = fluid.layers
        x = L.data(name="x", shape=[3], dtype="float32")
        label = L.data(name="label", shape=[1], dtype="int64", lod_level=1)
        i = L.fill_constant(shape=[1], dtype="int64", value=0)
        limit = L.fill_constant(shape=[1], dtype="int64", value=2)
        acc = L.assign(x)
        cond = L.less_than(x=i, y=limit)
        w = L.While(cond=cond)
        with w.block():
            L.assign(L.scale(acc, scale=2.0), acc)
            L.increment(x=i, value=1, in_place=True)
            L.less_than(x=i, y=limit, cond=cond)
        loss = L.mean(L.cross_entropy(L.fc(acc, 2, act="softmax"), label))
        fluid.optimizer.SGD(0.1).minimize(loss)
    return main


def profile(profiler_pb2):
    p = profiler_pb2.Profile()
    p.start_ns, p.end_ns = 1000, 2 ** 40
    e = p.events.add()
    e.type, e.name, e.start_ns, e.end_ns, e.device_id = profiler_pb2.Event.CPU, "mul", 1100, 1900, -1
    e.detail_info = "op"
    e = p.events.add()
    e.type, e.name, e.start_ns, e.end_ns, e.device_id, e.sub_device_id = (profiler_pb2.Event.GPUKernel,
                                                                          "gemm", 1200, 1300, 0, 3)
    e.memcopy.bytes = 4096
    m = p.mem_events.add()
    m.start_ns, m.end_ns, m.bytes, m.place, m.thread_id, m.device_id = 10, 20, 512, 1, 7, 0
    m.alloc_in, m.free_in = "mul", "sum"
    return p


def trainer_desc(fluid):
    t = fluid.trainer_desc.MultiTrainer()
    t._set_dump_fields(["a", "b"])
    t._set_mpi_rank(1)
    t._set_dump_fields_path("path")
    t._set_thread(4)
    t._set_debug(True)
    main = program(fluid)
    t._set_fetch_var_and_info([main.global_block().var("mean_0.tmp_0")], ["loss: "], 10)
    t._set_program(main)
    t._set_device_worker(fluid.device_worker.Hogwild())
    t._gen_trainer_desc()
    return t.proto_desc


def main():
    import paddle.fluid as fluid
    import paddle.fluid.op as op
    import paddle.fluid.proto.framework_pb2 as framework_pb2
    import paddle.fluid.proto.profiler.profiler_pb2 as profiler_pb2
    fluid.trainer_desc.TrainerDesc()        # (puts Paddle's proto directory on sys.path, as Paddle needs)
    from proto import data_feed_pb2, trainer_desc_pb2
    desc = op_desc_with_attrs(framework_pb2, op)
    sum_proto = [p for p in op.get_all_op_protos() if p.type == "sum"][0]
    prof = profile(profiler_pb2)
    out = {"schema": {"framework_pb2": schema(framework_pb2), "profiler_pb2": schema(profiler_pb2),
                      "trainer_desc_pb2": schema(trainer_desc_pb2), "data_feed_pb2": schema(data_feed_pb2)},
           "bytes": {"op_desc": desc.SerializeToString().hex(), "sum_proto": sum_proto.SerializeToString().hex(),
                     "program": program(fluid).desc.serialize_to_string().hex(),
                     "profile": prof.SerializeToString().hex(),
                     "trainer_desc": trainer_desc(fluid).SerializeToString().hex()},
           "texts": {"op_desc": str(desc), "profile": str(prof)}}
    with open(os.path.join(HERE, "proto_messages.json"), "w") as f:
        json.dump(out, f, indent=0, sort_keys=True)
    print("wrote", {k: len(v) for k, v in out.items()})


if __name__ == "__main__":
    main()
