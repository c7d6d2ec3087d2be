"""paddle.fluid.proto.profiler: profiler_pb2."""
