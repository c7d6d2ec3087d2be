"""fluid.embedding records Paddle 1.8's lookup_table_v2 (the output keeps the ids' shape: [N, 3, 1] ids give
[N, 3, 1, D]); fluid.layers.embedding records lookup_table (a trailing 1 of the ids is dropped). Both
train the same rows; a distributed table looked up through fluid.embedding keeps the v2 shape."""

import numpy as np
import torch

import paddle_compat as fluid
from paddle_compat.backends.lowering import registry
from paddle_compat.backends.lowering.ctx import LowerCtx

IDS = np.array([[[1], [2], [3]], [[4], [1], [6]]], np.int64)
TABLE = np.arange(40, dtype=np.float32).reshape(10, 4) / 10.0


def _train(v2, steps=2):
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        ids = fluid.layers.data(name="ids", shape=[3, 1], dtype="int64")
        attr = fluid.ParamAttr(name="emb", initializer=fluid.initializer.NumpyArrayInitializer(TABLE))
        emb = (fluid.embedding if v2 else fluid.layers.embedding)(ids, size=[10, 4], is_sparse=True,
                                                                    param_attr=attr)
        loss = fluid.layers.reduce_sum(fluid.layers.square(emb))
        fluid.optimizer.SGD(0.1).minimize(loss)
    exe = fluid.Executor()
    exe.run(start)
    outs = [exe.run(main, feed={"ids": IDS}, fetch_list=[emb])[0] for _ in range(steps)]
    return main, emb, outs, np.array(fluid.global_scope().find_var("emb").get_tensor())


def test_op_types_and_shapes():
    main, emb, outs, _ = _train(v2=True)
    assert [op.type for op in main.global_block().ops][0] == "lookup_table_v2"
    assert list(emb.shape) == [-1, 3, 1, 4] and outs[0].shape == (2, 3, 1, 4)
    main1, emb1, outs1, _ = _train(v2=False)
    assert [op.type for op in main1.global_block().ops][0] == "lookup_table"
    assert list(emb1.shape) == [-1, 3, 4] and outs1[0].shape == (2, 3, 4)


def test_v2_trains_the_same_rows_as_lookup_table():
    _, _, outs, table = _train(v2=True)
    _, _, outs1, table1 = _train(v2=False)
    np.testing.assert_allclose(outs[1].reshape(2, 3, 4), outs1[1], rtol=1e-6)
    np.testing.assert_allclose(table, table1, rtol=1e-6)
    # by hand: d(sum x^2)/dx = 2x per lookup, id 1 looked up twice
    want = TABLE.copy()
    for i in IDS.reshape(-1):
        want[i] -= 0.1 * 2 * TABLE[i]
    _, _, _, one_step = _train(v2=True, steps=1)
    np.testing.assert_allclose(one_step, want, rtol=1e-6)


def _Ctx(program):
    return LowerCtx(program, program.global_block(), None, "cpu")


def test_distributed_table_through_fluid_embedding_keeps_the_v2_shape():
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        ids = fluid.layers.data(name="ids", shape=[3, 1], dtype="int64")
        emb = fluid.embedding(ids, size=[10, 4], is_sparse=True, is_distributed=True,
                              param_attr=fluid.ParamAttr(name="emb"))
        fluid.optimizer.SGD(0.1).minimize(fluid.layers.mean(emb))
    t = fluid.DistributeTranspiler()
    t.transpile(0, program=main, startup_program=start, pservers="127.0.0.1:6174,127.0.0.1:6175", trainers=2)
    ops = {op.type: op for op in main.global_block().ops if op.type in ("split_ids", "merge_ids")}
    assert ops["merge_ids"].attr("keep_ids_shape") == [1]
    ctx = _Ctx(main)
    split = registry.get("split_ids").factory(ops["split_ids"], ctx)
    merge = registry.get("merge_ids").factory(ops["merge_ids"], ctx)
    ids_t = [torch.from_numpy(IDS)]
    parts = split(ids_t, [])
    table = torch.from_numpy(TABLE)
    outs, _ = merge(ids_t, parts, [table[p.reshape(-1)] for p in parts], [None])
    assert tuple(outs[0].shape) == (2, 3, 1, 4)
    assert torch.equal(outs[0].reshape(-1, 4), table[ids_t[0].reshape(-1)])
