"""nccl2 / collective transpile: program structure against real Paddle 3.3.1, attributes, validation."""

import os
import re

import pytest

import paddle_compat as fluid
from paddle_compat.ir.operator import OpRole
from paddle_compat.backends.ps.records import is_pserver_program, is_trainer_program
from helpers import startup_order

HERE = os.path.dirname(os.path.abspath(__file__))
REF = os.path.join(os.path.dirname(HERE), "data", "transpiler_structure_paddle331.txt")
EPS = ["127.0.0.1:6170", "127.0.0.1:6171"]

# Paddle 3.3.1 renamed the 1.x ops we emit: c_broadcast -> broadcast and c_allreduce_sum -> all_reduce in
# its collective transpiler, mean -> reduce_mean, and cross_entropy2 (1.8's hard-label
# cross_entropy) on softmax output -> softmax_with_cross_entropy.
# It also creates communicators outside the program, so its startup has no c_gen_nccl_id / c_comm_init.
RENAME = {"c_broadcast": "broadcast", "c_allreduce_sum": "all_reduce", "mean": "reduce_mean",
          "mean_grad": "reduce_mean_grad", "cross_entropy2": "softmax_with_cross_entropy",
          "cross_entropy_grad2": "softmax_with_cross_entropy_grad"}
NOT_IN_331 = {"c_gen_nccl_id", "c_comm_init"}


def _reference():
    sections, cur = {}, None
    for line in open(REF):
        line = line.rstrip("\n")
        if line and not line.startswith(" ") and not line.startswith("="):
            cur = sections.setdefault(line.strip(), {})
        elif cur is not None and ":" in line and line.strip().split(":")[0].strip() in ("startup", "main"):
            key, ops = line.strip().split(":", 1)
            cur[key.strip()] = _expand(ops.split())
    return sections


def _expand(tokens):
    out = []
    for t in tokens:
        m = re.match(r"^(.*)x(\d+)$", t)
        out.extend([m.group(1)] * int(m.group(2)) if m else [t])
    return out


def _ours(program):
    return [RENAME.get(op.type, op.type) for op in program.global_block().ops if op.type not in NOT_IN_331]


def _build(model):
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        if model == "fit_a_line":
            x = fluid.layers.data(name="x", shape=[13], dtype="float32")
            y = fluid.layers.data(name="y", shape=[1], dtype="float32")
            loss = fluid.layers.mean(fluid.layers.square_error_cost(fluid.layers.fc(x, 1), y))
            fluid.optimizer.SGD(0.001).minimize(loss)
        else:
            img = fluid.layers.data(name="img", shape=[784], dtype="float32")
            label = fluid.layers.data(name="label", shape=[1], dtype="int64")
            h = fluid.layers.fc(img, 200, act="relu")
            h = fluid.layers.fc(h, 200, act="relu")
            h = fluid.layers.fc(h, 10, act="softmax")
            loss = fluid.layers.mean(fluid.layers.cross_entropy(h, label))
            fluid.optimizer.SGD(0.1).minimize(loss)
    return main, start


def _transpile(main, start, trainer_id, mode, collective_mode=None, eps=EPS, nccl_comm_num=1, current=None):
    cfg = fluid.DistributeTranspilerConfig()
    cfg.mode = mode
    cfg.collective_mode = collective_mode
    cfg.nccl_comm_num = nccl_comm_num
    t = fluid.DistributeTranspiler(config=cfg)
    t.transpile(trainer_id, program=main, startup_program=start, trainers=",".join(eps) if isinstance(eps, list)
                else eps, current_endpoint=current or EPS[trainer_id])
    return t


CASES = [(m, mode, cm, tid) for m in ("fit_a_line", "mlp") for (mode, cm) in
         [("nccl2", None), ("collective", "grad_allreduce"), ("collective", "local_sgd")] for tid in (0, 1)]


@pytest.mark.parametrize("model,mode,collective_mode,trainer_id", CASES)
def test_structure_matches_paddle(model, mode, collective_mode, trainer_id):
    key = "%s/sgd/mode=%s%s/trainer_id=%d" % (model, mode, "/collective_mode=%s" % collective_mode
                                              if collective_mode else "", trainer_id)
    ref = _reference()[key]
    assert len(ref["startup"]) >= 4 and len(ref["main"]) >= 13
    main, start = _build(model)
    _transpile(main, start, trainer_id, mode, collective_mode)
    assert startup_order(_ours(start)) == startup_order(ref["startup"])
    assert _ours(main) == ref["main"]


