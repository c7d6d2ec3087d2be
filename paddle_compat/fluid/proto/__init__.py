"""paddle.fluid.proto: Paddle's protobuf messages as pure-Python classes (message.py): framework_pb2
(ProgramDesc, OpDesc, OpProto, VarType, ...), profiler.profiler_pb2, trainer_desc_pb2 and data_feed_pb2, with
Paddle 1.8's field numbers, so their bytes are Paddle's."""
