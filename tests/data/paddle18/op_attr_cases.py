"""Programs whose ops' attributes are compared with Paddle 1.8.5's (make_op_attrs.py records them there,
tests/unit/test_op_attrs_paddle18.py builds them here): the same builders, through the public Fluid API.

describe(program) -> per block, per op: [type, {attr: value}, has op_callstack, output names] with every
attribute but op_callstack (a stack of file paths); sub-blocks as "block[i]".
"""


def _plain(v):
    if hasattr(v, "idx") and hasattr(v, "ops"):
        return "block[%d]" % v.idx
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, float):
        return round(v, 6)
    if v is None or isinstance(v, (bool, int, str)):
        return v
    try:
        return int(v)
    except (TypeError, ValueError):
        return str(v)


def describe(program):
    out = []
    for b in program.blocks:
        ops = []
        for op in b.ops:
            attrs = {n: _plain(op.attr(n)) for n in sorted(op.attr_names) if n != "op_callstack"}
            outs = sorted(n for slot in op.output_names for n in op.output(slot))
            ops.append([op.type, attrs, "op_callstack" in op.attr_names, outs])
        out.append(ops)
    return out


def cases(fluid):
    layers = fluid.layers

    def mlp():
        x = layers.data(name="x", shape=[8], dtype="float32")
        y = layers.data(name="y", shape=[1], dtype="int64")
        h = layers.fc(x, size=6, act="relu")
        p = layers.fc(h, size=3, act="softmax")
        loss = layers.mean(layers.cross_entropy(p, y))
        fluid.optimizer.SGD(0.1).minimize(loss)

    def regression():
        x = layers.data(name="x", shape=[4], dtype="float32")
        y = layers.data(name="y", shape=[1], dtype="float32")
        loss = layers.mean(layers.square_error_cost(layers.fc(x, size=1), y))
        fluid.optimizer.Momentum(0.1, momentum=0.9).minimize(loss)

    def conv():
        img = layers.data(name="img", shape=[2, 8, 8], dtype="float32")
        c = layers.conv2d(img, num_filters=4, filter_size=3, padding=1)
        c = layers.batch_norm(c, act="relu")
        c = layers.pool2d(c, pool_size=2, pool_stride=2, pool_type="max")
        c = layers.dropout(c, dropout_prob=0.5)
        layers.fc(c, size=3)

    def adam():
        x = layers.data(name="x", shape=[4], dtype="float32")
        loss = layers.reduce_mean(layers.square(layers.fc(x, size=2)))
        fluid.optimizer.Adam(0.01).minimize(loss)

    def seq():
        w = layers.data(name="w", shape=[1], dtype="int64", lod_level=1)
        e = layers.embedding(w, size=[20, 4])
        layers.sequence_pool(e, pool_type="sum")

    def scoped():
        x = layers.data(name="x", shape=[4], dtype="float32")
        with fluid.name_scope("enc"):
            h = layers.fc(x, size=3)
            with fluid.name_scope("inner"):
                h = layers.scale(h, scale=2.0)
        with fluid.name_scope("enc"):
            h = layers.relu(h)
        with fluid.device_guard("cpu"):
            layers.elementwise_add(h, h)

    def tensor_ops():
        x = layers.data(name="x", shape=[3, 4], dtype="float32")
        layers.reshape(x, shape=[-1, 12])
        layers.transpose(x, perm=[0, 2, 1])
        layers.concat([x, x], axis=1)
        layers.fill_constant(shape=[2], dtype="float32", value=1.0)
        layers.cast(x, "float64")

    return {"mlp": mlp, "regression": regression, "conv": conv, "adam": adam, "seq": seq, "scoped": scoped, "tensor_ops": tensor_ops}


def record(fluid):
    """{case: {"main": describe(main), "startup": describe(startup)}}"""
    out = {}
    for name, build in cases(fluid).items():
        main, startup = fluid.Program(), fluid.Program()
        with fluid.program_guard(main, startup), fluid.unique_name.guard():
            build()
        out[name] = {"main": describe(main), "startup": describe(startup)}
    return out
