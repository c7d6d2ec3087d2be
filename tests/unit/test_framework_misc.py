"""fluid.require_version, set_flags/get_flags, device_guard, cuda_pinned_places, install_check."""

import pytest

import paddle_compat as fluid


def test_require_version_compares_with_fluid_1_8_5():
    fluid.require_version("1.6.0")
    fluid.require_version("1.8", "1.8.5")
    with pytest.raises(Exception, match="requires Fluid 2.0.0"):
        fluid.require_version("2.0.0")
    with pytest.raises(Exception, match="1.0 to 1.7"):
        fluid.require_version("1.0", "1.7")
    with pytest.raises(ValueError, match="min_version"):
        fluid.require_version("one.eight")
    with pytest.raises(TypeError, match="max_version"):
        fluid.require_version("1.0", 2)


def test_flags_round_trip_and_unknown_flags_are_named():
    old = fluid.get_flags(["FLAGS_check_nan_inf"])
    try:
        fluid.set_flags({"FLAGS_check_nan_inf": True})
        assert fluid.get_flags("FLAGS_check_nan_inf") == {"FLAGS_check_nan_inf": True}
    finally:
        fluid.set_flags(old)
    with pytest.raises(ValueError, match="FLAGS_no_such_flag"):
        fluid.set_flags({"FLAGS_no_such_flag": 1})
    with pytest.raises(ValueError, match="FLAGS_no_such_flag"):
        fluid.get_flags(["FLAGS_no_such_flag"])


def test_device_guard_and_pinned_places(monkeypatch):
    with fluid.device_guard("gpu"):
        x = fluid.layers.data("x", shape=[2])
    assert x.name == "x"
    with pytest.raises(ValueError, match="'tpu'"):
        with fluid.device_guard("tpu"):
            pass
    monkeypatch.setenv("CPU_NUM", "3")
    assert len(fluid.cuda_pinned_places()) == 3 and len(fluid.cuda_pinned_places(2)) == 2


def test_install_check_runs(capsys):
    fluid.install_check.run_check()
    assert "installed successfully" in capsys.readouterr().out
