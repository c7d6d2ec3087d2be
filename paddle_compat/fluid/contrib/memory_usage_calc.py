"""memory_usage(program, batch_size): Paddle 1.8's rough estimate of a program's activation memory.

Sums the size of every LoD tensor an op of the global block writes (a -1 dim counts as batch_size) and returns
(sum * 1.05, sum * 1.1, unit) with the unit B, KB or MB, as Paddle does."""

from ...ir import Program, VarType, convert_dtype, dtype_name

__all__ = ["memory_usage"]

_BYTES = {"bool": 1, "int8": 1, "uint8": 1, "int16": 2, "int32": 4, "int64": 8, "float16": 2, "bfloat16": 2,
          "float32": 4, "float64": 8}


def memory_usage(program, batch_size):
    if not isinstance(program, Program):
        raise TypeError("memory_usage needs a Program, got %s" % type(program).__name__)
    if batch_size <= 0:
        raise ValueError("memory_usage: batch_size must be positive, got %r" % (batch_size,))
    block = program.global_block()
    total = 0.0
    seen = {"@EMPTY@"}
    for op in block.ops:
        for name in op.output_arg_names:
            if name in seen:
                continue
            seen.add(name)
            var = block.var(name)
            if getattr(var, "type", VarType.LOD_TENSOR) != VarType.LOD_TENSOR:
                continue
            count, negative = 1, 0
            for d in var.shape:
                if d < 0:
                    negative += 1
                    if negative > 1:
                        raise ValueError("memory_usage: variable %s has more than one negative dim" % name)
                    count *= batch_size * (-d)
                else:
                    count *= d
            total += count * _BYTES[dtype_name(convert_dtype(var.dtype))]
    unit = "B"
    if total > 1024:
        total, unit = total / 1024, "KB"
        if total > 1024:
            total, unit = total / 1024, "MB"
    return total * 1.05, total * 1.1, unit