def test_nccl2_startup_var_and_attrs_main_untouched():
    main, start = _build("fit_a_line")
    before = [(op.type, dict(op.inputs), dict(op.outputs), dict(op.attrs)) for op in main.global_block().ops]
    cfg = fluid.DistributeTranspilerConfig()
    cfg.mode = "nccl2"
    # the seed documents' spelling: workers=...
    fluid.DistributeTranspiler(cfg).transpile(1, program=main, startup_program=start, workers=",".join(EPS),
                                              current_endpoint=EPS[1])
    assert [(op.type, dict(op.inputs), dict(op.outputs), dict(op.attrs)) for op in main.global_block().ops] == before
    v = start.global_block().var("NCCLID")
    assert v.persistable and v.type == fluid.core.VarDesc.VarType.RAW
    op = start.global_block().ops[-1]
    assert op.type == "gen_nccl_id" and op.output("NCCLID") == ["NCCLID"]
    assert op.attr("trainers") == EPS and op.attr("trainer_id") == 1 and op.attr("endpoint") == EPS[1]
    assert op.attr("nccl_comm_num") == 1 and op.attr("use_hierarchical_allreduce") is False
    assert op.attr("hierarchical_allreduce_inter_nranks") == 0
    assert main._trainers_endpoints == EPS and main._nccl_comm_num == 1
    # io.py's pserver save/load path must not trigger: no pserver-mode record on any op
    assert not is_trainer_program(main) and not is_pserver_program(main)


def test_nccl2_extra_rings_declare_ids():
    main, start = _build("fit_a_line")
    cfg = fluid.DistributeTranspilerConfig()
    cfg.mode, cfg.nccl_comm_num, cfg.use_hierarchical_allreduce = "nccl2", 2, True
    fluid.DistributeTranspiler(cfg).transpile(0, program=main, startup_program=start, trainers=",".join(EPS),
                                              current_endpoint=EPS[0])
    b = start.global_block()
    for n in ("NCCLID_1", "Hierarchical_inter_NCCLID_0", "Hierarchical_exter_NCCLID_1"):
        assert b.var(n).persistable
    assert main._nccl_comm_num == 2


def test_collective_startup_communicators_and_broadcast():
    main, start = _build("fit_a_line")
    _transpile(main, start, 1, "collective", "grad_allreduce")
    ops = start.global_block().ops
    gen, init = ops[3], ops[4]
    assert gen.type == "c_gen_nccl_id" and gen.attr("rank") == 1 and gen.attr("endpoint") == EPS[1]
    assert gen.attr("other_endpoints") == [EPS[0]]
    assert init.type == "c_comm_init" and init.input("X") == gen.output("Out")
    assert (init.attr("nranks"), init.attr("rank"), init.attr("ring_id")) == (2, 1, 0)
    bcast = [op for op in ops if op.type == "c_broadcast"]
    assert sorted(op.input("X")[0] for op in bcast) == ["fc_0.b_0", "fc_0.w_0"]
    assert all(op.attr("root") == 0 and op.input("X") == op.output("Out") for op in bcast)
    # grad_allreduce, not local_sgd (which keeps <p>@SNAPSHOT copies)
    assert "c_allreduce_sum" in [op.type for op in main.global_block().ops]
    assert not any(n.endswith("@SNAPSHOT") for n in main.global_block().vars)


