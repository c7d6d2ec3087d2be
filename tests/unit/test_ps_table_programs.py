"""Distributed lookup tables in the transpiled programs (no processes): the trainer's split_ids -> prefetch ->
merge_ids chain and its gradient push, the pservers' table optimize / prefetch / checkpoint blocks, the
shard rule, what the trainer startup no longer allocates, and the table kernels' arithmetic."""

import os
import sys

import numpy as np
import pytest
import torch

import paddle_compat as fluid
from paddle_compat.backends.lowering import registry
from paddle_compat.backends.lowering.ctx import LowerCtx
from paddle_compat.fluid.transpiler.ps_slicing import table_rows

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples"))
from ctr_model import build_ctr_model  # noqa: E402
from paddle_compat.backends.ps.records import trainer_plan  # noqa: E402

EPS = "127.0.0.1:6174,127.0.0.1:6175"
EP0, EP1 = EPS.split(",")


def _transpile(trainers=2, sync=True, tables=1, opt="sgd", height=1001, slots=3):
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start), fluid.unique_name.guard():
        m = build_ctr_model(fluid, slots, emb_dim=4, table_height=height, is_distributed=True, hidden=(8,))
        loss = m.loss
        if tables == 2:
            extra = fluid.layers.data(name="user", shape=[1], dtype="int64", lod_level=1)
            e = fluid.layers.embedding(extra, size=[77, 4], is_sparse=True, is_distributed=True,
                                       param_attr=fluid.ParamAttr(name="user_table"))
            pooled = fluid.layers.sequence_pool(e, "sum")
            loss = fluid.layers.elementwise_add(loss, fluid.layers.mean(pooled))
        if opt == "adagrad":
            fluid.optimizer.Adagrad(0.05).minimize(loss)
        else:
            fluid.optimizer.SGD(0.05).minimize(loss)
    t = fluid.DistributeTranspiler()
    t.transpile(0, program=main, startup_program=start, pservers=EPS, trainers=trainers, sync_mode=sync)
    return t, main, start, m


def _types(block):
    return [op.type for op in block.ops]


def test_shard_rule_is_contiguous_ceil_rows_per_pserver():
    assert table_rows(1001, 2) == [(0, 501), (501, 500)]
    assert table_rows(10, 3) == [(0, 4), (4, 4), (8, 2)]
    assert table_rows(2, 4) == [(0, 1), (1, 1)]          # fewer rows than pservers: the last have none
    assert table_rows(10000000, 2) == [(0, 5000000), (5000000, 5000000)]
    with pytest.raises(ValueError):
        table_rows(0, 2)


def test_trainer_program_prefetches_and_pushes_rows_instead_of_holding_the_table():
    t, main, start, m = _transpile()
    ops = main.global_block().ops
    types = _types(main.global_block())
    assert "lookup_table" not in types and "lookup_table_grad" not in types
    # forward: one chain before the first use of a lookup output
    i = types.index("split_ids")
    assert types[i:i + 3] == ["split_ids", "prefetch", "merge_ids"] and types[i + 3] == "sequence_pool"
    split, pre, merge = ops[i:i + 3]
    assert split.input("Ids") == ["C1", "C2", "C3"] and merge.input("Ids") == ["C1", "C2", "C3"]
    assert split.output("Out") == ["emb_table.prefetch_in.block0", "emb_table.prefetch_in.block1"]
    assert pre.input("X") == split.output("Out") and merge.input("X") == pre.output("Out")
    assert pre.attr("epmap") == [EP0, EP1] and pre.attr("table_names") == ["emb_table.block0", "emb_table.block1"]
    assert pre.attr("row_offsets") == [0, 501]
    pools = [op for op in ops if op.type == "sequence_pool"]
    assert merge.output("Out") == [p.input("X")[0] for p in pools]       # each lookup's output, in slot order
    # backward: merge_ids_grad (computed by the autograd region), then split_ids -> send of the rows
    j = types.index("merge_ids_grad")
    assert types[j:j + 3] == ["merge_ids_grad", "split_ids", "send"]
    g, gsplit, send = ops[j:j + 3]
    assert g.output("X@GRAD") == [n + "@GRAD" for n in pre.output("Out")]
    assert gsplit.input("X") == g.output("X@GRAD")
    assert send.input("X") == ["emb_table@GRAD.block0.trainer_0", "emb_table@GRAD.block1.trainer_0"]
    assert send.attr("epmap") == [EP0, EP1]
    # the table never reaches the trainer: not received, not in the main program; the startup only gives it
    # a shape (Paddle's fake_init in place of its init: no values, no memory)
    recvd = [n for op in ops if op.type == "recv" for n in op.attr("recv_varnames")]
    assert not any(n.startswith("emb_table") for n in recvd)
    assert not main.global_block().has_var("emb_table")
    assert [(op.type, op.attr("shape")) for op in start.global_block().ops
            if any("emb_table" in n for n in op.output_arg_names)] == [("fake_init", [1001, 4])]
    # the metrics stay on the trainer with their persistable statistics (initialised by its startup)
    assert "auc" in types and "accuracy" in types
    stats = [n for op in ops if op.type == "auc" for n in op.input("StatPos") + op.input("StatNeg")]
    assert stats and all(main.global_block().var(n).persistable for n in stats)
    inits = set(n for op in start.global_block().ops for n in op.output_arg_names)
    assert set(stats) <= inits
    assert [list(s) for s in trainer_plan(main).tables["emb_table"]["shards"]] == [[EP0, "emb_table.block0", 0, 501],
                                                                 [EP1, "emb_table.block1", 501, 500]]
    assert "emb_table" not in trainer_plan(main).remote_vars
    assert main._distributed_lookup_table == "emb_table" and start._distributed_lookup_table == "emb_table"


