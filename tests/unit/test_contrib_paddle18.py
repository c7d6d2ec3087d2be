"""fluid.contrib: decoupled weight decay, mixed precision (loss scaling, low-precision rewrite), memory_usage,
op_freq_statistic, distributed_batch_reader. Numbers from Paddle 1.8.5: tests/data/paddle18/make_contrib.py."""

import json
import os
import sys

import numpy as np
import pytest

import paddle_compat as fluid
from paddle_compat.fluid.contrib import mixed_precision

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18")
sys.path.insert(0, DATA)
import optimizer_cases as C  # noqa: E402

with open(os.path.join(DATA, "contrib.json")) as _fh:
    REF = json.load(_fh)


def train(make_opt, watch=False, steps=C.STEPS, loss_factor=None):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        loss = C.build(fluid)
        if loss_factor is not None:
            loss = loss * loss_factor
        opt = make_opt()
        opt.minimize(loss)
    fetch = [loss] + ([opt.get_loss_scaling()] if watch else [])
    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    rec = {"loss": [], "loss_scaling": []}
    with fluid.scope_guard(scope):
        exe.run(startup)
        for _ in range(steps):
            res = exe.run(main, feed={"x": C.X, "y": C.Y}, fetch_list=fetch)
            rec["loss"].append(float(np.array(res[0]).ravel()[0]))
            if watch:
                rec["loss_scaling"].append(float(np.array(res[1]).ravel()[0]))
        rec["params"] = {n: np.array(scope.find_var(n).get_tensor()) for n in C.PARAMS}
    return rec, main


def _check(got, ref, name):
    np.testing.assert_allclose(got["loss"], ref["loss"], rtol=1e-4, err_msg=name)
    np.testing.assert_allclose(got["loss_scaling"], ref["loss_scaling"], rtol=1e-6, err_msg=name)
    for p in C.PARAMS:
        np.testing.assert_allclose(got["params"][p], np.array(ref["params"][p]), rtol=1e-4, atol=1e-6,
                                   err_msg="%s %s" % (name, p))


AdamW = fluid.contrib.extend_with_decoupled_weight_decay(fluid.optimizer.Adam)


def _amp(init, **kw):
    lists = mixed_precision.AutoMixedPrecisionLists(custom_black_list={"mul"})
    return lambda: mixed_precision.decorate(fluid.optimizer.SGD(0.1), amp_lists=lists, init_loss_scaling=init, **kw)


CASES = {
    "adamw": (lambda: AdamW(weight_decay=0.1, learning_rate=0.05), False),
    "adamw_only_w": (lambda: AdamW(weight_decay=0.1, apply_decay_param_fun=lambda n: n.startswith("w"),
                                   learning_rate=0.05), False),
    "amp_dynamic": (_amp(8.0, incr_every_n_steps=2, decr_every_n_nan_or_inf=1), True),
    "amp_overflow": (_amp(1e38, incr_every_n_steps=2, decr_every_n_nan_or_inf=2, decr_ratio=0.5), True),
    "amp_static": (_amp(64.0, use_dynamic_loss_scaling=False), True),
}


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_paddle18(name):
    got, _ = train(*CASES[name])
    _check(got, REF[name], name)


def test_overflowing_steps_are_skipped_and_scaling_shrinks():
    # (100 * loss) * 3e38 overflows float32: every step's gradient is inf, so SGD leaves the parameters alone
    # and the scaling halves after every decr_every_n_nan_or_inf + 1 bad steps (Paddle 1.8's counting)
    got, _ = train(_amp(3e38, decr_every_n_nan_or_inf=1, decr_ratio=0.5), watch=True, steps=4, loss_factor=100.0)
    np.testing.assert_allclose(got["loss_scaling"], [3e38, 1.5e38, 1.5e38, 7.5e37], rtol=1e-6)
    np.testing.assert_array_equal(got["params"]["w1"], C.W1)
    assert len(set(got["loss"])) == 1


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_low_precision_rewrite_trains_close_to_float32(dtype):
    ref, _ = train(lambda: fluid.optimizer.SGD(0.1))
    got, main = train(lambda: mixed_precision.decorate(fluid.optimizer.SGD(0.1), init_loss_scaling=1.0,
                                                       use_dynamic_loss_scaling=False, dtype=dtype))
    low = "bfloat16" if dtype == "bfloat16" else "float16"
    muls = [op for op in main.global_block().ops if op.type == "mul"]
    assert len(muls) == 2
    for op in muls:      # each white op reads and writes low-precision copies
        for n in op.input_arg_names + op.output_arg_names:
            assert str(main.global_block().var(n).dtype).lower().endswith(("bf16", "fp16", low)), (n, op)
    casts = [op for op in main.global_block().ops if op.type == "cast"]
    assert len(casts) >= 6 and any(op.type == "cast_grad" for op in main.global_block().ops)
    tol = 3e-2 if dtype == "bfloat16" else 3e-3
    np.testing.assert_allclose(got["loss"], ref["loss"], rtol=tol)
    assert got["loss"] != ref["loss"]      # the low-precision products really ran


def test_decorate_rejects_bad_settings():
    with pytest.raises(ValueError, match="bfloat16"):
        mixed_precision.decorate(fluid.optimizer.SGD(0.1), dtype="int8")
    with pytest.raises(ValueError, match="overlap"):
        mixed_precision.AutoMixedPrecisionLists(custom_white_list={"mul"}, custom_black_list={"mul"})
    with pytest.raises(TypeError, match="Optimizer class"):
        fluid.contrib.extend_with_decoupled_weight_decay(object)


