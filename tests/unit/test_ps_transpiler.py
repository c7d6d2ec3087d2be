"""Pserver-mode transpiler: slicing rule, placement, sliced init values, getters in any order, errors."""

import numpy as np
import pytest

import paddle_compat as fluid
import reference_data as R
from paddle_compat.fluid.transpiler.ps_slicing import block_rows
from paddle_compat.backends.ps.records import pserver_plan, trainer_plan

EPS2 = "127.0.0.1:6174,127.0.0.1:6175"
EPS3 = "127.0.0.1:6174,127.0.0.1:6175,127.0.0.1:6176"
FIT_INIT, MLP_INIT = R.make_init()


def test_slicing_rule():
    assert block_rows([1000, 1000], 2, 8192) == [(0, 500), (500, 500)]
    assert block_rows([1000, 1000], 3, 8192) == [(0, 334), (334, 334), (668, 332)]
    assert block_rows([8193], 2, 8192) == [(0, 8193)]
    assert block_rows([784, 200], 2, 8192) == [(0, 392), (392, 392)]
    assert block_rows([200, 200], 2, 8192) == [(0, 100), (100, 100)]
    assert block_rows([200, 10], 2, 8192) == [(0, 200)]
    assert block_rows([16384 * 3], 3, 8192) == [(0, 16384), (16384, 16384), (32768, 16384)]
    # width alignment: 10 rows of 3000 -> blocks of 4 rows at most 3 pservers apart
    assert block_rows([10, 3000], 3, 8192) == [(0, 4), (4, 4), (8, 2)]


def _mlp(opt="sgd"):
    return R.build_mlp(fluid, MLP_INIT, opt)


def _transpile(eps=EPS2, trainers=2, sync=True, **cfg_kw):
    cfg = fluid.DistributeTranspilerConfig()
    for k, v in cfg_kw.items():
        setattr(cfg, k, v)
    t = fluid.DistributeTranspiler(config=cfg)
    t.transpile(0, pservers=eps, trainers=trainers, sync_mode=sync)
    return t


def _run_startup(prog):
    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(prog, scope=scope)
    return scope


def test_pserver_startup_slices_numpy_values():
    """Paddle wrote the whole NumpyArrayInitializer value into each block; each block gets its rows."""
    _mlp("adam")
    t = _transpile()
    for ep in EPS2.split(","):
        prog, startup = t.get_pserver_programs(ep)
        scope = _run_startup(startup)
        for name, (orig, off, rows, kind, what) in pserver_plan(prog).local_vars.items():
            val = np.array(scope.find_var(name).get_tensor())
            if what == "param":
                i = int(orig[3])
                full = MLP_INIT[i][0] if orig.endswith("w_0") else MLP_INIT[i][1]
                np.testing.assert_array_equal(val, full[off:off + rows])
            elif name.startswith(orig) and "moment" in name:
                assert val.shape[0] == rows and not val.any()


def test_seeded_random_init_blocks_equal_rows_of_the_local_init():
    main, startup = fluid.default_main_program(), fluid.default_startup_program()
    main.random_seed = startup.random_seed = 7
    x = fluid.layers.data(name="x", shape=[784], dtype="float32")
    h = fluid.layers.fc(x, 200)
    fluid.optimizer.SGD(0.1).minimize(fluid.layers.mean(h))
    local = np.array(_run_startup(startup.clone()).find_var("fc_0.w_0").get_tensor())
    t = _transpile()
    got = {}
    for ep in EPS2.split(","):
        prog, pstart = t.get_pserver_programs(ep)
        scope = _run_startup(pstart)
        for name, (orig, off, rows, kind, what) in pserver_plan(prog).local_vars.items():
            if orig == "fc_0.w_0":
                got[off] = np.array(scope.find_var(name).get_tensor())
    np.testing.assert_array_equal(np.concatenate([got[k] for k in sorted(got)]), local)


def test_getters_any_order_any_number_of_times():
    _mlp()
    t = _transpile()
    a = t.get_pserver_program("127.0.0.1:6174")
    tp = t.get_trainer_program(wait_port=False)
    b = t.get_pserver_program("127.0.0.1:6174")
    tp2 = t.get_trainer_program(wait_port=False)
    s1 = t.get_startup_program("127.0.0.1:6175")
    s2 = t.get_pserver_programs("127.0.0.1:6175")[1]
    assert tp is tp2 is fluid.default_main_program()
    assert str(a) == str(b)
    assert [op.type for op in s1.global_block().ops] == [op.type for op in s2.global_block().ops]
    assert trainer_plan(tp).wait_port is False


