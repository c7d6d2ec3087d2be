"""The transpiler -> runtime contract of pserver mode (backends/ps/records.py): frozen, typed records on the
ops that read them, surviving Paddle's ProgramDesc bytes and program JSON."""

import dataclasses
import json

import pytest

import paddle_compat as fluid
from paddle_compat.backends.ps import records
from paddle_compat.backends.ps.records import PserverPlan, TrainerPlan, pserver_plan, trainer_plan
from paddle_compat.ir.serialization import parse_program, program_from_dict, program_to_dict

EPS = "127.0.0.1:6174,127.0.0.1:6175"


def _transpile(sync=True, geo=False, table=False):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        x = fluid.data("x", [-1, 4])
        y = fluid.data("y", [-1, 1])
        if table:
            ids = fluid.data("ids", [-1, 1], dtype="int64")
            e = fluid.layers.embedding(ids, [100, 4], is_sparse=True, is_distributed=True, param_attr="emb_table")
            x = x + fluid.layers.reduce_sum(e, dim=1)
        loss = fluid.layers.mean(fluid.layers.square_error_cost(fluid.layers.fc(x, 1), y))
        fluid.optimizer.Adam(0.1).minimize(loss)
    cfg = fluid.DistributeTranspilerConfig()
    if geo:
        cfg.geo_sgd_mode, cfg.geo_sgd_need_push_nums = True, 2
    t = fluid.DistributeTranspiler(config=cfg)
    t.transpile(1, program=main, startup_program=startup, pservers=EPS, trainers=2, sync_mode=sync)
    return t, main, startup


def _desc(p):
    return parse_program(p.desc.serialize_to_string())


def _json(p):
    return program_from_dict(json.loads(json.dumps(program_to_dict(p))))


def test_records_are_frozen_all_the_way_down():
    t, main, _ = _transpile()
    tp = trainer_plan(main)
    with pytest.raises(dataclasses.FrozenInstanceError):
        tp.trainer_id = 0
    with pytest.raises(TypeError):
        tp.remote_vars["fc_0.w_0"] = {}
    with pytest.raises(TypeError):
        tp.remote_vars["fc_0.w_0"]["shape"] = [1]
    pp = pserver_plan(t.get_pserver_program("127.0.0.1:6174"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        pp.blocks[0].rows = 1
    assert isinstance(pp.blocks, tuple) and isinstance(pp.step_counters, tuple)


@pytest.mark.parametrize("kind", ["sync", "async", "geo", "table"])
@pytest.mark.parametrize("via", [_desc, _json])
def test_programs_read_back_carry_the_same_records(kind, via):
    t, main, startup = _transpile(sync=kind == "sync", geo=kind == "geo", table=kind == "table")
    for prog in (main, startup):
        rec = trainer_plan(prog)
        assert rec is not None and trainer_plan(via(prog)) == rec
        assert rec.mode == {"sync": "sync", "geo": "geo"}.get(kind, "async") and rec.trainer_id == 1
    for ep in EPS.split(","):
        prog = t.get_pserver_program(ep)
        rec = pserver_plan(prog)
        assert rec.endpoint == ep and rec.pserver_id == EPS.split(",").index(ep)
        assert pserver_plan(via(prog)) == rec and trainer_plan(prog) is None
        # one source for the mode: Paddle's listen_and_serv attribute says what the record says
        (ls,) = [op for op in prog.global_block().ops if op.type == "listen_and_serv"]
        assert ls.attr("sync_mode") == rec.sync_mode and rec.trainers == ls.attr("Fanin") == 2
    if kind == "table":
        assert set(trainer_plan(main).tables) == {"emb_table"}


def test_programs_without_a_plan_are_not_of_a_job():
    main = fluid.Program()
    assert trainer_plan(main) is None and pserver_plan(main) is None
    assert not records.is_trainer_program(main) and not records.is_pserver_program(main)


def test_replacing_a_record_rewrites_every_carrier():
    t, main, _ = _transpile(sync=False)
    rec = trainer_plan(main)
    records.set_trainer_plan(main, dataclasses.replace(rec, wait_port=False))
    carriers = [op for op in main.global_block().ops if records.carries_plan(op, "trainer")]
    assert carriers and all(TrainerPlan.from_attr(op.attr(records.TRAINER_PLAN_ATTR)).wait_port is False
                            for op in carriers)
    assert t.get_trainer_program(wait_port=True) is main and trainer_plan(main).wait_port is True


def test_a_bad_record_is_refused_naming_it():
    with pytest.raises(ValueError, match="mode must be one of"):
        TrainerPlan(0, 2, ("127.0.0.1:1",), "fast", "d")
    text = json.dumps(dict(json.loads(PserverPlan("a:1", 0, ("a:1",), 2, "sync", "d").to_attr()), extra=1))
    with pytest.raises(ValueError, match="PserverPlan attribute holds unknown fields \\['extra'\\]"):
        PserverPlan.from_attr(text)


def test_mode_of_is_the_one_rule():
    assert records.mode_of(True) == "sync" and records.mode_of(False) == "async"
    assert records.mode_of(False, half_async=True) == "half_async" and records.mode_of(False, geo=True) == "geo"
