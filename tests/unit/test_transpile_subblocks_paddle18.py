"""Transpiling programs with sub-blocks against Paddle 1.8.5 (tests/data/paddle18/make_transpile_subblocks.py
recorded transpile_subblocks.json): the rnn_encoder_decoder book model (DynamicRNN decoder) and the While/cond
model of tests/subblock_models.py, in pserver mode (2 pservers, 2 trainers) and collective grad_allreduce mode.

What must match: the forward sub-blocks (op types, parent_idx), block 0's forward ops, the comm ops (send /
send_barrier / recv / fetch_barrier, c_allreduce_sum) each right after the same producer of the gradient (the
`while_grad` / `conditional_block_grad` for parameters used inside sub-blocks), and the pserver programs.
What differs on purpose: Paddle records a grad sub-block per forward sub-block and expands backward op by op;
our gradients come from autograd over the whole control flow, so block 0 records one `*_grad` op per forward
op and no grad sub-blocks follow the forward ones."""

import json
import os
import sys

import pytest

import paddle_compat as fluid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import book_seq2seq  # noqa: E402
import subblock_models  # noqa: E402

with open(os.path.join(os.path.dirname(HERE), "data", "paddle18", "transpile_subblocks.json")) as _fh:
    REF = json.load(_fh)
EPS = ["127.0.0.1:6174", "127.0.0.1:6175"]
TRAINER_EPS = ["127.0.0.1:6170", "127.0.0.1:6171"]
COMM = {"send", "send_barrier", "recv", "fetch_barrier", "c_allreduce_sum"}
MODELS = sorted(REF)


def _build(model):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        if model in ("while_cond", "switch_lr"):
            subblock_models.build.__globals__[model + "_model"](fluid)
        else:
            book_seq2seq.MODELS[model](fluid)
    return main, startup


def _blocks(prog):
    return [[b.idx, b.parent_idx, [op.type for op in b.ops]] for b in prog.blocks]


def _ours(model):
    out = {"origin": _blocks(_build(model)[0])}
    main, startup = _build(model)
    t = fluid.DistributeTranspiler()
    t.transpile(0, program=main, startup_program=startup, pservers=",".join(EPS), trainers=2)
    out["trainer0"] = _blocks(t.get_trainer_program(wait_port=False))
    for ep in EPS:
        out["pserver:" + ep] = _blocks(t.get_pserver_program(ep))
    main, startup = _build(model)
    cfg = fluid.DistributeTranspilerConfig()
    cfg.mode, cfg.collective_mode = "collective", "grad_allreduce"
    t = fluid.DistributeTranspiler(config=cfg)
    t.transpile(0, program=main, startup_program=startup, trainers=",".join(TRAINER_EPS),
                current_endpoint=TRAINER_EPS[0])
    out["collective"] = _blocks(main)
    return out


def _forward_blocks(blocks):
    """The sub-blocks the forward part records (Paddle's grad sub-blocks come after them)."""
    n = sum(1 for b in _forward_ops(blocks[0][2]) if b in ("while", "conditional_block", "recurrent"))
    return [b[:3] for b in blocks[1:1 + n]]


def _forward_ops(ops):
    end = next(i for i, t in enumerate(ops) if t.endswith("_grad"))
    # the loss-grad fill_constant (Paddle 1.8.5's collective inserts its scale after it) ends the forward
    return [t for t in ops[:end] if t != "scale"][:-2]


def _comm_anchors(ops):
    """[(comm op, the last non-comm op before it)] of block 0, with Paddle's c_sync_calc_stream left out."""
    out, last = [], None
    for t in ops:
        if t in COMM:
            out.append((t, last))
        elif t not in ("c_sync_calc_stream", "c_sync_comm_stream"):
            last = t
    return out


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("what", ["trainer0", "collective"])
def test_trainer_side_matches_paddle18(model, what):
    ours = _ours(model)[what]
    ref = [[i, p, list(ops)] for i, p, ops in REF[model][what]]
    assert _forward_blocks(ours) == _forward_blocks(ref)
    assert _forward_ops(ours[0][2]) == _forward_ops(ref[0][2])
    got, want = _comm_anchors(ours[0][2]), _comm_anchors(ref[0][2])
    assert len(got) == len(want)
    # the anchors of gradients of parameters used inside sub-blocks: the control-flow grad ops
    flow = lambda a: [x for x in a if x[1] in ("while_grad", "conditional_block_grad")]  # noqa: E731
    assert flow(got) == flow(want) and (flow(got) or model == "switch_lr")
    assert [c for c, _ in got] == [c for c, _ in want] or what == "trainer0"
    assert sorted(c for c, _ in got) == sorted(c for c, _ in want)


def _paddle_parents_fixed(blocks):
    """Paddle 1.8.5 creates the optimize blocks that follow an LR block's sub-block copies as children of the
    last copy (it does not return to block 0 after copying); ours are children of block 0, like the others."""
    return [[i, 0 if any(t in ("sgd", "adagrad") for t in ops) else p, ops] for i, p, ops in blocks]


@pytest.mark.parametrize("model", MODELS)
def test_pserver_programs_match_paddle18(model):
    ours = _ours(model)
    for ep in EPS:
        assert ours["pserver:" + ep] == _paddle_parents_fixed(REF[model]["pserver:" + ep]), ep


def test_lr_schedule_sub_blocks_are_copied_to_the_pserver():
    """The Switch's conditional_blocks in the pserver's LR block name the pserver's own copies of their
    sub-blocks (children of the LR block), not the trainer program's block indices."""
    main, startup = _build("switch_lr")
    t = fluid.DistributeTranspiler()
    t.transpile(0, program=main, startup_program=startup, pservers=",".join(EPS), trainers=2)
    prog = t.get_pserver_program(EPS[0])
    lr = prog.block(1)
    subs = [op.attr("sub_block") for op in lr.ops if op.type == "conditional_block"]
    assert [b.idx for b in subs] == [2, 3]
    assert all(prog.block(b.idx) is b and b.parent_idx == 1 for b in subs)
    assert [op.type for op in prog.block(2).ops] == ["fill_constant"]


def test_trainer_keeps_sub_blocks_and_their_parents():
    """Block indices and parent_idx of the forward sub-blocks survive the trainer rewrite, and the op
    holding each sub-block still points at it."""
    ours = _ours("while_cond")
    main, startup = _build("while_cond")
    t = fluid.DistributeTranspiler()
    t.transpile(0, program=main, startup_program=startup, pservers=",".join(EPS), trainers=2)
    prog = t.get_trainer_program(wait_port=False)
    assert _blocks(prog)[1:] == ours["origin"][1:]
    for op in prog.global_block().ops:
        if op.type in ("while", "conditional_block"):
            sb = op.attr("sub_block")
            assert prog.block(sb.idx) is sb and sb.parent_idx == 0
