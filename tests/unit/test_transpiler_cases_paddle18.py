"""Pserver-mode programs against Paddle 1.8.5 (tests/data/paddle18/make_transpiler_cases.py recorded
transpiler_cases.json) for the cases of tests/transpiler_cases.py: an async exponential decay (per-trainer
step counters), piecewise_decay under SGD and under Momentum + L2Decay (Switch case blocks copied to the
pservers), RMSProp (the _parameters_on_pservers record), and is_sparse tables (fake_init).

What differs on purpose, normalised here:
- optimize blocks are children of block 0 (Paddle's are children of the last block before them);
- a cut parameter's optimizer state is `<state>.block<i>` on each pserver (Paddle gave both halves the whole
  var's name) in the startup programs and the record;
- fetch_barrier has no output var (Paddle's is a dummy control var);
- Paddle 1.8 prefetched every is_sparse table, in sync mode too (distributed_lookup_table on the trainer);
  our sync trainers pull those tables (lookup_table + recv), so the record calls them Param, not
  RemotePrefetch, and their fake_init stands before the recv that gives them their values;
- Momentum + L2Decay: Paddle sends fc_b@GRAD after mul_grad (its regularization's sum wrote the gradient in
  place, and the send followed the last writer); ours right after the gradient's last backward op."""

import collections
import json
import os
import re
import sys

import pytest

import paddle_compat as fluid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import transpiler_cases as C  # noqa: E402

with open(os.path.join(os.path.dirname(HERE), "data", "paddle18", "transpiler_cases.json")) as _fh:
    REF = json.load(_fh)
CASES = sorted(REF)
_OURS = {}


def ours(case):
    if case not in _OURS:
        _OURS[case] = C.record(fluid, case)
    return _OURS[case]


def _parents0(blocks):
    """Optimize blocks (children of the last block before them in Paddle) as children of block 0."""
    opt = ("sgd", "momentum", "rmsprop", "adam")
    return [[i, 0 if any(t in opt for t in ops) else p, ops] for i, p, ops in blocks]


def _no_control_vars(ops):
    return [[t, [] if t == "fetch_barrier" else outs] for t, outs in ops]


def _state_names(ops, ref_names):
    """Our `<state>.block<i>` as Paddle's `<state>` (names Paddle's program has kept as they are)."""
    return [[t, [n if n in ref_names else re.sub(r"\.block\d+$", "", n) for n in outs]] for t, outs in ops]


def test_every_case_recorded():
    assert CASES == sorted(C.CASES)


@pytest.mark.parametrize("case", CASES)
def test_pserver_programs_match_paddle18(case):
    for ep in C.EPS:
        assert ours(case)["pserver:" + ep] == _parents0(REF[case]["pserver:" + ep]), ep
        assert ours(case)["listen:" + ep] == REF[case]["listen:" + ep], ep


@pytest.mark.parametrize("case", CASES)
def test_pserver_startups_match_paddle18(case):
    for ep in C.EPS:
        ref = REF[case]["pserver_startup:" + ep]
        names = set(n for _, outs in ref for n in outs)
        assert _state_names(ours(case)["pserver_startup:" + ep], names) == ref, ep


@pytest.mark.parametrize("case", [c for c in CASES if c != "sparse_tables"])
def test_trainer_startups_match_paddle18(case):
    """The LR step counter keeps its init; async adds every trainer's step counter (first, Paddle's order)."""
    assert ours(case)["trainer_startup"] == _no_control_vars(REF[case]["trainer_startup"])


def test_async_step_counters_are_summed_on_the_pservers():
    got = ours("exp_decay_sgd_async")
    assert [o for o in got["trainer_startup"][:3]] == [["fill_constant", ["@LR_DECAY_COUNTER@.trainer_1"]],
                                                        ["fill_constant", ["@LR_DECAY_COUNTER@.trainer_0"]],
                                                        ["fill_constant", ["@LR_DECAY_COUNTER@"]]]
    for ep in C.EPS:
        assert got["pserver:" + ep][1][2][0] == "sum"
    # the trainer sends its own counter to every pserver, after its gradients
    main, startup = C.build(fluid, "exp_decay_sgd_async")
    t = fluid.DistributeTranspiler()
    t.transpile(1, program=main, startup_program=startup, pservers=",".join(C.EPS), trainers=2, sync_mode=False)
    sends = [op for op in t.get_trainer_program(wait_port=False).global_block().ops if op.type == "send"]
    assert sends[-1].input("X") == ["@LR_DECAY_COUNTER@.trainer_1"]
    assert sends[-1].attr("epmap") == C.EPS
    # the pservers' counters: trainer 0's starts where the counter did (-1), the others at 0; the trainers'
    # hold the step they send (1)
    values = {op.output_arg_names[0]: op.attr("value") for op in t.get_startup_program(C.EPS[0]).global_block().ops
              if op.type == "fill_constant"}
    assert (values["@LR_DECAY_COUNTER@.trainer_0"], values["@LR_DECAY_COUNTER@.trainer_1"]) == (-1.0, 0.0)
    values = {op.output_arg_names[0]: op.attr("value") for op in startup.global_block().ops
              if op.type == "fill_constant"}
    assert (values["@LR_DECAY_COUNTER@.trainer_0"], values["@LR_DECAY_COUNTER@.trainer_1"]) == (1.0, 1.0)