def test_grad_allreduce_scales_loss_grad_and_alternates_rings():
    main, start = _build("mlp")
    _transpile(main, start, 0, "collective", "grad_allreduce", nccl_comm_num=2)
    ops = main.global_block().ops
    i = next(i for i, op in enumerate(ops) if op.attrs.get("op_role") == OpRole.Backward | OpRole.Loss)
    scale = ops[i + 1]
    assert scale.type == "scale" and scale.attr("scale") == 0.5 and scale.input("X") == ops[i].output("Out")
    ar = [op for op in ops if op.type == "c_allreduce_sum"]
    assert [op.input("X")[0] for op in ar] == ["fc_2.b_0@GRAD", "fc_2.w_0@GRAD", "fc_1.b_0@GRAD", "fc_1.w_0@GRAD",
                                               "fc_0.b_0@GRAD", "fc_0.w_0@GRAD"]
    assert [op.attr("ring_id") for op in ar] == [1, 0, 1, 0, 1, 0]   # alternating, ring 0 for the last grad
    first_opt = next(i for i, op in enumerate(ops) if op.type == "sgd")
    assert [ops[first_opt - 2].type, ops[first_opt - 1].type] == ["c_sync_comm_stream"] * 2
    assert [ops[first_opt - 2].attr("ring_id"), ops[first_opt - 1].attr("ring_id")] == [0, 1]
    assert sum(op.type == "c_comm_init" for op in start.global_block().ops) == 2


def test_local_sgd_snapshots():
    main, start = _build("fit_a_line")
    _transpile(main, start, 0, "collective", "local_sgd")
    sb, mb = start.global_block(), main.global_block()
    for p in ("fc_0.w_0", "fc_0.b_0"):
        assert sb.var(p + "@SNAPSHOT").persistable and mb.var(p + "@SNAPSHOT").persistable
    assigns = [op for op in sb.ops if op.type == "assign"]
    assert sorted((op.input("X")[0], op.output("Out")[0]) for op in assigns) == \
        [("fc_0.b_0", "fc_0.b_0@SNAPSHOT"), ("fc_0.w_0", "fc_0.w_0@SNAPSHOT")]
    tail = mb.ops[-6:]
    assert [op.type for op in tail] == ["scale", "elementwise_sub", "assign"] * 2
    assert tail[0].attr("scale") == 0.5 and tail[1].input("X") == [tail[2].output("Out")[0]]


@pytest.mark.parametrize("mode", ["nccl2", "collective"])
@pytest.mark.parametrize("trainers,current,match", [
    ("127.0.0.1", EPS[0], "ip:port"),
    ("127.0.0.1:6170,127.0.0.1:99999", EPS[0], "out of range"),
    ("127.0.0.1:6170,127.0.0.1:6170", EPS[0], "more than once"),
    ("127.0.0.1:6170,127.0.0.1:abc", EPS[0], "not a number"),
    (",".join(EPS), "127.0.0.1:7000", "current_endpoint 127.0.0.1:7000 is not trainer 0's endpoint"),
    (",".join(EPS), EPS[1], "is not trainer 0's endpoint"),
])
def test_bad_endpoints_are_named(mode, trainers, current, match):
    main, start = _build("fit_a_line")
    with pytest.raises(ValueError, match=match):
        _transpile(main, start, 0, mode, "grad_allreduce" if mode == "collective" else None, eps=trainers,
                   current=current)
    assert not any(op.type in ("gen_nccl_id", "c_comm_init") for op in start.global_block().ops)


def test_trainer_id_out_of_range():
    main, start = _build("fit_a_line")
    with pytest.raises(ValueError, match="trainer_id 2 is out of range for 2"):
        _transpile(main, start, 2, "nccl2", current=EPS[0])


def test_collective_needs_two_endpoints():
    main, start = _build("fit_a_line")
    with pytest.raises(ValueError, match="at least 2 trainer endpoints, got 1"):
        _transpile(main, start, 0, "collective", "local_sgd", eps=[EPS[0]])


@pytest.mark.parametrize("bad", [None, "allreduce", "single_process_multi_thread"])
def test_bad_collective_mode(bad):
    main, start = _build("fit_a_line")
    with pytest.raises(ValueError, match="collective_mode must be one of grad_allreduce, local_sgd"):
        _transpile(main, start, 0, "collective", bad)


@pytest.mark.parametrize("mode,cm", [("nccl2", None), ("collective", "grad_allreduce")])
def test_transpiling_a_startup_program_twice_is_refused(mode, cm):
    main, start = _build("fit_a_line")
    _transpile(main, start, 0, mode, cm)
    with pytest.raises(ValueError, match="transpile each startup program once"):
        _transpile(main, start, 0, mode, cm)
