"""Geo-SGD programs: the trainer keeps its optimizer and ends with one geo_sgd op; its startup keeps the
optimizer state, pulls the pservers' weights and snapshots them; pserver blocks add deltas (`sum`)."""

import numpy as np
import pytest

import paddle_compat as fluid
import reference_data as R
from paddle_compat.backends.ps.records import trainer_plan

EPS = "127.0.0.1:6001,127.0.0.1:6002"


def _transpile(opt="adam", push=3, emb=False):
    _, mlp_init = R.make_init()
    if emb:
        ids = fluid.layers.data(name="ids", shape=[1], dtype="int64")
        e = fluid.layers.embedding(ids, size=[100, 4], is_sparse=True, is_distributed=True)
        R.make_optimizer(fluid, opt, 0.01).minimize(fluid.layers.mean(e))
    else:
        R.build_mlp(fluid, mlp_init, opt)
    cfg = fluid.DistributeTranspilerConfig()
    cfg.geo_sgd_mode = True
    cfg.geo_sgd_need_push_nums = push
    t = fluid.DistributeTranspiler(cfg)
    t.transpile(1, pservers=EPS, trainers=2)
    return t


def _types(prog):
    return [op.type for op in prog.global_block().ops]


def test_trainer_programs():
    t = _transpile()
    main, startup = fluid.default_main_program(), fluid.default_startup_program()
    types = _types(main)
    assert types[-1] == "geo_sgd" and types.count("adam") == 6 and "send" not in types and "recv" not in types
    geo = main.global_block().ops[-1]
    assert geo.attr("push_nums") == 3 and geo.attr("trainers") == 2
    assert geo.input("X") == sorted(geo.input("X")) and all(o.endswith("@GEO_OLD") for o in geo.input("Old"))
    layout = dict((p, blocks) for p, blocks in geo.attr("layout"))
    assert [b[0] for b in layout["fc_0.w_0"]] == ["fc_0.w_0.block0", "fc_0.w_0.block1"]
    st = _types(startup)
    assert st.count("fill_constant") >= 24 and st.count("recv") == 6 and st[-6:] == ["assign"] * 6
    assert trainer_plan(main).geo and t.get_trainer_program() is main


def test_pserver_programs_add_deltas_only():
    t = _transpile()
    prog, startup = t.get_pserver_programs("127.0.0.1:6001")
    ls = prog.global_block().ops[0]
    assert _types(prog) == ["listen_and_serv"] and ls.attr("distributed_mode") == 3 and not ls.attr("sync_mode")
    for b in ls.attr("optimize_blocks"):
        assert [op.type for op in b.ops] == ["sum"]
        assert b.ops[0].output("Out")[0] == b.ops[0].input("X")[0]
    assert set(_types(startup)) == {"assign_value"}    # parameter blocks only: no optimizer state, no LR


def test_geo_rejects_tables_and_dc_asgd():
    with pytest.raises(NotImplementedError, match="distributed lookup table"):
        _transpile(opt="sgd", emb=True)


def test_geo_rejects_dc_asgd_and_bad_push_nums():
    for field, value, msg in (("enable_dc_asgd", True, "enable_dc_asgd"),
                              ("geo_sgd_need_push_nums", 0, "positive int")):
        main, start = fluid.Program(), fluid.Program()
        with fluid.program_guard(main, start):
            x = fluid.layers.data(name="x", shape=[3])
            fluid.optimizer.SGD(0.1).minimize(fluid.layers.mean(fluid.layers.fc(x, 1)))
        cfg = fluid.DistributeTranspilerConfig()
        cfg.geo_sgd_mode = True
        setattr(cfg, field, value)
        with pytest.raises(ValueError, match=msg):
            fluid.DistributeTranspiler(cfg).transpile(0, program=main, startup_program=start, pservers=EPS,
                                                      trainers=1)


