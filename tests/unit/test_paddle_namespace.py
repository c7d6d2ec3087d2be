"""The `paddle` namespace: `import paddle.fluid as fluid` gives this package's modules (the same objects),
deep submodule paths resolve generically, and a real PaddlePaddle next to it is reported, never shadowed
silently."""

import os
import subprocess
import sys
import textwrap

import pytest

import paddle
import paddle_compat


def test_fluid_is_the_same_package():
    import paddle.fluid as fluid
    assert fluid is paddle_compat.fluid
    assert fluid.Program is paddle_compat.fluid.Program
    assert paddle.fluid.layers is paddle_compat.fluid.layers


@pytest.mark.parametrize("path", [
    "paddle.fluid.core", "paddle.fluid.framework", "paddle.fluid.layers.nn", "paddle.fluid.layers.device",
    "paddle.fluid.transpiler.details", "paddle.fluid.transpiler.details.program_utils",
    "paddle.fluid.transpiler.distribute_transpiler",
    "paddle.fluid.incubate.fleet.parameter_server.distribute_transpiler",
    "paddle.fluid.incubate.fleet.parameter_server.distribute_transpiler.distributed_strategy",
    "paddle.fluid.incubate.fleet.base.role_maker", "paddle.fluid.incubate.fleet.utils.fleet_util",
    "paddle.fluid.dygraph", "paddle.fluid.dygraph.base", "paddle.fluid.op", "paddle.fluid.communicator",
    "paddle.fluid.log_helper", "paddle.fluid.contrib", "paddle.compat", "paddle.version",
])
def test_submodule_alias_is_the_original(path):
    import importlib
    mod = importlib.import_module(path)
    assert mod is importlib.import_module("paddle_compat" + path[len("paddle"):])
    assert sys.modules[path] is mod


def test_reader_namespace():
    import paddle.reader.decorator as dec
    import paddle_compat.readers as pr
    assert paddle.reader is pr and dec is pr.decorator
    assert paddle.reader.shuffle is pr.decorator.shuffle is paddle.fluid.io.shuffle
    assert paddle_compat.reader is paddle_compat.fluid.reader   # fluid.reader (DataLoader) is untouched


def test_alias_keeps_the_original_spec():
    import paddle.fluid.layers as layers
    assert layers.__spec__.name == "paddle_compat.fluid.layers" and layers.__name__ == "paddle_compat.fluid.layers"


def test_missing_module_is_an_import_error_naming_it():
    with pytest.raises(ImportError, match="paddle.fluid.no_such_module"):
        import paddle.fluid.no_such_module  # noqa: F401


def test_dataset_path_maps_to_paddle_compat_dataset():
    # paddle.dataset.X is paddle_compat.dataset.X (whatever readers that package holds)
    finder = next(f for f in sys.meta_path if type(f).__name__ == "_AliasFinder")
    import importlib.util
    if importlib.util.find_spec("paddle_compat.dataset") is None:
        assert finder.find_spec("paddle.dataset") is None
    else:
        import paddle.dataset
        assert paddle.dataset is importlib.import_module("paddle_compat.dataset")


def test_top_level_names():
    assert paddle.__version__ == "1.8.5" and paddle.compat_version == paddle_compat.__version__
    assert list(paddle.batch(lambda: iter(range(5)), 2)()) == [[0, 1], [2, 3], [4]]
    assert list(paddle.reader.firstn(lambda: iter(range(5)), 2)()) == [0, 1]
    import paddle.version as v
    assert v.full_version == "1.8.5" and v.major == "1" and v.minor == "8"
    with pytest.raises(AttributeError, match="no_such_name"):
        paddle.no_such_name


def test_compat_helpers():
    import paddle.compat as cpt
    assert cpt.to_text(b"ab") == "ab" and cpt.to_bytes("ab") == b"ab"
    assert cpt.to_text([b"a", "b"]) == ["a", "b"]
    lst = [b"x"]
    assert cpt.to_text(lst, inplace=True) is lst and lst == ["x"]
    assert cpt.to_bytes({"a"}) == {b"a"}
    assert cpt.round(2.5) == 3.0 and cpt.round(-2.5) == -3.0 and cpt.round(1.25, 1) == 1.3
    assert cpt.floor_division(7, 2) == 3 and cpt.long_type is int
    assert cpt.get_exception_message(ValueError("boom")) == "boom"


def _import_with_fake_paddle(tmp_path, extra_env=None):
    fake = tmp_path / "site" / "paddle" / "fluid"
    fake.mkdir(parents=True)
    (fake / "core.py").write_text("")
    code = textwrap.dedent("""
        import sys, warnings
        sys.path.append(%r)
        warnings.simplefilter("always")
        import paddle.fluid as fluid
        print("IMPORTED", fluid.__name__)
    """ % str(tmp_path / "site"))
    env = dict(os.environ, **(extra_env or {}))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)


def test_real_paddle_installed_is_reported(tmp_path):
    r = _import_with_fake_paddle(tmp_path)
    assert r.returncode == 0, r.stderr
    assert "PaddleShadowWarning" in r.stderr and "real PaddlePaddle is also installed" in r.stderr
    assert str(tmp_path / "site" / "paddle") in r.stderr
    assert "IMPORTED paddle_compat.fluid" in r.stdout


def test_real_paddle_can_be_made_an_error(tmp_path):
    r = _import_with_fake_paddle(tmp_path, {"PADDLE_COMPAT_SHADOW_ERROR": "1"})
    assert r.returncode != 0 and "ImportError" in r.stderr and "real PaddlePaddle" in r.stderr


def test_no_warning_without_real_paddle():
    r = subprocess.run([sys.executable, "-W", "error::RuntimeWarning", "-c",
                        "import paddle.fluid, sys; print('torch' in sys.modules)"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"   # `import paddle.fluid` does not load torch either


def test_importing_a_module_alias_keeps_the_name_it_stands_under():
    # fluid.data is the function and fluid/data.py its module; fluid.layers.rnn the layer and layers/rnn/ its
    # package (as in Paddle): importing paddle.fluid.data must not rebind fluid.data to the module
    import paddle.fluid.data  # noqa: F401
    import paddle.fluid.layers.rnn  # noqa: F401
    assert callable(paddle_compat.fluid.data) and paddle_compat.fluid.data.__name__ == "data"
    assert callable(paddle_compat.fluid.layers.rnn) and paddle_compat.fluid.layers.rnn.__name__ == "rnn"
    assert sys.modules["paddle.fluid.layers.rnn"] is sys.modules["paddle_compat.fluid.layers.rnn"]
