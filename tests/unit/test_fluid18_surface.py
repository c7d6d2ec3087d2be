"""Fluid 1.8 modules that scripts import at top level: each exists and does what its users need."""

import io
import logging
import os

import numpy as np
import pytest

import paddle.fluid as fluid


def test_get_places():
    from paddle.fluid.layers.device import get_places
    places = get_places(device_count=2, device_type="CPU")
    assert len(places) == 2 and all(isinstance(p, fluid.CPUPlace) for p in places)
    with pytest.raises(ValueError, match="device_type"):
        get_places(device_type="TPU")


def test_require_version():
    fluid.require_version("1.7")
    fluid.require_version("1.8.5", "1.8.5")
    fluid.require_version(min_version="0.0.0")
    with pytest.raises(Exception, match="requires Fluid 2.0"):
        fluid.require_version("2.0")
    with pytest.raises(Exception, match="to 1.7"):
        fluid.require_version("1.0", "1.7")
    with pytest.raises(ValueError, match="min_version"):
        fluid.require_version("one")


def test_set_get_flags(monkeypatch):
    monkeypatch.delenv("FLAGS_rpc_deadline", raising=False)
    fluid.set_flags({"FLAGS_rpc_deadline": 5000})
    assert fluid.get_flags(["FLAGS_rpc_deadline"]) == {"FLAGS_rpc_deadline": 5000}
    assert fluid.get_flags("FLAGS_rpc_deadline") == {"FLAGS_rpc_deadline": 5000}
    assert os.environ["FLAGS_rpc_deadline"] == "5000"   # where the runtime reads flags it honours
    monkeypatch.setenv("FLAGS_check_nan_inf", "1")
    assert fluid.get_flags("FLAGS_check_nan_inf") == {"FLAGS_check_nan_inf": True}
    with pytest.raises(ValueError, match="eager_delete"):
        fluid.set_flags({"eager_delete": 1})
    with pytest.raises(ValueError, match="FLAGS_never_set_here"):
        fluid.get_flags("FLAGS_never_set_here")


def test_dygraph_imports_and_fails_clearly_on_use():
    from paddle.fluid.dygraph import DygraphUnsupportedError
    from paddle.fluid.dygraph.base import to_variable
    import paddle.fluid.dygraph.nn as dnn

    class Net(fluid.dygraph.Layer):    # subclassing at import time must work
        pass

    assert fluid.dygraph.enabled() is False
    # guard / to_variable are the eager single-op path (tests/unit/test_eager_op.py); Layers stay unsupported
    with pytest.raises(AssertionError, match="dygraph mode"):
        to_variable(np.zeros(1))
    for use in (lambda: Net(), lambda: dnn.Linear(2, 2)):
        with pytest.raises(DygraphUnsupportedError, match="not supported by paddle_compat"):
            use()


def test_operator_runs_one_op_on_a_scope():
    from paddle.fluid.op import Operator
    scope, place = fluid.core.Scope(), fluid.CPUPlace()
    a = np.random.RandomState(0).rand(3, 4).astype("float32")
    b = np.random.RandomState(1).rand(3, 4).astype("float32")
    scope.var("x0").get_tensor().set(a, place)
    scope.var("x1").get_tensor().set(b, place)
    scope.var("out").get_tensor()
    op = Operator("sum", X=["x0", "x1"], Out="out")
    assert op.type() == "sum"
    op.run(scope, place)
    np.testing.assert_allclose(np.array(scope.find_var("out").get_tensor()), a + b, rtol=1e-6)
    Operator("scale", X="x0", Out="y", scale=3.0).run(scope, place)
    np.testing.assert_allclose(np.array(scope.find_var("y").get_tensor()), 3 * a, rtol=1e-6)
    # the op's proto tells its outputs, as in Paddle: an output that already holds a value is overwritten
    Operator("scale", X="x0", Out="x1", scale=2.0).run(scope, place)
    np.testing.assert_allclose(np.array(scope.find_var("x1").get_tensor()), 2 * a, rtol=1e-6)


def _tiny_program():
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        x = fluid.data("x", [None, 3], "float32")
        loss = fluid.layers.mean(fluid.layers.fc(x, 2))
        fluid.optimizer.SGD(0.1).minimize(loss)
    return main, start


