"""Paddle 1.8's inference API (fluid.core.AnalysisConfig / NativeConfig / create_paddle_predictor /
PaddleTensor, zero-copy tensors, CompiledProgram._with_inference_optimize) on inference models written by
Paddle 1.8.5 predicts what Paddle 1.8.5's predictor predicted (tests/data/paddle18/make_predictor.py), and on
models saved here what the executor computes. Bad configs and inputs are named."""

import json
import os
import shutil
import warnings

import numpy as np
import pytest

import paddle_compat as fluid
from paddle_compat import core

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "paddle18")
INF = os.path.join(DATA, "inference")
META = json.load(open(os.path.join(DATA, "predictor.json")))
REF = np.load(os.path.join(DATA, "predictor.npz"))
SUBS = sorted(META)
ATOL = 1e-6     # Paddle's IR passes fuse ops (fc + act): results agree to float32 rounding


def _inputs(name):
    io = np.load(os.path.join(INF, name + "_io.npz"))
    feeds = json.load(open(os.path.join(INF, name + "_names.json")))["feeds"]
    return [(n, io["in_" + n], [[0] + np.cumsum(io["lod_" + n]).tolist()] if "lod_" + n in io else [])
            for n in feeds]


def _analysis_config(sub):
    d = os.path.join(INF, sub)
    if sub.endswith("_combined"):
        return core.AnalysisConfig(os.path.join(d, "__model__"), os.path.join(d, "params"))
    return core.AnalysisConfig(d)


def _book_tensor(n, a, lod):
    # field by field, as Paddle's book tests build them
    t = core.PaddleTensor()
    t.name, t.lod, t.shape = n, lod, list(a.shape)
    t.data = core.PaddleBuf(a)
    t.dtype = core.PaddleDType.INT64 if a.dtype == np.int64 else core.PaddleDType.FLOAT32
    return t


@pytest.mark.parity
@pytest.mark.parametrize("sub", SUBS)
def test_run_matches_paddles_predictor(sub):
    c = _analysis_config(sub)
    c.disable_gpu()
    c.switch_ir_optim(True)       # accepted, no effect
    c.enable_mkldnn()
    c.enable_memory_optim()
    c.disable_glog_info()
    c.pass_builder().delete_pass("fc_fuse_pass")
    p = core.create_paddle_predictor(c)
    assert isinstance(p, core.AnalysisPredictor)
    m = META[sub]
    assert p.get_input_names() == m["inputs"] and p.get_output_names() == m["outputs"]
    ins = _inputs(sub.replace("_combined", ""))
    for build in (lambda n, a, lod: core.PaddleTensor(a, n, lod), _book_tensor):
        outs = p.run([build(*x) for x in ins])
        assert len(outs) == len(m["run"])
        for i, (o, want) in enumerate(zip(outs, m["run"])):
            assert (o.name, o.shape, o.lod, str(o.dtype)) == (want["name"], want["shape"], want["lod"],
                                                              want["dtype"])
            np.testing.assert_allclose(o.as_ndarray(), REF["%s_run_%d" % (sub, i)], rtol=0, atol=ATOL)
            np.testing.assert_allclose(np.array(o.data.float_data()), o.as_ndarray().ravel(), rtol=0, atol=0)


@pytest.mark.parity
@pytest.mark.parametrize("sub", SUBS)
def test_zero_copy_matches_paddles_predictor(sub):
    c = _analysis_config(sub)
    c.switch_use_feed_fetch_ops(False)
    p = core.create_paddle_predictor(c)
    for n, a, lod in _inputs(sub.replace("_combined", "")):
        t = p.get_input_tensor(n)
        t.reshape(list(a.shape))
        t.copy_from_cpu(a)
        if lod:
            t.set_lod(lod)
        assert t.shape() == list(a.shape) and t.lod() == lod
    outs = [p.get_output_tensor(n) for n in p.get_output_names()]     # taken before the run, read after
    assert p.zero_copy_run() is True
    for i, (t, want) in enumerate(zip(outs, META[sub]["zero_copy"])):
        assert (t.shape(), t.lod()) == (want["shape"], want["lod"])
        assert t.type() == core.PaddleDType.FLOAT32
        np.testing.assert_allclose(t.copy_to_cpu(), REF["%s_zc_%d" % (sub, i)], rtol=0, atol=ATOL)


