"""search_pyramid_hash under Geo-SGD: the table named in distribute_update_vars has no optimizer op (Paddle
updates it inside the op's backward), yet it is exchanged like any parameter: the trainer's geo_sgd op covers
it and a pserver block adds its deltas. Other pserver modes refuse it by name."""

import pytest

import paddle_compat as fluid

EPS = "127.0.0.1:6001,127.0.0.1:6002"


def _build(geo):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data(name="x", shape=[16, 10], dtype="int32", lod_level=1)
        h = fluid.contrib.layers.search_pyramid_hash(
            input=x, num_emb=64, space_len=128 * 64, pyramid_layer=4, rand_len=16, drop_out_percent=0.5,
            is_training=True, use_filter=False, white_list_len=6400, black_list_len=2800, seed=3, lr=0.002,
            param_attr=fluid.ParamAttr(name="PyramidHash_emb_0", learning_rate=0),
            param_attr_wl=fluid.ParamAttr(name="Filter", learning_rate=0), distribute_update_vars=["PyramidHash_emb_0"])
        fluid.optimizer.SGD(0.1).minimize(fluid.layers.reduce_sum(h))
        cfg = fluid.DistributeTranspilerConfig()
        cfg.sync_mode = False
        cfg.geo_sgd_mode = geo
        cfg.geo_sgd_need_push_nums = 5
        t = fluid.DistributeTranspiler(cfg)
        t.transpile(0, program=main, startup_program=startup, pservers=EPS, trainers=2, sync_mode=False)
    return t, main


def test_geo_exchanges_the_bp_updated_table():
    t, main = _build(True)
    geo = main.global_block().ops[-1]
    assert geo.type == "geo_sgd" and geo.input("X") == ["PyramidHash_emb_0"]
    blocks = []
    for ep in EPS.split(","):
        prog, startup = t.get_pserver_programs(ep)
        for b in prog.global_block().ops[0].attr("optimize_blocks"):
            blocks += [[(op.type, op.output("Out")[0]) for op in b.ops]] if b.ops else []
    assert blocks == [[("sum", "PyramidHash_emb_0")]]


def test_other_modes_refuse_it():
    with pytest.raises(NotImplementedError, match="PyramidHash_emb_0.*Geo-SGD"):
        _build(False)
