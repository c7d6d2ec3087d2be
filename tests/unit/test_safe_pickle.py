"""Pickled files load without running code (paddle_compat/ir/safe_pickle.py).

Every file Paddle 1.8.5 writes or reads as a pickle loads as Paddle read it (tests/data/paddle18/pickles/ and
pickles.json: fluid.save, save_dygraph, user pickles of protocols 3 and 4, numpy 1.21; make_pickles.py), and
so do NumPy 2 pickles (numpy._core, protocols 2-5) and Python 2 pickles (Python 2 builds of Paddle, CIFAR's
batches). Crafted files of each gadget class are refused, naming the file and what they asked for, and
nothing runs: each gadget writes a marker file when plain pickle loads it (test_gadgets_are_live checks that
in a child process), and the marker never appears here."""

import copyreg
import functools
import io
import json
import os
import pickle
import pickletools
import subprocess
import sys
import tarfile

import numpy as np
import pytest

import paddle_compat as fluid
from paddle_compat.dataset import common
from paddle_compat.ir import safe_pickle
from paddle_compat.ir.safe_pickle import UnsafePickleError

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")
P18 = os.path.join(DATA, "paddle18")
sys.path.insert(0, os.path.join(DATA, "numpy2_pickles"))
sys.path.insert(0, os.path.join(DATA, "python2_pickles"))
import make_numpy2_pickles  # noqa: E402
import make_python2_pickles  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:the matrix subclass")   # (the matrix gadget)


def _same(got, want, path="state"):
    assert type(got) is type(want), "%s: %s != %s" % (path, type(got), type(want))
    if isinstance(want, dict):
        assert sorted(got, key=repr) == sorted(want, key=repr), path
        for k in want:
            _same(got[k], want[k], "%s[%r]" % (path, k))
    elif isinstance(want, (list, tuple)):
        assert len(got) == len(want), path
        for i, (g, w) in enumerate(zip(got, want)):
            _same(g, w, "%s[%d]" % (path, i))
    elif isinstance(want, (np.ndarray, np.generic)):
        assert got.dtype == want.dtype and np.shape(got) == np.shape(want), path
        assert np.array_equal(got, want), path
        if isinstance(want, np.ndarray):
            assert got.flags.writeable, path
            if want.flags.f_contiguous and not want.flags.c_contiguous:     # a Fortran-order array stays one
                assert got.flags.f_contiguous, path
    else:
        assert got == want, path


def _describe(d):
    """make_pickles.describe, here: what Paddle 1.8.5 read back."""
    out = {}
    for k, v in sorted(d.items()):
        if isinstance(v, np.ndarray):
            out[k] = ["ndarray", str(v.dtype), list(v.shape)]
        elif isinstance(v, dict):
            out[k] = _describe(v)
        else:   # numpy 2's repr of a scalar is np.float32(0.5); numpy 1.21's str and repr are both 0.5
            out[k] = [type(v).__name__, str(v) if isinstance(v, np.generic) else repr(v)]
    return out


@pytest.fixture(scope="module")
def rec():
    with open(os.path.join(P18, "pickles.json")) as f:
        return json.load(f)


# ---- what must load ----

def test_paddle18_globals_are_the_table(rec):
    # every global a Paddle 1.8.5 file names is one of ours; numpy 1's module paths
    assert rec["numpy"].startswith("1.")
    assert rec["all_globals"] == ["_codecs.encode", "numpy.core.multiarray._reconstruct",
                                  "numpy.core.multiarray.scalar", "numpy.dtype", "numpy.ndarray"]
    for g in rec["all_globals"]:
        module, name = g.rsplit(".", 1)
        assert (module, name) in safe_pickle.TABLE, g
    assert {f: v["protocol"] for f, v in rec["files"].items()} == {
        "static.pdparams": 2, "static.pdopt": 2, "dygraph.pdparams": 2, "dygraph.pdopt": 2,
        "p3.pdparams": 3, "p4.pdparams": 4}


@pytest.mark.parametrize("name", ["static", "p3", "p4"])
def test_paddle18_state_files_load_as_paddle_read_them(rec, name):
    path = os.path.join(P18, "pickles", name)
    got = fluid.io.load_program_state(path)
    assert _describe(got) == rec["paddle_reads"][name]
    want = {}
    for ext in ("pdparams", "pdopt"):
        if os.path.exists(path + "." + ext):
            with open(path + "." + ext, "rb") as f:       # files of this repository: plain pickle is fine
                want.update(pickle.load(f, encoding="latin1"))
    _same(got, want)