def test_pserver_blocks_sum_table_rows_without_averaging():
    t, main, start, m = _transpile(trainers=2, sync=True)
    for k, ep in enumerate((EP0, EP1)):
        prog, pstart = t.get_pserver_programs(ep)
        lis = prog.global_block().ops[0]
        blocks = {b.idx: _types(b) for b in prog.blocks[1:]}
        table_block = int(next(s for s in lis.attr("grad_to_block_id") if s.startswith("emb_table@GRAD")).split(":")[1])
        assert blocks[table_block] == ["sum", "sgd"]          # summed over trainers: no scale(1/trainers)
        dense = [b for i, b in blocks.items() if i != table_block and b and b[-1] == "sgd"]
        assert dense and all(b == ["sum", "scale", "sgd"] for b in dense)
        pre_var, pre_block = lis.attr("prefetch_var_name_to_block_id")[0].split(":")
        assert pre_var == "emb_table.prefetch_in.block%d" % k
        assert blocks[int(pre_block)] == ["lookup_sparse_table"]
        ck = prog.block(lis.attr("checkpint_block_id"))
        assert [(op.type, op.input("X"), op.attr("file_path")) for op in ck.ops] == \
            [("save", ["emb_table.block%d" % k], "emb_table.block%d" % k)]
        assert "emb_table@GRAD.block%d:emb_table.block%d" % (k, k) in lis.attr("sparse_grad_to_param")
        shard = prog.global_block().var("emb_table.block%d" % k)
        assert list(shard.shape) == [501 - k, 4] and shard.persistable
        # the shard's init draws only its own rows
        init = [op for op in pstart.global_block().ops if op.output_arg_names == ["emb_table.block%d" % k]]
        assert len(init) == 1 and init[0].type == "uniform_random" and init[0].attr("shape") == [501 - k, 4]


def test_async_table_block_and_optimizer_state_shards():
    t, main, start, m = _transpile(trainers=2, sync=False, opt="adagrad")
    prog, pstart = t.get_pserver_programs(EP1)
    lis = prog.global_block().ops[0]
    table_block = int(next(s for s in lis.attr("grad_to_block_id") if s.startswith("emb_table@GRAD")).split(":")[1])
    assert _types(prog.block(table_block)) == ["adagrad"]
    assert list(prog.global_block().var("emb_table_moment_0.block1").shape) == [500, 4]
    ck = prog.block(lis.attr("checkpint_block_id"))
    assert [op.attr("file_path") for op in ck.ops] == ["emb_table.block1", "emb_table_moment_0.block1"]
    # the trainer startup only gives the table a shape (fake_init), and none of its optimizer state
    assert [op.type for op in start.global_block().ops
            if any("emb_table" in n for n in op.output_arg_names)] == ["fake_init"]
    send = next(op for op in main.global_block().ops if op.type == "send" and op.attrs.get("table"))
    assert send.input("X") == ["emb_table@GRAD.block0", "emb_table@GRAD.block1"]     # no trainer suffix


