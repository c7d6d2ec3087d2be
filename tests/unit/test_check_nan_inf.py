"""FLAGS_check_nan_inf=1 (backends/lowering/nan_check.py) reports what Paddle 1.8.5 reports: the same op and
variable at the same step, with the same counts of nan / inf / finite values, for forward, backward,
optimizer, learning-rate and while-body ops and the PADDLE_INF_NAN_SKIP_* settings
(tests/data/paddle18/nan_inf.json, made by make_nan_inf.py from nan_inf_cases.py). With the flag off the same
programs run as before, and the lowered code has no check in it."""

import json
import os
import re
import sys

import numpy as np
import pytest

import paddle_compat as fluid
from paddle_compat.backends.lowering import fusion, nan_check
from paddle_compat.backends.lowering.codegen import lower_block

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "paddle18")
sys.path.insert(0, DATA)
import nan_inf_cases as C  # noqa: E402

with open(os.path.join(DATA, "nan_inf.json")) as _f:
    REF = json.load(_f)

pytestmark = pytest.mark.parity


@pytest.fixture
def flag(monkeypatch):
    for k in ("FLAGS_check_nan_inf", "PADDLE_INF_NAN_SKIP_OP", "PADDLE_INF_NAN_SKIP_ROLE", "PADDLE_INF_NAN_SKIP_VAR"):
        monkeypatch.delenv(k, raising=False)

    def set_(on, **env):
        monkeypatch.setenv("FLAGS_check_nan_inf", "1" if on else "0")
        for k, v in env.items():
            monkeypatch.setenv(k, v)
    return set_


def _run(name, steps):
    """(fetched values of the steps that ran, the exception or None, step it was raised at)"""
    main, startup, feed, out = C.build(fluid, name)
    exe = fluid.Executor(fluid.CPUPlace())
    fetched = []
    with fluid.scope_guard(fluid.Scope()):
        exe.run(startup)
        for step in range(steps):
            try:
                got = exe.run(main, feed=feed, fetch_list=[out])[0]
            except Exception as e:  # noqa: BLE001  (compared below)
                return fetched, e, step
            fetched.append(np.asarray(got).astype("float64").ravel().tolist())
    return fetched, None, None


@pytest.mark.parametrize("name", sorted(C.CASES))
def test_reports_what_paddle_reports(flag, name):
    ref = REF["cases"][name]
    flag(True, **ref["env"])
    fetched, err, step = _run(name, C.CASES[name][1])
    if "op" not in ref:
        assert err is None, err
    else:
        assert isinstance(err, nan_check.NanInfError), err
        msg = str(err)
        assert step == ref["step"] and msg.startswith(ref["summary"]), (step, msg)
        nan, inf, num = re.search(r"there has (\d+),(\d+),(\d+) nan,inf,num", " ".join(ref["printed"])).groups()
        assert "%s nan, %s inf and %s finite values" % (nan, inf, num) in msg, msg
        assert "created at %s" % os.path.join(DATA, "nan_inf_cases.py") in msg, msg
    if name != "int_output":        # (a nan cast to int64 is undefined behaviour)
        np.testing.assert_array_equal(fetched, ref["fetched"])


@pytest.mark.parametrize("name", sorted(C.PROGRAM.get(n, n) for n in C.CASES if n not in C.PROGRAM))
def test_flag_off_runs_as_before(flag, name):
    flag(False)
    fetched, err, _ = _run(name, C.CASES[name][1])
    assert err is None and len(fetched) == C.CASES[name][1], err


def test_set_flags_between_runs_takes_effect(flag):
    # the executor keys its lowered code on the flag
    flag(False)
    main, startup, feed, out = C.build(fluid, "log_negative")
    exe = fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(fluid.Scope()):
        exe.run(startup)
        assert np.isnan(exe.run(main, feed=feed, fetch_list=[out])[0]).all()
        fluid.set_flags({"FLAGS_check_nan_inf": True})
        with pytest.raises(nan_check.NanInfError, match=r"\[op=log\] \[tensor=log_0.tmp_0\]"):
            exe.run(main, feed=feed, fetch_list=[out])
        fluid.set_flags({"FLAGS_check_nan_inf": False})
        assert np.isnan(exe.run(main, feed=feed, fetch_list=[out])[0]).all()


@pytest.mark.parametrize("name", ["backward_inner_grad", "while_body", "lr_schedule"])
def test_no_check_in_the_code_when_off(flag, name):
    main, startup, feed, out = C.build(fluid, name)
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        fluid.Executor(fluid.CPUPlace()).run(startup)
    flag(False)
    srcs = {}
    for on in (None, False, True):
        srcs[on] = lower_block(main, 0, scope, "cpu", list(feed), [out.name], check_nan_inf=on).src
    assert srcs[None] == srcs[False] and "__nan" not in srcs[False]
    assert "__nan_out" in srcs[True]
    assert ("__nan_hook" in srcs[True]) == (name != "while_body")     # gradients hooked where there are any


def test_fused_lookups_are_checked_one_by_one(flag):
    # the lookup_table + sequence_pool fusion is off while checking: a nan row is found in lookup_table's output
    ids = fluid.data("ids", [None, 1], "int64", lod_level=1)
    w = np.ones((5, 2), "float32")
    w[3] = np.nan
    attr = fluid.ParamAttr("emb", initializer=fluid.initializer.NumpyArrayInitializer(w))
    pooled = [fluid.layers.sequence_pool(fluid.layers.embedding(ids, [5, 2], param_attr=attr), "sum")
              for _ in range(2)]
    out = fluid.layers.sum(pooled)
    assert fusion.plan(fluid.default_main_program().global_block(), [out.name])    # fused without the flag
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(fluid.default_startup_program())     # (its assign_value would be caught with the flag on)
    flag(True)
    t = fluid.create_lod_tensor(np.array([[1], [3]], "int64"), [[2]], fluid.CPUPlace())
    with pytest.raises(nan_check.NanInfError, match=r"\[op=lookup_table\] \[tensor=embedding_0.tmp_0\]"):
        exe.run(feed={"ids": t}, fetch_list=[out])


def test_skip_role_is_checked(flag):
    flag(True, PADDLE_INF_NAN_SKIP_ROLE="backwards")
    with pytest.raises(ValueError, match="PADDLE_INF_NAN_SKIP_ROLE: unknown role 'backwards'"):
        _run("log_negative", 1)
