"""Lowering-time fusion of lookups sharing a table + sum pooling: the same numbers as the separate ops, and
no fusion where an intermediate is needed."""

import numpy as np

import paddle_compat as fluid
from paddle_compat.backends.lowering import fusion

PLACE = fluid.CPUPlace()
TABLE = np.random.RandomState(0).uniform(-1, 1, (50, 4)).astype(np.float32)


def _build(slots=3, table="t"):
    ids = [fluid.layers.data(name="s%d" % i, shape=[1], dtype="int64", lod_level=1) for i in range(slots)]
    attr = fluid.ParamAttr(name=table, initializer=fluid.initializer.NumpyArrayInitializer(TABLE))
    embs = [fluid.layers.embedding(x, size=[50, 4], is_sparse=True, param_attr=attr) for x in ids]
    pools = [fluid.layers.sequence_pool(e, "sum") for e in embs]
    h = fluid.layers.fc(fluid.layers.concat(pools, axis=1), 1,
                        param_attr=fluid.ParamAttr(initializer=fluid.initializer.Constant(0.1)))
    loss = fluid.layers.mean(fluid.layers.square(h))
    fluid.optimizer.Adagrad(0.1).minimize(loss)
    return embs, pools, loss


def _feed(step, slots=3):
    rng = np.random.RandomState(step)
    out = {}
    for i in range(slots):
        lens = rng.randint(0, 4, 6)            # empty sequences too
        out["s%d" % i] = fluid.create_lod_tensor(rng.randint(0, 50, (int(lens.sum()), 1)).astype(np.int64),
                                                 [lens.tolist()], PLACE)
    return out


def _fused_ops(program, fetch=()):
    # the lookup groups only (the plan also holds fc and optimizer fusions: test_fusion_fc.py, test_train_step_*)
    return [op for op in fusion.plan(program.global_block(), fetch).values()
            if op is not None and op.type == fusion.FUSED_TYPE]


def test_plan_fuses_the_ctr_pattern_only_when_safe():
    embs, pools, loss = _build()
    block = fluid.default_main_program().global_block()
    fused = _fused_ops(fluid.default_main_program())
    assert len(fused) == 1 and fused[0].type == fusion.FUSED_TYPE
    assert fused[0].input("Ids") == ["s0", "s1", "s2"] and fused[0].output("Out") == [p.name for p in pools]
    # fetching an embedding output keeps that slot out of the group
    fused = _fused_ops(fluid.default_main_program(), fetch=[embs[1].name])
    assert fused[0].input("Ids") == ["s0", "s2"]
    assert len(_fused_ops(fluid.default_main_program(), fetch=[embs[0].name, embs[1].name])) == 0
    assert all(op.type != fusion.FUSED_TYPE for op in block.ops)     # the Program itself is untouched


def test_pooled_output_read_early_is_not_fused():
    ids = [fluid.layers.data(name="s%d" % i, shape=[1], dtype="int64", lod_level=1) for i in range(3)]
    attr = fluid.ParamAttr(name="t")
    p0 = fluid.layers.sequence_pool(fluid.layers.embedding(ids[0], [50, 4], is_sparse=True, param_attr=attr), "sum")
    early = fluid.layers.scale(p0, 2.0)        # reads slot 0's pool before slots 1 and 2 are pooled
    p1 = fluid.layers.sequence_pool(fluid.layers.embedding(ids[1], [50, 4], is_sparse=True, param_attr=attr), "sum")
    p2 = fluid.layers.sequence_pool(fluid.layers.embedding(ids[2], [50, 4], is_sparse=True, param_attr=attr), "sum")
    fluid.layers.concat([early, p1, p2], axis=1)
    fused = _fused_ops(fluid.default_main_program())
    assert len(fused) == 1 and fused[0].input("Ids") == ["s1", "s2"]


def test_fused_training_is_bit_identical_to_separate_ops():
    def train(fetch_embs):
        main, start = fluid.Program(), fluid.Program()
        with fluid.program_guard(main, start), fluid.unique_name.guard():
            embs, pools, loss = _build()
        scope, exe = fluid.Scope(), fluid.Executor(PLACE)
        exe.run(start, scope=scope)
        fetch = [loss] + (embs if fetch_embs else [])
        losses = [float(exe.run(main, feed=_feed(s), fetch_list=fetch, scope=scope, return_numpy=False)[0]
                        .__array__()[0]) for s in range(4)]
        lowered = [p.lowered for p in exe._cache.values() if p.feed_specs][0]
        types = [op.type for op, _ in lowered.line_ops.values()]
        return losses, np.array(scope.find_var("t").get_tensor()), types
    fused_losses, fused_table, fused_types = train(False)
    plain_losses, plain_table, plain_types = train(True)    # fetching every embedding disables fusion
    assert fused_types.count(fusion.FUSED_TYPE) == 1 and "lookup_table" not in fused_types
    assert fusion.FUSED_TYPE not in plain_types and plain_types.count("lookup_table") == 3
    assert fused_losses == plain_losses
    np.testing.assert_array_equal(fused_table, plain_table)
    assert not np.array_equal(fused_table, TABLE)


def test_out_of_range_id_is_named():
    import pytest
    _build()
    exe = fluid.Executor(PLACE)
    exe.run(fluid.default_startup_program())
    feed = _feed(0)
    feed["s1"] = fluid.create_lod_tensor(np.array([[3], [77]], np.int64), [[1, 1, 0, 0, 0, 0]], PLACE)
    with pytest.raises(RuntimeError, match="outside the table t of 50 rows"):
        exe.run(feed=feed, fetch_list=[])