def test_user_variables_stay_valid_after_in_place_rewrite():
    loss = _mlp()
    img = fluid.default_main_program().global_block().var("img")
    _transpile()
    gb = fluid.default_main_program().global_block()
    assert gb.var(loss.name) is loss and gb.var("img") is img


def test_hashname_is_stable_and_places_grad_with_param():
    _mlp()
    t = _transpile(eps=EPS3, split_method=fluid.transpiler.HashName)
    import zlib
    for b in t._result.plan.dispatch:
        assert b.endpoint == EPS3.split(",")[zlib.crc32(b.name.encode()) % 3]
    main = fluid.default_main_program()
    sent = {}
    for op in main.global_block().ops:
        if op.type == "send":
            for ep, n in zip(op.attrs["epmap"], op.attrs["send_varnames"]):
                sent[n.split("@GRAD")[0] + n.split("@GRAD")[1].split(".trainer")[0]] = ep
        if op.type == "recv":
            for ep, n in zip(op.attrs["epmap"], op.attrs["recv_varnames"]):
                assert sent[n] == ep


def test_bad_inputs_are_named():
    _mlp()
    with pytest.raises(ValueError, match="6190"):
        fluid.DistributeTranspiler().transpile(0, pservers="127.0.0.1:6174,127.0.0.1:6190x", trainers=2)
    with pytest.raises(ValueError, match="out of range"):
        fluid.DistributeTranspiler().transpile(2, pservers=EPS2, trainers=2)
    with pytest.raises(ValueError, match="256.0.0.1"):
        fluid.DistributeTranspiler().transpile(0, pservers="256.0.0.1:6174", trainers=2)
    with pytest.raises(ValueError, match="trainers"):
        fluid.DistributeTranspiler().transpile(0, pservers=EPS2, trainers=0)
    with pytest.raises(ValueError, match="more than once"):
        fluid.DistributeTranspiler().transpile(0, pservers="127.0.0.1:6174,127.0.0.1:6174", trainers=2)
    with pytest.raises(ValueError, match="70000"):
        fluid.DistributeTranspiler().transpile(0, pservers="127.0.0.1:70000", trainers=2)
    cfg = fluid.DistributeTranspilerConfig()
    cfg.mode = "pserverx"
    with pytest.raises(ValueError, match="pserverx"):
        fluid.DistributeTranspiler(cfg).transpile(0, pservers=EPS2, trainers=2)
    t = _transpile()
    with pytest.raises(ValueError, match="127.0.0.1:9999"):
        t.get_pserver_program("127.0.0.1:9999")
    with pytest.raises(ValueError, match="already transpiled"):
        _transpile()


def test_dc_asgd_needs_async():
    _mlp()
    with pytest.raises(ValueError, match="enable_dc_asgd"):
        _transpile(enable_dc_asgd=True)


def test_program_without_optimizer_is_rejected():
    x = fluid.layers.data(name="x", shape=[13], dtype="float32")
    fluid.layers.fc(x, 1)
    with pytest.raises(ValueError, match="minimize"):
        _transpile()


def test_global_norm_clip_stays_on_the_trainer():
    # as Paddle 1.8.5: set_gradient_clip's ops (an @CLIP name scope) run on each trainer, which sends the clipped
    # gradients (tests/unit/test_ps_clip_structure.py, tests/dist/test_ps_grad_clip.py)
    x = fluid.layers.data(name="x", shape=[13], dtype="float32")
    h = fluid.layers.fc(fluid.layers.fc(x, 4), 1)
    fluid.clip.set_gradient_clip(fluid.clip.GradientClipByGlobalNorm(1.0))
    fluid.optimizer.SGD(0.1).minimize(fluid.layers.mean(h))
    _transpile()
    types = [op.type for op in fluid.default_main_program().global_block().ops]
    assert "sqrt" in types and "sgd" not in types and types.index("sqrt") < types.index("send")


def test_global_norm_clip_given_to_the_optimizer_is_refused():
    # optimizer(grad_clip=...) puts its ops in the optimize chains (no @CLIP scope), as in Paddle 1.8.5, whose
    # get_pserver_program then dies with a MemoryError on this program; we say why
    x = fluid.layers.data(name="x", shape=[13], dtype="float32")
    h = fluid.layers.fc(fluid.layers.fc(x, 4), 1)
    fluid.optimizer.SGD(0.1, grad_clip=fluid.clip.GradientClipByGlobalNorm(1.0)).minimize(fluid.layers.mean(h))
    with pytest.raises(NotImplementedError, match="set_gradient_clip"):
        _transpile()