def test_paddle18_dygraph_files_load_as_paddle_read_them(rec):
    base = os.path.join(P18, "pickles", "dygraph")
    for ext, key in (("pdparams", "dygraph_params"), ("pdopt", "dygraph_opt")):
        got = safe_pickle.load_path(base + "." + ext)
        assert _describe(got) == rec["paddle_reads"][key]
        with open(base + "." + ext, "rb") as f:
            _same(got, pickle.load(f, encoding="latin1"))
    assert got["LR_Scheduler"] == {"step_num": 2}


@pytest.mark.parametrize("proto", [2, 3, 4, 5])
def test_numpy2_pickles_load(proto):
    path = os.path.join(DATA, "numpy2_pickles", "np2_p%d.pdparams" % proto)
    with open(path, "rb") as f:
        assert b"numpy._core" in f.read()
    _same(safe_pickle.load_path(path), make_numpy2_pickles.state())
    state = fluid.io.load_program_state(path[:-len(".pdparams")])
    assert state["fc_0.w_0"].dtype == np.float32 and state["big_endian"].dtype.str == ">i4"


def test_python2_pickles_load():
    state, batch = make_python2_pickles.expected()
    base = os.path.join(DATA, "python2_pickles")
    _same(fluid.io.load_program_state(os.path.join(base, "state_p2")), state)
    for proto in (0, 2):
        path = os.path.join(base, "cifar_p%d.pkl" % proto)
        _same(safe_pickle.load_path(path, encoding="latin1"), batch)
        got = safe_pickle.load_path(path, encoding="bytes")     # as paddle.dataset.cifar reads CIFAR
        _same(got, {k.encode(): v.encode() if isinstance(v, str) else v for k, v in batch.items()})


def test_our_files_name_two_globals(tmp_path):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", [None, 4], "float32")
        loss = fluid.layers.reduce_mean(fluid.layers.fc(x, 3))
        fluid.optimizer.Adam(0.1).minimize(loss)
    exe = fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(fluid.Scope()):
        exe.run(startup)
        fluid.save(main, str(tmp_path / "m"))
    for ext in ("pdparams", "pdopt"):
        with open(str(tmp_path / ("m." + ext)), "rb") as f:
            data = f.read()
        assert _globals(data) == {"_codecs.encode", "numpy.ndarray"}, ext
        _same(safe_pickle.load(io.BytesIO(data), ext), pickle.loads(data))


def _globals(data):
    out = set()
    for op, arg, _ in pickletools.genops(data):
        if op.name == "GLOBAL":
            out.add(arg.replace(" ", "."))
        assert op.name != "STACK_GLOBAL"
    return out


@pytest.mark.parametrize("proto", range(pickle.HIGHEST_PROTOCOL + 1))
def test_plain_data_of_every_protocol(proto):
    obj = {"f32": np.arange(6, dtype="float32").reshape(2, 3), "f16": np.float16(1.5), "c8": np.complex64(1 - 2j),
           "b": np.array([True, False]), "u8": np.arange(3, dtype="u1"), "i8be": np.arange(3, dtype=">i8"),
           "empty": np.zeros((0, 2), "float64"), "strided": np.arange(10.0)[::3], "0d": np.array(2.5),
           "dtype": np.dtype("int16"), "list": [1, -2, 10 ** 30, 2.5, "s", b"b", b"", None, True],
           "tuple": (1, (2, [3])), "set": {1, 2}, "frozen": frozenset(["a"]), "nested": {"k": {"j": [np.int32(4)]}}}
    got = safe_pickle.load(io.BytesIO(pickle.dumps(obj, protocol=proto)), "mem")
    assert got["dtype"] == np.dtype("int16") and got["set"] == {1, 2} and got["frozen"] == frozenset(["a"])
    _same({k: v for k, v in got.items() if k not in ("dtype", "set", "frozen")},
          {k: v for k, v in obj.items() if k not in ("dtype", "set", "frozen")})


# ---- gadgets: each would run code (or build an object) under pickle.load ----

class _Reduce:
    def __init__(self, fn, *args):
        self.fn, self.args = fn, args

    def __reduce__(self):
        return self.fn, self.args


def _cmd(marker):
    return "touch %s" % marker


def _inner(marker):
    return pickle.dumps(_Reduce(os.system, _cmd(marker)), protocol=2)


def _npy_object_array(marker):
    buf = io.BytesIO()
    np.save(buf, np.array([_Reduce(os.system, _cmd(marker))], dtype=object), allow_pickle=True)
    return buf.getvalue()