@pytest.mark.parity
@pytest.mark.parametrize("sub", ["mlp", "ctr_combined", "seq"])
def test_native_config_and_compiled_program_match_paddle(sub):
    d = os.path.join(INF, sub)
    c = core.NativeConfig()
    if sub.endswith("_combined"):
        c.prog_file, c.param_file = os.path.join(d, "__model__"), os.path.join(d, "params")
    else:
        c.model_dir = d
    ins = [_book_tensor(*x) for x in _inputs(sub.replace("_combined", ""))]
    p = core.create_paddle_predictor(c)
    assert isinstance(p, core.NativePaddlePredictor)
    for i, o in enumerate(p.run(ins)):
        np.testing.assert_allclose(o.as_ndarray(), REF["%s_native_%d" % (sub, i)], rtol=0, atol=ATOL)
    # Paddle's book tests: exe.run(CompiledProgram(prog)._with_inference_optimize(config), feed=[PaddleTensor])
    exe = fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(fluid.Scope()):
        prog, _, _ = fluid.io.load_inference_model(d, exe, params_filename="params" if "comb" in sub else None)
    compiled = fluid.CompiledProgram(prog)._with_inference_optimize(c)
    assert compiled._is_inference is True
    for _ in range(2):
        outs = exe.run(compiled, feed=ins)
        for i, o in enumerate(outs):
            np.testing.assert_allclose(o.as_ndarray(), REF["%s_native_%d" % (sub, i)], rtol=0, atol=ATOL)


def test_clone_and_specify_input_names():
    c = _analysis_config("ctr")
    c.switch_specify_input_names(True)
    p = core.create_paddle_predictor(c)
    ins = [core.PaddleTensor(a, n, lod) for n, a, lod in _inputs("ctr")]
    want = p.run(ins)[0].as_ndarray()
    np.testing.assert_array_equal(p.run(ins[::-1])[0].as_ndarray(), want)     # matched by name
    q = p.clone()
    np.testing.assert_array_equal(q.run(ins)[0].as_ndarray(), want)
    assert q.scope() is p.scope()
    # the serialized program is a ProgramDesc with feed/fetch ops, as Paddle's
    prog = fluid.Program.parse_from_string(p.get_serialized_program())
    assert [op.type for op in prog.global_block().ops][:2] == ["feed", "feed"]


def test_outputs_after_run_and_other_variables_by_name():
    # scripts mix the two styles: run([PaddleTensor]), then get_output_tensor(name).copy_to_cpu(), also of a
    # variable that is not a fetch target (Paddle reads its scope)
    p = core.create_paddle_predictor(_analysis_config("mlp"))
    ins = [core.PaddleTensor(a, n, lod) for n, a, lod in _inputs("mlp")]
    out = p.run(ins)[0].as_ndarray()
    np.testing.assert_array_equal(p.get_output_tensor(p.get_output_names()[0]).copy_to_cpu(), out)
    hidden = p.get_output_tensor("fc_0.tmp_2")       # relu of the first fc, asked for after the run
    exe = fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(fluid.Scope()):
        prog, feeds, _ = fluid.io.load_inference_model(os.path.join(INF, "mlp"), exe)
        want = exe.run(prog, feed={feeds[0]: ins[0].as_ndarray()}, fetch_list=["fc_0.tmp_2"])[0]
    np.testing.assert_array_equal(hidden.copy_to_cpu(), want)
    assert hidden.shape() == [4, 8]
    ins2 = [core.PaddleTensor(ins[0].as_ndarray() * 2, "x")]
    p.run(ins2)                                       # fetched with the targets from now on
    assert not np.array_equal(hidden.copy_to_cpu(), want)
    t = core.PaddleTensor()
    t.shape = (2, 3)
    assert t.shape == [2, 3]


