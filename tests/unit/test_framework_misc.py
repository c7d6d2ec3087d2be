"""fluid.require_version, set_flags/get_flags, device_guard, cuda_pinned_places, install_check."""

import numpy as np
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


def test_require_version_reads_the_version_fields_at_each_call(monkeypatch):
    from paddle_compat import version
    for k, v in zip(("major", "minor", "patch", "rc"), "1410"):
        monkeypatch.setattr(version, k, v)
    fluid.require_version(min_version="1.4.1", max_version="1.4.1")
    with pytest.raises(Exception, match="VersionError"):
        fluid.require_version("1.5")
    for k in ("major", "minor", "patch", "rc"):   # Paddle: 0.0.0.0 is a development build, not checked
        monkeypatch.setattr(version, k, "0")
    with pytest.warns(UserWarning, match="development"):
        fluid.require_version("9.0")


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


def test_clone_for_test_keeps_only_the_variables_its_ops_use():
    """Paddle's prune_backward: a test clone taken after minimize has the same variables as one taken
    before (no gradients, learning rate or optimizer state), and it still runs."""
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data(name="x", shape=[3])
        loss = fluid.layers.mean(fluid.layers.fc(x, 2))
        before = main.clone(for_test=True)
        fluid.optimizer.Adam(0.1).minimize(loss)
        after = main.clone(for_test=True)
    assert sorted(before.global_block().vars) == sorted(after.global_block().vars)
    assert [op.type for op in before.global_block().ops] == [op.type for op in after.global_block().ops]
    exe = fluid.Executor()
    exe.run(startup)
    out, = exe.run(after, feed={"x": np.ones((2, 3), np.float32)}, fetch_list=[loss.name])
    assert np.isfinite(out).all()


def test_set_eager_deletion_mode_is_accepted():
    fluid.core._set_eager_deletion_mode(-1, -1, False)    # Paddle's tests call it at import
    with pytest.raises(TypeError, match="threshold"):
        fluid.core._set_eager_deletion_mode("0", 1.0, True)