@pytest.mark.parametrize("case", ["exp_decay_sgd_async", "piecewise_sgd", "rmsprop"])
def test_trainer_programs_match_paddle18(case):
    assert ours(case)["trainer"] == REF[case]["trainer"]


def test_piecewise_l2_trainer_matches_paddle18_but_for_one_send():
    got, ref = ours("piecewise_momentum_l2")["trainer"], REF["piecewise_momentum_l2"]["trainer"]
    assert got[1:] == ref[1:]                 # the Switch's case blocks stay, as in Paddle
    assert collections.Counter(got[0][2]) == collections.Counter(ref[0][2])
    i = ref[0][2].index("mul_grad")
    assert ref[0][2][i:i + 2] == ["mul_grad", "send"] and got[0][2][i:i + 2] == ["send", "mul_grad"]


def test_sparse_tables_get_fake_init_like_paddle18():
    ref = [o for o in REF["sparse_tables"]["trainer_startup"] if o[0] == "fake_init"]
    got = ours("sparse_tables")["trainer_startup"]
    assert sorted(o for o in got if o[0] == "fake_init") == sorted(ref)
    assert got[0] == REF["sparse_tables"]["trainer_startup"][0]      # the LR counter's init
    # no other init of a table is left, and each fake_init comes before the recv that fills its table
    types = [t for t, _ in got]
    assert types.count("fill_constant") == 1 and "uniform_random" not in types
    assert max(i for i, (t, _) in enumerate(got) if t == "fake_init") < types.index("recv")
    # fake_init's shape is the table's (Paddle's startup op shapes)
    main, startup = C.build(fluid, "sparse_tables")
    t = fluid.DistributeTranspiler()
    t.transpile(0, program=main, startup_program=startup, pservers=",".join(C.EPS), trainers=2)
    t.get_trainer_program(wait_port=False)
    shapes = {op.output_arg_names[0]: op.attr("shape") for op in startup.global_block().ops if op.type == "fake_init"}
    assert shapes == {"emb": [10000, 8], "emb_w": [10000, 8], "emb_b": [10000, 1]}


def _params(rows):
    return [r[1:] for r in rows if r[0] in ("Param", "RemotePrefetch")]


@pytest.mark.parametrize("case", CASES)
def test_parameters_on_pservers_match_paddle18(case):
    got, ref = ours(case)["overview"], REF[case]["overview"]
    assert _params(got) == _params(ref)
    # optimizer state: the same vars on the same pservers, each pserver's slices adding up to the whole
    # (Paddle recorded RMSProp's cut mean_grad as unsliced whole copies on both pservers)
    def state(rows):
        return sorted((r[1], r[6]) for r in rows if r[0] == "Optimizer")
    assert state(got) == state(ref)
    for name in set(r[1] for r in got if r[0] == "Optimizer"):
        rows = [r for r in got if r[0] == "Optimizer" and r[1] == name]
        numel = lambda s: int(__import__("numpy").prod(s))   # noqa: E731
        assert sum(numel(r[4]) for r in rows) == numel(rows[0][2]), name


def test_paddle_load_slice_var_query():
    """Paddle's TestLoadSliceVar: a pserver program answers for every pserver's slices."""
    main, startup = C.build(fluid, "rmsprop")
    t = fluid.DistributeTranspiler()
    t.transpile(0, program=main, startup_program=startup, pservers=",".join(C.EPS), trainers=2)
    ps = t.get_pserver_program(C.EPS[0])
    a, b = (ps._parameters_on_pservers.get_distributed_vars_by_ep(ep) for ep in C.EPS)
    assert a and b
    for v in a:
        if not v.is_slice:
            assert list(v.origin.shape) == list(v.slice.shape)
            continue
        other = next(w for w in b if w.origin.name == v.origin.name)
        assert v.slice.shape[0] + other.slice.shape[0] == v.origin.shape[0]
    # and the trainer program carries the same record
    assert t.get_trainer_program(wait_port=False)._parameters_on_pservers is ps._parameters_on_pservers


def test_fake_init_gives_the_shape_without_memory():
    prog = fluid.Program()
    block = prog.global_block()
    block.create_var(name="tbl", shape=[100000, 64], dtype="float32", persistable=True)
    block.append_op(type="fake_init", inputs={}, outputs={"Out": ["tbl"]}, attrs={"shape": [100000, 64]})
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        fluid.Executor(fluid.CPUPlace()).run(prog)
    t = scope.find_var("tbl").value
    assert tuple(t.shape) == (100000, 64) and t.stride() == (0, 0) and str(t.dtype) == "torch.float32"
    # a trainer knows the placeholder holds no values (a looked-up distributed table is then fetched)
    from paddle_compat.fluid.transpiler.ps_table_trainer import holds_values
    assert not holds_values(scope.find_var("tbl")) and not holds_values(None)