def _saved_model(tmp_path, params):
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start), fluid.unique_name.guard():
        ids = fluid.layers.data(name="ids", shape=[1], dtype="int64", lod_level=1)
        dense = fluid.layers.data(name="dense", shape=[3], dtype="float32")
        emb = fluid.layers.embedding(ids, size=[20, 4], is_sparse=True)
        steps = fluid.layers.fc(input=emb, size=3, act="tanh")
        pooled = fluid.layers.sequence_pool(steps, "sum")
        out = fluid.layers.fc(input=fluid.layers.concat([pooled, dense], axis=1), size=2, act="softmax")
    exe = fluid.Executor(fluid.CPUPlace())
    rng = np.random.RandomState(2)
    a_ids, a_dense, lens = rng.randint(0, 20, (6, 1)).astype("int64"), rng.rand(3, 3).astype("float32"), [1, 3, 2]
    d = str(tmp_path / "model")
    with fluid.scope_guard(fluid.Scope()):
        exe.run(start)
        want = exe.run(main.clone(for_test=True), return_numpy=False, fetch_list=[out, steps],
                       feed={"ids": fluid.create_lod_tensor(a_ids, [lens], fluid.CPUPlace()), "dense": a_dense})
        fluid.io.save_inference_model(d, ["ids", "dense"], [out, steps], exe, main_program=main,
                                      params_filename=params)
    return d, [("ids", a_ids, [[0, 1, 4, 6]]), ("dense", a_dense, [])], want


@pytest.mark.parametrize("params", [None, "params"])
def test_predictor_on_a_model_saved_here(tmp_path, params):
    d, ins, want = _saved_model(tmp_path, params)
    c = core.AnalysisConfig(d) if params is None else core.AnalysisConfig(os.path.join(d, "__model__"),
                                                                           os.path.join(d, params))
    p = core.create_paddle_predictor(c)
    outs = p.run([core.PaddleTensor(a, n, lod) for n, a, lod in ins])
    for o, w in zip(outs, want):
        np.testing.assert_allclose(o.as_ndarray(), np.array(w), rtol=0, atol=1e-6)
        assert o.lod == w.lod()
    assert outs[1].lod == [[0, 1, 4, 6]]
    for n, a, lod in ins:
        t = p.get_input_tensor(n)
        t.copy_from_cpu(a)
        t.set_lod(lod)
    p.zero_copy_run()
    for n, w in zip(p.get_output_names(), want):
        np.testing.assert_allclose(p.get_output_tensor(n).copy_to_cpu(), np.array(w), rtol=0, atol=1e-6)
    # model + params from memory (AnalysisConfig.set_model_buffer)
    if params:
        prog_buf = open(os.path.join(d, "__model__"), "rb").read()
        par_buf = open(os.path.join(d, params), "rb").read()
        c = core.AnalysisConfig()
        c.set_model_buffer(prog_buf, len(prog_buf), par_buf, len(par_buf))
        assert c.model_from_memory()
        outs = core.create_paddle_predictor(c).run([core.PaddleTensor(a, n, lod) for n, a, lod in ins])
        np.testing.assert_allclose(outs[0].as_ndarray(), np.array(want[0]), rtol=0, atol=1e-6)


def test_gpu_setting_falls_back_to_cpu_without_cuda():
    import torch
    c = _analysis_config("mlp")
    c.enable_use_gpu(100, 0)
    assert c.use_gpu() and c.gpu_device_id() == 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        p = core.create_paddle_predictor(c)
    if torch.cuda.is_available():
        assert isinstance(p._exe.place, fluid.CUDAPlace)
    else:
        assert isinstance(p._exe.place, fluid.CPUPlace)
        assert any("no CUDA device" in str(w.message) for w in caught)
    out = p.run([core.PaddleTensor(a, n, lod) for n, a, lod in _inputs("mlp")])[0]
    np.testing.assert_allclose(out.as_ndarray(), REF["mlp_run_0"], rtol=0, atol=ATOL)


def test_paddle_tensor_and_buf():
    t = core.PaddleTensor(np.arange(6, dtype="int64").reshape(2, 3), "x", [[0, 2]])
    assert (t.name, t.shape, t.lod, t.dtype) == ("x", [2, 3], [[0, 2]], core.PaddleDType.INT64)
    assert t.data.length() == 48 and t.data.int64_data() == list(range(6))
    np.testing.assert_array_equal(t.as_ndarray(), np.arange(6).reshape(2, 3))
    assert str(core.PaddleDType.FLOAT32) == "PaddleDType.FLOAT32" and int(core.PaddleDType.INT32) == 2
    b = core.PaddleBuf([1.0, 2.5])
    assert b.length() == 8 and b.float_data() == [1.0, 2.5] and b.tolist("float32") == [1.0, 2.5]
    assert core.PaddleBuf(0).empty() and core.PaddleBuf(8).length() == 8
    with pytest.raises(TypeError, match="float64"):
        core.PaddleTensor(np.zeros(3), "x")
    e = core.PaddleTensor()
    e.shape, e.data = [2, 2], core.PaddleBuf(np.zeros(3, dtype="float32"))
    with pytest.raises(ValueError, match="needs 4 float32 values"):
        e.as_ndarray()