def test_geo_kernel_follows_paddles_communicator(monkeypatch):
    """Every push_nums-th call: delta = (x - old)/T; old += delta; send; then x += p - old; old = p, where p is
    the pserver's block after adding our delta (and, here, 0.25 another trainer pushed)."""
    import torch
    from paddle_compat.backends.ps import kernels as geo_ops
    from paddle_compat.ir.operator import Operator

    class FakeClient:
        def __init__(self):
            self.server = {"w": torch.tensor([1.0, 1.0])}
            self.sent = []

        def exchange_async(self, ep, names, tensors, want):
            self.sent.append((ep, list(names), [t.clone() for t in tensors]))
            self.server["w"] += tensors[0] + 0.25
            return [self.server[w].clone() for w in want]

        def wait(self, ep, fut, what):
            return fut

    client = FakeClient()
    monkeypatch.setattr(geo_ops, "for_executor", lambda exe, info: client)
    op = Operator(None, "geo_sgd", {"X": ["w"], "Old": ["w@GEO_OLD"]}, {"Out": ["w"], "OldOut": ["w@GEO_OLD"]},
                  {"push_nums": 2, "trainers": 2, "layout": [["w", [["w", "w@GRAD", "ep0", 0, 2]]]]})

    class Ctx:
        program = fluid.Program()
        executor, device = None, "cpu"

    k = geo_ops.geo_sgd(op, Ctx())
    x, old = torch.tensor([3.0, 1.0]), torch.tensor([1.0, 1.0])
    k([x], [old])
    assert client.sent == [] and x.tolist() == [3.0, 1.0]          # step 1: nothing to push yet
    k([x], [old])
    assert client.sent[0][1] == ["w@GRAD"] and client.sent[0][2][0].tolist() == [1.0, 0.0]   # (3-1)/2, (1-1)/2
    # pserver: 1 + 1 + 0.25 = 2.25 and 1 + 0 + 0.25 = 1.25; old after the push: 2, 1
    assert client.server["w"].tolist() == [2.25, 1.25]
    assert x.tolist() == [3.25, 1.25] and old.tolist() == [2.25, 1.25]


def test_geo_sgd_transpiler_module_is_the_geo_mode():
    """Paddle 1.8's paddle.fluid.transpiler.geo_sgd_transpiler.GeoSgdTranspiler gives the same programs as
    DistributeTranspiler with config.geo_sgd_mode, and leaves the caller's config unchanged."""
    from paddle_compat.fluid.transpiler.geo_sgd_transpiler import GeoSgdTranspiler
    _, mlp_init = R.make_init()
    R.build_mlp(fluid, mlp_init, "adam")
    cfg = fluid.DistributeTranspilerConfig()
    cfg.geo_sgd_need_push_nums = 3
    t = GeoSgdTranspiler(cfg)
    t.transpile(1, pservers=EPS, trainers=2)
    assert cfg.geo_sgd_mode is False
    main = fluid.default_main_program()
    assert _types(main)[-1] == "geo_sgd" and main.global_block().ops[-1].attr("push_nums") == 3
    prog, _ = t.get_pserver_programs("127.0.0.1:6001")
    assert prog.global_block().ops[0].attr("distributed_mode") == 3


def _clipped_net():
    x = fluid.layers.data(name="x", shape=[4])
    h = fluid.layers.fc(x, 300)     # 4 x 300 = 1200 rows of weights: cut into two blocks
    loss = fluid.layers.mean(fluid.layers.fc(h, 1))
    fluid.clip.set_gradient_clip(fluid.clip.GradientClipByGlobalNorm(2.0))
    fluid.optimizer.SGD(0.1).minimize(loss)


def test_geo_keeps_a_global_norm_clip_on_the_trainer():
    """Geo-SGD trainers run their own optimizer, so GradientClipByGlobalNorm (a norm over all parameters)
    needs no pserver: the trainer keeps the clip ops, the pservers still only add deltas. Sync/async pserver
    mode keeps them on the trainer too (as Paddle 1.8.5: each trainer sends its clipped gradients)."""
    _clipped_net()
    cfg = fluid.DistributeTranspilerConfig()
    cfg.geo_sgd_mode = True
    t = fluid.DistributeTranspiler(cfg)
    t.transpile(0, pservers=EPS, trainers=2)
    types = _types(fluid.default_main_program())
    assert types[-1] == "geo_sgd" and "sqrt" in types and types.count("sgd") == 4
    prog, _ = t.get_pserver_programs("127.0.0.1:6001")
    for b in prog.global_block().ops[0].attr("optimize_blocks"):
        assert [op.type for op in b.ops] == ["sum"]
    fluid.framework.switch_main_program(fluid.Program())
    fluid.framework.switch_startup_program(fluid.Program())
    _clipped_net()
    fluid.DistributeTranspiler().transpile(0, pservers=EPS, trainers=2)
    types = _types(fluid.default_main_program())
    assert "sqrt" in types and "sgd" not in types and "send_barrier" in types