def _raw(text):
    return text.encode("utf-8")


SYSTEM = "%s.system" % os.system.__module__        # posix.system
# name -> (builder(marker) -> pickle bytes, what the refusal names, runs code under plain pickle)
GADGETS = {
    "os_system_reduce": (lambda m: pickle.dumps(_Reduce(os.system, _cmd(m)), protocol=2), SYSTEM, True),
    "os_system_reduce_p0": (lambda m: pickle.dumps(_Reduce(os.system, _cmd(m)), protocol=0), SYSTEM, True),
    "os_system_reduce_p5": (lambda m: pickle.dumps(_Reduce(os.system, _cmd(m)), protocol=5), SYSTEM, True),
    "builtins_eval": (lambda m: pickle.dumps(_Reduce(eval, "open(%r, 'w').close()" % str(m)), protocol=4),
                      "builtins.eval", True),
    "builtins_getattr_import": (
        lambda m: _raw("cbuiltins\ngetattr\n(cbuiltins\n__import__\n(Vos\ntRVsystem\ntR(V%s\ntR." % _cmd(m)),
        "builtins.getattr", True),
    "builtins_import": (lambda m: _raw("cbuiltins\n__import__\n(Vos\ntR."), "builtins.__import__", False),
    "functools_partial": (lambda m: pickle.dumps(_Reduce(functools.partial(os.system, _cmd(m))), protocol=2),
                          "functools.partial", True),
    "operator_attrgetter": (
        lambda m: _raw("coperator\nattrgetter\n(Vsystem\ntR(cbuiltins\n__import__\n(Vos\ntRtR(V%s\ntR." % _cmd(m)),
        "operator.attrgetter", True),
    "pickle_loads": (lambda m: pickle.dumps(_Reduce(pickle.loads, _inner(m)), protocol=2),
                     "pickle.loads", True),   # (or _pickle.loads)
    "torch_load": (lambda m: pickle.dumps(_Reduce(__import__("torch").load, io.BytesIO(_inner(m))), protocol=2),
                   "torch.serialization.load", False),   # torch >= 2.6 loads weights only by default
    "torch_load_from_bytes": (
        lambda m: pickle.dumps(_Reduce(__import__("torch").storage._load_from_bytes, _inner(m)), protocol=2),
        "torch.storage._load_from_bytes", True),
    "numpy_load_allow_pickle": (
        lambda m: pickle.dumps(_Reduce(np.load, io.BytesIO(_npy_object_array(m)), None, True), protocol=2),
        "numpy.load", True),
    "object_array": (lambda m: pickle.dumps(np.array([_Reduce(os.system, _cmd(m))], dtype=object), protocol=2),
                     "dtype 'O8' is refused", True),
    "object_field_dtype": (lambda m: pickle.dumps(np.zeros(1, dtype=[("a", "O")]), protocol=2),
                           "dtype 'V8' is refused", False),
    "inst_opcode": (lambda m: _raw("(V%s\niposix\nsystem\n." % _cmd(m)), "posix.system", True),
    "persistent_id": (lambda m: _raw("Pfoo\n."), "opcode PERSID", False),
    "matrix_subclass": (lambda m: pickle.dumps(np.matrix([[1.0]]), protocol=2), "numpy.matrix", False),
    "build_on_constructor": (lambda m: b"\x80\x02cnumpy\nndarray\nN}X\x02\x00\x00\x00fnK\x01s\x86b.",
                             "setting state on the constructor numpy.ndarray", False),
    "huge_shape": (lambda m: pickle.dumps(_Reduce(np.ndarray, (10 ** 12,), "<f4", b""), protocol=2),
                   "needs 4000000000000 bytes, the file holds 0", False),
}


def _ext_gadget(marker):
    copyreg.add_extension(os.system.__module__, "system", 0x7ff1)
    try:
        return pickle.dumps(_Reduce(os.system, _cmd(marker)), protocol=2)
    finally:
        copyreg.remove_extension(os.system.__module__, "system", 0x7ff1)


GADGETS["ext_opcode"] = (_ext_gadget, "opcode EXT2", False)


@pytest.mark.parametrize("name", sorted(GADGETS))
def test_gadget_refused_naming_file_and_global(tmp_path, name):
    build, named, _live = GADGETS[name]
    marker = tmp_path / "marker"
    path = str(tmp_path / "evil")
    with open(path + ".pdparams", "wb") as f:
        f.write(build(marker))
    with pytest.raises(UnsafePickleError) as e:
        fluid.io.load_program_state(path)
    msg = str(e.value)
    assert path + ".pdparams" in msg and named in msg and "nothing in the file was run" in msg, msg
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        fluid.layers.create_parameter([1], "float32", name="w")
    with pytest.raises(UnsafePickleError, match="evil.pdparams"):
        fluid.load(main, path)
    assert not marker.exists()
    assert safe_pickle.TABLE[("numpy", "ndarray")].fn is safe_pickle._ndarray