def test_program_to_code():
    from paddle.fluid.transpiler.details import program_to_code
    main, _ = _tiny_program()
    buf = io.StringIO()
    text = program_to_code(main, fout=buf)
    assert text in buf.getvalue()
    assert "{ // block 0" in text and "mul(inputs=" in text and "var x : fluid.LOD_TENSOR" in text
    assert "persist var fc_0.w_0" in text


def test_vars_distributed():
    from paddle.fluid.transpiler.details import VarStruct, VarsDistributed
    vd = VarsDistributed()
    w = VarStruct("w", [10, 4], "float32", "LOD_TENSOR", 0, True)
    w0 = VarStruct("w.block0", [5, 4], "float32", "LOD_TENSOR", 0, True)
    vd.add_distributed_var(w, w0, block_id=0, offset=0, vtype="Param", endpoint="127.0.0.1:6170")
    assert vd.get_distributed_var_by_slice("w.block0").is_slice
    assert vd.get_distributed_var_by_origin_and_ep("w", "127.0.0.1:6170").offset == 0
    assert vd.get_distributed_var_by_origin_and_ep("w", "127.0.0.1:6171") is None
    assert list(vd.get_distributed_vars_by_vtypes(["Param"], groupby=True)) == ["w"]
    assert "w.block0" in vd.overview()


def test_log_helper():
    from paddle.fluid.log_helper import get_logger
    log = get_logger("fluid18_surface_test", logging.INFO, fmt="%(levelname)s:%(message)s")
    assert log.level == logging.INFO and not log.propagate and log.handlers


def test_communicator_needs_a_trainer_program():
    from paddle.fluid.communicator import Communicator
    with pytest.raises(ValueError, match="get_trainer_program"):
        Communicator(fluid.Program())
    main, start = _tiny_program()
    t = fluid.DistributeTranspiler()
    t.transpile(0, program=main, startup_program=start, pservers="127.0.0.1:6170", trainers=1)
    comm = Communicator(t.get_trainer_program())
    assert comm.is_running() is False
    comm.stop()    # stopping one never started is harmless, as in Paddle


def test_fleet_util_and_split_files(monkeypatch):
    from paddle.fluid.incubate.fleet.base import role_maker
    from paddle.fluid.incubate.fleet.parameter_server.distribute_transpiler import fleet
    from paddle.fluid.incubate.fleet.utils.fleet_util import FleetUtil
    fleet.init(role_maker.UserDefinedRoleMaker(current_id=1, role=role_maker.Role.WORKER, worker_num=2,
                                               server_endpoints=["127.0.0.1:6170"]))
    files = ["a", "b", "c", "d", "e"]
    assert fleet.split_files(files) == ["d", "e"]
    util = FleetUtil()
    assert util.split_files(files) == ["d", "e"]
    with pytest.raises(NotImplementedError, match="pslib"):
        FleetUtil("pslib")


def test_contrib_is_a_package():
    import paddle.fluid.contrib as contrib
    assert hasattr(contrib, "__path__")


def test_wrapped_decorator():
    from paddle.fluid.wrapped_decorator import signature_safe_contextmanager, wrap_decorator

    def twice(f):
        return lambda *a: 2 * f(*a)

    @wrap_decorator(twice)
    def three(x):
        """doc"""
        return 3 * x

    assert three(2) == 12 and three.__name__ == "three" and three.__doc__ == "doc"

    @signature_safe_contextmanager
    def ctx():
        yield 5

    with ctx() as v:
        assert v == 5


def test_communicator_takes_paddle18_arguments():
    """Paddle 1.8: Communicator(program, mode, kwargs, envs), DistributedMode importable from the module."""
    from paddle.fluid.communicator import Communicator, DistributedMode
    main, start = _tiny_program()
    t = fluid.DistributeTranspiler()
    t.transpile(0, program=main, startup_program=start, pservers="127.0.0.1:6170", trainers=1)
    comm = Communicator(t.get_trainer_program(), DistributedMode.HALF_ASYNC, None, {})
    assert comm.is_running() is False
    with pytest.raises(TypeError, match="unexpected"):
        Communicator(t.get_trainer_program(), mode=DistributedMode.ASYNC, bogus=1)