def test_two_tables_share_one_prefetch_op():
    t, main, start, m = _transpile(tables=2)
    types = _types(main.global_block())
    assert types.count("prefetch") == 1 and types.count("merge_ids") == 2 and types.count("merge_ids_grad") == 2
    pre = next(op for op in main.global_block().ops if op.type == "prefetch")
    assert pre.attr("table_names") == ["emb_table.block0", "emb_table.block1", "user_table.block0", "user_table.block1"]
    assert pre.attr("epmap") == [EP0, EP1, EP0, EP1] and pre.attr("row_offsets") == [0, 501, 0, 39]


def test_test_clone_keeps_the_prefetch_chain():
    t, main, start, m = _transpile()
    test = main.clone(for_test=True)
    types = _types(test.global_block())
    assert ["split_ids", "prefetch", "merge_ids"] == types[:3]
    assert not {"merge_ids_grad", "send", "recv", "send_barrier"} & set(types)


def test_a_table_used_outside_lookups_is_refused():
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start), fluid.unique_name.guard():
        ids = fluid.layers.data(name="ids", shape=[1], dtype="int64")
        e = fluid.layers.embedding(ids, size=[100, 4], is_sparse=True, is_distributed=True,
                                   param_attr=fluid.ParamAttr(name="tbl"))
        tbl = main.global_block().var("tbl")
        loss = fluid.layers.mean(e) + fluid.layers.mean(tbl)
        fluid.optimizer.SGD(0.1).minimize(loss)
    with pytest.raises(NotImplementedError, match="tbl"):
        fluid.DistributeTranspiler().transpile(0, program=main, startup_program=start, pservers=EPS, trainers=1)


def _Ctx(program):
    return LowerCtx(program, program.global_block(), None, "cpu")


def test_split_merge_kernels_gather_rows_and_give_merged_row_gradients():
    t, main, start, m = _transpile(height=10)
    ops = {op.type: op for op in main.global_block().ops if op.type in ("split_ids", "merge_ids")}
    ctx = _Ctx(main)
    split = registry.get("split_ids").factory(ops["split_ids"], ctx)
    merge = registry.get("merge_ids").factory(ops["merge_ids"], ctx)
    ids = [torch.tensor([[3], [7], [3]]), torch.tensor([[9]]), torch.tensor([[0], [7]])]
    parts = split(ids, [])
    assert [p.reshape(-1).tolist() for p in parts] == [[0, 3], [7, 9]]     # unique, per shard of 5 rows
    table = torch.arange(40, dtype=torch.float32).reshape(10, 4)
    rows = [table[p.reshape(-1)].clone().requires_grad_(True) for p in parts]
    outs, lods = merge(ids, parts, rows, [None, None, None])
    for i, o in zip(ids, outs):
        assert torch.equal(o, table[i.reshape(-1)])
    sum(o.sum() * (k + 1) for k, o in enumerate(outs)).backward()
    # id 3 twice in slot 1 (weight 1), id 7 once in slot 1 and once in slot 3 (weight 3): merged per id
    assert rows[0].grad[:, 0].tolist() == [3.0, 2.0] and rows[1].grad[:, 0].tolist() == [4.0, 2.0]
    grads = split(parts, [r.grad for r in rows])
    assert grads[1].is_sparse and grads[1]._indices()[0].tolist() == [2, 4]   # 7, 9 within the shard [5, 10)
    with pytest.raises(IndexError, match="emb_table"):
        split([torch.tensor([[10]])], [])


def test_seeded_table_init_draws_only_the_shard_with_a_shard_seed():
    main, start = fluid.Program(), fluid.Program()
    start.random_seed = 7
    with fluid.program_guard(main, start), fluid.unique_name.guard():
        m = build_ctr_model(fluid, 2, emb_dim=4, table_height=1001, is_distributed=True, hidden=(8,))
        fluid.optimizer.SGD(0.05).minimize(m.loss)
    t = fluid.DistributeTranspiler()
    t.transpile(0, program=main, startup_program=start, pservers=EPS, trainers=1)
    seeds = []
    for k, ep in enumerate((EP0, EP1)):
        pstart = t.get_pserver_programs(ep)[1]
        init = [op for op in pstart.global_block().ops if "emb_table.block%d" % k in op.output_arg_names]
        assert len(init) == 1 and init[0].attr("shape") == [501 - k, 4]      # no whole-table draw, no split
        seeds.append(init[0].attr("seed"))
    assert 0 not in seeds and seeds[0] != seeds[1] and 7 not in seeds