def test_gadget_in_optimizer_file_refused(tmp_path):
    marker = tmp_path / "marker"
    with open(str(tmp_path / "m.pdparams"), "wb") as f:
        pickle.dump({"w": np.zeros(2, "float32")}, f, protocol=2)
    with open(str(tmp_path / "m.pdopt"), "wb") as f:
        f.write(GADGETS["os_system_reduce"][0](marker))
    with pytest.raises(UnsafePickleError, match=r"m\.pdopt.*%s" % SYSTEM):
        fluid.io.load_program_state(str(tmp_path / "m"))
    assert not marker.exists()


def test_nested_pickle_in_array_bytes_stays_bytes(tmp_path):
    marker = tmp_path / "marker"
    inner = _inner(marker)
    with open(str(tmp_path / "m.pdparams"), "wb") as f:
        pickle.dump({"w": np.frombuffer(inner, "u1")}, f, protocol=2)
    got = fluid.io.load_program_state(str(tmp_path / "m"))
    assert got["w"].dtype == np.uint8 and got["w"].tobytes() == inner
    assert not marker.exists()


def test_dataset_readers_refuse_gadgets(tmp_path, monkeypatch):
    marker = tmp_path / "marker"
    evil = GADGETS["os_system_reduce"][0](marker)
    with open(str(tmp_path / "part-00000.pickle"), "wb") as f:
        f.write(evil)
    reader = common.cluster_files_reader(str(tmp_path / "part-*.pickle"), 1, 0)
    with pytest.raises(UnsafePickleError, match="part-00000.pickle.*%s" % SYSTEM):
        list(reader())
    # split() then cluster_files_reader() round trip of ordinary samples
    samples = [(np.arange(3, dtype="float32") + i, [i, i + 1], "s%d" % i) for i in range(5)]
    common.split(lambda: iter(samples), 2, suffix=str(tmp_path / "ok-%05d.pickle"))
    got = list(common.cluster_files_reader(str(tmp_path / "ok-*.pickle"), 1, 0)())
    _same(got, samples)
    # a CIFAR tarball whose batch is a gadget
    monkeypatch.setattr(common, "DATA_HOME", str(tmp_path))
    os.makedirs(str(tmp_path / "cifar"))
    with tarfile.open(str(tmp_path / "cifar" / "cifar-10-python.tar.gz"), "w:gz") as tf:
        info = tarfile.TarInfo("cifar-10-batches-py/data_batch_1")
        info.size = len(evil)
        tf.addfile(info, io.BytesIO(evil))
    from paddle_compat.dataset import cifar
    with pytest.raises(UnsafePickleError, match="data_batch_1.*%s" % SYSTEM):
        next(cifar.train10()())
    assert not marker.exists()


def test_gadgets_are_live(tmp_path):
    # the gadgets above are real: plain pickle.load runs them (in a child process) and the markers appear
    live = sorted(n for n, (_, _, runs) in GADGETS.items() if runs)
    for n in live:
        with open(str(tmp_path / (n + ".pkl")), "wb") as f:
            f.write(GADGETS[n][0](tmp_path / ("marker_" + n)))
    script = ("import glob, pickle, sys\n"
              "for p in sorted(glob.glob(sys.argv[1] + '/*.pkl')):\n"
              "    try:\n"
              "        pickle.load(open(p, 'rb'))\n"
              "    except Exception:\n"
              "        pass\n")
    subprocess.run([sys.executable, "-c", script, str(tmp_path)], check=True, timeout=120,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    assert sorted(n for n in live if (tmp_path / ("marker_" + n)).exists()) == live


def test_corrupt_file_is_named(tmp_path):
    path = tmp_path / "m.pdparams"
    path.write_bytes(pickle.dumps({"w": np.zeros(3)}, protocol=2)[:-9])
    with pytest.raises(ValueError, match="m.pdparams"):
        fluid.io.load_program_state(str(tmp_path / "m"))
    path.write_bytes(pickle.dumps([np.zeros(3)], protocol=2))
    with pytest.raises(ValueError, match="m.pdparams.*holds a list"):
        fluid.io.load_program_state(str(tmp_path / "m"))