@pytest.mark.parity
def test_memory_usage_matches_paddle18():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data("x", shape=[13], dtype="float32")
        h = fluid.layers.fc(x, 20, act="relu")
        fluid.layers.fc(h, 3)
    lo, hi, unit = fluid.contrib.memory_usage(main, batch_size=10)
    ref = REF["memory_usage_b10"]
    assert unit == ref[2]
    np.testing.assert_allclose([lo, hi], ref[:2], rtol=1e-9)
    with pytest.raises(ValueError, match="batch_size"):
        fluid.contrib.memory_usage(main, batch_size=0)


def test_op_freq_statistic_counts_types_and_pairs():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data("x", shape=[13], dtype="float32")
        fluid.layers.fc(fluid.layers.fc(x, 4, act="relu"), 2)
    uni, adj = fluid.contrib.op_freq_statistic(main)
    assert uni["mul"] == 2 and uni["elementwise_add"] == 2 and uni["relu"] == 1
    assert adj["mul->elementwise_add"] == 2 and adj["elementwise_add->relu"] == 1 and adj["relu->mul"] == 1
    assert list(uni)[0] in ("mul", "elementwise_add")


def test_distributed_batch_reader_takes_every_nth_batch(monkeypatch):
    monkeypatch.setenv("PADDLE_TRAINER_ID", "1")
    monkeypatch.setenv("PADDLE_TRAINERS_NUM", "3")
    r = fluid.contrib.distributed_batch_reader(lambda: iter(range(8)))
    assert list(r()) == [1, 4]
    monkeypatch.setenv("PADDLE_TRAINER_ID", "3")
    with pytest.raises(ValueError, match="PADDLE_TRAINER_ID"):
        fluid.contrib.distributed_batch_reader(lambda: iter(()))


with open(os.path.join(DATA, "contrib_layers.json")) as _fh:
    LAYERS_REF = json.load(_fh)


@pytest.mark.parity
@pytest.mark.parametrize("i", range(len(LAYERS_REF["cases"])))
def test_partial_layers_match_paddle18(i):
    c = LAYERS_REF["cases"][i]
    a0, b0 = np.array(LAYERS_REF["a"], "float32"), np.array(LAYERS_REF["b"], "float32")
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        a = fluid.layers.data("a", shape=[3, 4], dtype="float32", append_batch_size=False)
        b = fluid.layers.data("b", shape=[3, 4], dtype="float32", append_batch_size=False)
        a.stop_gradient = b.stop_gradient = False
        out = getattr(fluid.contrib.layers, c["layer"])([a, b], **c["attrs"])
        assert list(out.shape) == list(np.array(c["out"]).shape)
        w = np.linspace(-1.0, 1.5, int(np.prod(out.shape)), dtype="float32").reshape(out.shape)
        ga, gb = fluid.gradients([fluid.layers.reduce_sum(out * fluid.layers.assign(w))], [a, b])
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    o, g1, g2 = exe.run(main, feed={"a": a0, "b": b0}, fetch_list=[out, ga, gb])
    for got, key in ((o, "out"), (g1, "grad_a"), (g2, "grad_b")):
        np.testing.assert_allclose(got, c[key], rtol=1e-5, atol=1e-6, err_msg="%s %s" % (c, key))


def test_partial_layers_name_bad_spans():
    x = fluid.layers.data("x", shape=[4], dtype="float32")
    with pytest.raises(ValueError, match="start_index=3, length=2"):
        fluid.contrib.layers.partial_sum([x, x], start_index=3, length=2)
    with pytest.raises(TypeError, match="non-empty list"):
        fluid.contrib.layers.partial_concat([])


@pytest.mark.parity
@pytest.mark.parametrize("i", range(len(LAYERS_REF["fused"])))
def test_fused_elemwise_activation_matches_paddle18(i):
    c = LAYERS_REF["fused"][i]
    a0, b_all = np.array(LAYERS_REF["a"], "float32"), np.array(LAYERS_REF["b"], "float32")
    b0 = b_all if len(c["y_shape"]) == 2 else b_all[0, :c["y_shape"][0]]
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        a = fluid.layers.data("a", shape=[3, 4], dtype="float32", append_batch_size=False)
        b = fluid.layers.data("b", shape=c["y_shape"], dtype="float32", append_batch_size=False)
        a.stop_gradient = b.stop_gradient = False
        out = fluid.contrib.layers.fused_elemwise_activation(a, b, c["functors"], **c["attrs"])
        w = np.linspace(-1.0, 1.5, 12, dtype="float32").reshape(3, 4)
        ga, gb = fluid.gradients([fluid.layers.reduce_sum(out * fluid.layers.assign(w))], [a, b])
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    o, g1, g2 = exe.run(main, feed={"a": a0, "b": np.ascontiguousarray(b0)}, fetch_list=[out, ga, gb])
    for got, key in ((o, "out"), (g1, "grad_a"), (g2, "grad_b")):
        np.testing.assert_allclose(got, c[key], rtol=1e-5, atol=1e-6, err_msg="%s %s" % (c["functors"], key))


def test_fused_elemwise_activation_rejects_bad_functors():
    x = fluid.layers.data("x", shape=[4], dtype="float32")
    with pytest.raises(ValueError, match="binary/unary pair"):
        fluid.contrib.layers.fused_elemwise_activation(x, x, ["relu", "tanh"])
    with pytest.raises(ValueError, match="length should be 2"):
        fluid.contrib.layers.fused_elemwise_activation(x, x, ["relu"])