# -- bad input is named ----------------------------------------------------------------------------------

def test_bad_config_and_inputs_are_named(tmp_path):
    with pytest.raises(ValueError, match="names no model"):
        core.create_paddle_predictor(core.AnalysisConfig())
    with pytest.raises(ValueError, match="nowhere"):
        core.create_paddle_predictor(core.AnalysisConfig(str(tmp_path / "nowhere")))
    with pytest.raises(ValueError, match="no model file .*missing"):
        core.create_paddle_predictor(core.AnalysisConfig(str(tmp_path / "missing"), str(tmp_path / "p")))
    with pytest.raises(TypeError, match="AnalysisConfig or a NativeConfig"):
        core.create_paddle_predictor("model_dir")
    p = core.create_paddle_predictor(_analysis_config("ctr"))
    ins = _inputs("ctr")
    with pytest.raises(ValueError, match=r"takes 2 input\(s\) \['ids', 'dense'\], got 1"):
        p.run([core.PaddleTensor(ins[0][1], "ids", ins[0][2])])
    # (a value whose cast to float32 changes nothing is taken: executor feeds' rule; 2**24 + 1 has no float32)
    with pytest.raises(Exception, match="'dense'.*expected dtype float32, got int32"):
        p.run([core.PaddleTensor(ins[0][1], "ids", ins[0][2]),
               core.PaddleTensor(np.full((3, 3), 2 ** 24 + 1, "int32"))])
    with pytest.raises(ValueError, match="input 'ids'.*covers|input 'ids'.*ends at"):
        p.run([core.PaddleTensor(ins[0][1], "ids", [[0, 2, 9]]), core.PaddleTensor(ins[1][1])])
    with pytest.raises(ValueError, match="'nope' is not an input.*\\['ids', 'dense'\\]"):
        p.get_input_tensor("nope")
    with pytest.raises(ValueError, match="'nope' is not a variable of"):
        p.get_output_tensor("nope")
    with pytest.raises(ValueError, match=r"input\(s\) \['ids', 'dense'\] .* have no data"):
        p.zero_copy_run()
    with pytest.raises(ValueError, match="call zero_copy_run"):
        p.get_output_tensor(p.get_output_names()[0]).copy_to_cpu()
    c = _analysis_config("ctr")
    c.switch_specify_input_names(True)
    with pytest.raises(ValueError, match=r"\['idz'\] are not inputs"):
        core.create_paddle_predictor(c).run([core.PaddleTensor(ins[0][1], "idz", ins[0][2]),
                                             core.PaddleTensor(ins[1][1], "dense")])


def test_damaged_params_are_named(tmp_path):
    d = str(tmp_path / "mlp_combined")
    shutil.copytree(os.path.join(INF, "mlp_combined"), d)
    path = os.path.join(d, "params")
    data = open(path, "rb").read()
    open(path, "wb").write(data[:len(data) // 2])
    with pytest.raises(Exception, match="params"):
        core.create_paddle_predictor(core.AnalysisConfig(os.path.join(d, "__model__"), path))
    d2 = str(tmp_path / "mlp")
    shutil.copytree(os.path.join(INF, "mlp"), d2)
    os.remove(os.path.join(d2, "fc_1.w_0"))
    with pytest.raises(ValueError, match="fc_1.w_0"):
        core.create_paddle_predictor(core.AnalysisConfig(d2))


def test_model_with_an_op_we_lack_is_named_when_loaded(tmp_path):
    from paddle_compat.fluid.io import read_inference_program
    from paddle_compat.ir.proto_desc import serialize_inference_model
    d = str(tmp_path / "mlp")
    shutil.copytree(os.path.join(INF, "mlp"), d)
    prog, feeds, fetches = read_inference_program(os.path.join(d, "__model__"))
    ops = prog.global_block().ops
    i = [op.type for op in ops].index("relu")
    ops[i].type = "relu_from_the_future"
    with open(os.path.join(d, "__model__"), "wb") as f:
        f.write(serialize_inference_model(prog, feeds, fetches))
    with pytest.raises(NotImplementedError, match=r"__model__ uses op type.*'relu_from_the_future' \(block 0 op %d\)"
                       % i):
        core.create_paddle_predictor(core.AnalysisConfig(d))