def _save_local(tmp_path):
    """A local checkpoint of the model (whole table) and the matching 2-pserver transpile."""
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start), fluid.unique_name.guard():
        m = build_ctr_model(fluid, 2, emb_dim=4, table_height=1001, is_distributed=True, hidden=(8,),
                            with_metrics=False)
        fluid.optimizer.SGD(0.05).minimize(m.loss)
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(start)
    full = np.arange(1001 * 4, dtype=np.float32).reshape(1001, 4)
    fluid.global_scope().var("emb_table").value = torch.from_numpy(full.copy())
    d = str(tmp_path / "whole")
    fluid.io.save_persistables(exe, d, main)
    t = fluid.DistributeTranspiler()
    t.transpile(0, program=main, startup_program=start, pservers=EPS, trainers=1)
    return exe, t, d, full


def test_pserver_loads_its_rows_from_any_shard_layout_or_a_whole_table(tmp_path):
    import shutil
    from paddle_compat.ir.tensor_format import write_lod_tensor
    exe, t, whole, full = _save_local(tmp_path)
    three = str(tmp_path / "three")
    shutil.copytree(whole, three)
    os.remove(os.path.join(three, "emb_table"))
    for i, (off, n) in enumerate(table_rows(1001, 3)):      # saved by 3 pservers
        with open(os.path.join(three, "emb_table.block%d" % i), "wb") as f:
            write_lod_tensor(f, full[off:off + n])
    two = str(tmp_path / "two")
    shutil.copytree(whole, two)
    os.remove(os.path.join(two, "emb_table"))
    for i, (off, n) in enumerate(table_rows(1001, 2)):
        with open(os.path.join(two, "emb_table.block%d" % i), "wb") as f:
            write_lod_tensor(f, full[off:off + n] + 0.5)
    prog, pstart = t.get_pserver_programs(EP1)
    for d, want in ((whole, full[501:]), (three, full[501:]), (two, full[501:] + 0.5)):
        scope = fluid.Scope()
        with fluid.scope_guard(scope):
            exe.run(pstart)
            fluid.io.load_persistables(exe, d, prog)
            np.testing.assert_array_equal(np.array(scope.find_var("emb_table.block1").get_tensor()), want)
    # and a local program concatenates the shards back into the table
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start), fluid.unique_name.guard():
        build_ctr_model(fluid, 2, emb_dim=4, table_height=1001, hidden=(8,), with_metrics=False)
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        exe.run(start)
        fluid.io.load_persistables(exe, three, main)
        np.testing.assert_array_equal(np.array(scope.find_var("emb_table").get_tensor()), full)
    os.remove(os.path.join(three, "emb_table.block2"))       # a shard missing: the pserver says which rows
    with fluid.scope_guard(fluid.Scope()):
        exe.run(pstart)
        with pytest.raises(ValueError, match="emb_table"):
            fluid.io.load_persistables(exe, three, prog)


def test_pserver_step_sums_the_trainers_table_rows_and_a_finished_trainer_adds_none():
    from paddle_compat.backends.ps.optimize import OptimizeRunner
    t, main, start, m = _transpile(trainers=2, sync=True)
    prog, pstart = t.get_pserver_programs(EP1)
    scope, exe = fluid.Scope(), fluid.Executor(fluid.CPUPlace())
    exe.run(pstart, scope=scope)
    runner = OptimizeRunner(prog, scope, "cpu", exe)
    table = scope.find_var("emb_table.block1").value
    w0 = table.clone()
    parts = ["emb_table@GRAD.block1.trainer_0", "emb_table@GRAD.block1.trainer_1"]
    g0, g1 = torch.randn(2, 4), torch.randn(2, 4)
    # what the trainers send: (rows within the shard, values), merged per row
    grads = dict(zip(parts, runner.unpack(parts, [(torch.tensor([3, 7]), g0), (torch.tensor([7, 9]), g1)])))
    runner.run_sync(grads)         # (the dense blocks' missing parts count as zero)
    want = w0.clone()
    want[3] -= 0.05 * g0[0]
    want[7] -= 0.05 * (g0[1] + g1[0])       # summed over the trainers, not averaged
    want[9] -= 0.05 * g1[1]
    torch.testing.assert_close(table, want, rtol=0, atol=1e-6)
    w1 = table.clone()
    runner.run_sync({parts[0]: grads[parts[0]]})           # trainer 1 is done: no rows of its own
    want = w1.clone()
    want[3] -= 0.05 * g0[0]
    want[7] -= 0.05 * g0[1]
    torch.testing.assert_close(table, want, rtol=0, atol=1e-6)


# -- inference with a distributed table (no processes: the programs only) -------------------------------------