def test_per_parameter_clip_given_to_the_optimizer_moves_to_the_pserver():
    # Paddle 1.8.5's get_pserver_program fails on this program (ValueError: vector::_M_range_insert); ours runs
    # the clip in the parameter's pserver block, after the trainers' gradients are averaged
    x = fluid.layers.data(name="x", shape=[13], dtype="float32")
    h = fluid.layers.fc(x, 1)
    fluid.optimizer.SGD(0.1, grad_clip=fluid.clip.GradientClipByValue(0.5)).minimize(fluid.layers.mean(h))
    t = _transpile()
    assert "clip" not in [op.type for op in fluid.default_main_program().global_block().ops]
    blocks = [[op.type for op in b.ops] for b in t.get_pserver_program("127.0.0.1:6174").blocks[1:]]
    assert ["sum", "scale", "clip", "sgd"] in blocks


def test_clip_by_norm_on_a_cut_parameter_runs_on_the_trainer():
    # the whole gradient is clipped on the trainer, then cut into the parameter's blocks
    x = fluid.layers.data(name="x", shape=[784], dtype="float32")
    h = fluid.layers.fc(x, 200, param_attr=fluid.ParamAttr(gradient_clip=fluid.clip.GradientClipByNorm(1.0)))
    fluid.optimizer.SGD(0.1).minimize(fluid.layers.mean(h))
    _transpile()
    types = [op.type for op in fluid.default_main_program().global_block().ops]
    assert types.index("clip_by_norm") < types.index("split_byref")


def test_clip_by_value_stays_and_l2_decay_moves_to_the_pserver():
    # the programs Paddle 1.8.5 builds for this net (checked against it): the trainer clips, the pserver
    # averages, adds the decay and updates
    x = fluid.layers.data(name="x", shape=[784], dtype="float32")
    h = fluid.layers.fc(x, 200, param_attr=fluid.ParamAttr(gradient_clip=fluid.clip.GradientClipByValue(0.5)))
    fluid.optimizer.SGD(0.1, regularization=fluid.regularizer.L2Decay(1e-4)).minimize(fluid.layers.mean(h))
    t = _transpile()
    main = fluid.default_main_program()
    assert [op.type for op in main.global_block().ops] == [
        "mul", "elementwise_add", "mean", "fill_constant", "mean_grad", "elementwise_add_grad", "send", "mul_grad",
        "clip", "split_byref", "send", "send_barrier", "recv", "recv", "fetch_barrier", "concat"]
    prog = t.get_pserver_program("127.0.0.1:6175")
    assert [[op.type for op in b.ops] for b in prog.blocks] == [["listen_and_serv"],
                                                               ["sum", "scale", "scale", "sum", "sgd"]]
    assert all(op.input_arg_names for op in prog.blocks[1].ops)


def test_inference_model_from_a_trainer_program_saves_local_copies(tmp_path):
    """save_inference_model prunes the trainer program: no send ops, so no pserver is contacted."""
    loss = _mlp()
    _transpile()
    main = fluid.default_main_program()
    pred = main.global_block().var("fc_2.tmp_2")
    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(scope):
        for i, (w, b) in enumerate(MLP_INIT):      # what the trainer would hold after pulling
            scope.var("fc_%d.w_0" % i).get_tensor().set(w)
            scope.var("fc_%d.b_0" % i).get_tensor().set(b)
        fluid.io.save_inference_model(str(tmp_path), ["img"], [pred], exe, main_program=main)
        prog, feeds, fetches = fluid.io.load_inference_model(str(tmp_path), exe)
    assert feeds == ["img"] and loss is not None
    assert not any(op.type in ("send", "recv") for op in prog.global_block().ops)
    np.testing.assert_array_equal(np.array(scope.find_var("fc_0.w_0").get_tensor()), MLP_INIT[0][0])


def test_transpiling_loads_no_torch():
    import subprocess
    import sys
    from dist_utils import base_env
    code = ("import sys, paddle_compat as fluid\n"
            "x = fluid.layers.data(name='x', shape=[13]); y = fluid.layers.fc(x, 1)\n"
            "fluid.optimizer.Adam(0.1).minimize(fluid.layers.mean(y))\n"
            "t = fluid.DistributeTranspiler(); t.transpile(0, pservers='%s', trainers=2)\n"
            "t.get_pserver_programs('127.0.0.1:6174'); t.get_trainer_program(wait_port=False)\n"
            "print([m for m in ('torch', 'torch.distributed.rpc', 'mpi4py') if m in sys.modules])\n" % EPS2)
    out = subprocess.run([sys.executable, "-c", code], env=base_env(), capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", out.stdout