def test_exported_model_program_looks_the_table_up_locally(tmp_path):
    t, main, start, m = _transpile(tables=2)
    d = str(tmp_path / "m")
    feeds = [m.dense.name] + [v.name for v in m.slots]
    fluid.io.save_inference_model(d, feeds, [m.predict], fluid.Executor(fluid.CPUPlace()), main_program=main,
                                  program_only=True)
    assert trainer_plan(main) is not None and "prefetch" in _types(main.global_block())   # untouched
    from paddle_compat.fluid.io import read_inference_program
    prog, got_feeds, _ = read_inference_program(os.path.join(d, "__model__"))
    gb = prog.global_block()
    types = _types(gb)
    assert not set(types) & {"split_ids", "prefetch", "merge_ids", "send", "recv"}, types
    lookups = [op for op in gb.ops if op.type == "lookup_table"]
    assert len(lookups) == 3 and set(op.input("W")[0] for op in lookups) == {"emb_table"}
    assert all(not op.attrs["is_distributed"] for op in lookups)
    w = gb.var("emb_table")
    assert w.persistable and list(w.shape) == [1001, 4]


def test_test_program_cloned_before_transpile_prefetches_on_a_trainer():
    from paddle_compat.fluid.transpiler.ps_table_trainer import remote_lookups
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start), fluid.unique_name.guard():
        m = build_ctr_model(fluid, 3, emb_dim=4, table_height=1001, is_distributed=True, hidden=(8,))
        test = main.clone(for_test=True)
        fluid.optimizer.SGD(0.05).minimize(m.loss)
    tr = fluid.DistributeTranspiler()
    tr.transpile(0, program=main, startup_program=start, pservers=EPS, trainers=2)
    view = remote_lookups(test, fluid.Scope(), trainer_plan(main))
    assert view is not test and "lookup_table" in _types(test.global_block())
    types = _types(view.global_block())
    assert "lookup_table" not in types and types.count("prefetch") == 1 and "send" not in types
    assert trainer_plan(view) is not None and not view.global_block().has_var("emb_table")
    # a scope that holds the table (a local run) keeps the program as it is
    scope = fluid.Scope()
    scope.var("emb_table").get_tensor().set(np.zeros((1001, 4), "float32"), fluid.CPUPlace())
    assert remote_lookups(test, scope, trainer_plan(main)) is test
    assert remote_lookups(test, fluid.Scope(), None) is test     # no trainer program with tables ran


def _transpile_sparse(sync, neg_ids_between=False):
    """An is_sparse (not is_distributed) table; with neg_ids_between, a second lookup's ids are computed
    after the first lookup (word2vec's reshaped negatives)."""
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start), fluid.unique_name.guard():
        a = fluid.layers.data(name="a", shape=[1], dtype="int64")
        b = fluid.layers.data(name="b", shape=[2], dtype="int64")
        attr = fluid.ParamAttr(name="tbl")
        ea = fluid.layers.embedding(a, size=[50, 4], is_sparse=True, param_attr=attr)
        out = fluid.layers.reduce_sum(ea)
        if neg_ids_between:
            eb = fluid.layers.embedding(fluid.layers.reshape(b, [-1, 1]), size=[50, 4], is_sparse=True,
                                        param_attr=attr)
            out = out + fluid.layers.reduce_sum(eb)
        fluid.optimizer.SGD(0.1).minimize(out)
    t = fluid.DistributeTranspiler()
    t.transpile(0, program=main, startup_program=start, pservers=EPS, trainers=2, sync_mode=sync)
    return t.get_trainer_program(), start


def test_async_is_sparse_table_is_prefetched_like_paddle18_remote_prefetch():
    main, start = _transpile_sparse(sync=False)
    types = _types(main.global_block())
    assert "prefetch" in types and "lookup_table" not in types
    # no values on the trainer: the table's init becomes fake_init (a shape, no memory), as in Paddle 1.8
    assert [op.type for op in start.global_block().ops if "tbl" in op.output_arg_names] == ["fake_init"]
    # sync mode keeps the table on the trainer (pulled after each step; its init is a fake_init, the recv
    # after it gives the values)
    main, start = _transpile_sparse(sync=True)
    assert "lookup_table" in _types(main.global_block()) and "prefetch" not in _types(main.global_block())
    assert [op.type for op in start.global_block().ops if "tbl" in op.output_arg_names] == ["fake_init", "recv"]
    # ids computed between two lookups of the table: it stays a plain parameter
    main, _ = _transpile_sparse(sync=False, neg_ids_between=True)
    assert "prefetch" not in _types(main.global_block())
