"""Small pieces of Paddle 1.8's Python API its own tests use: io.get_parameter_value(_by_name), Parameter's
argument checks, distribute_transpiler.slice_variable, fluid.default_scope_funcs."""

import numpy as np
import pytest

import paddle_compat.fluid as fluid
from paddle_compat.fluid import default_scope_funcs as dsf
from paddle_compat.fluid.transpiler.distribute_transpiler import slice_variable


def test_get_parameter_value_by_name_reads_the_scope():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        b = main.global_block()
        b.create_parameter(name="fc.w", shape=[4, 3], dtype="float32",
                           initializer=fluid.initializer.ConstantInitializer(1.0625))
    exe = fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(fluid.Scope()):
        exe.run(main)   # the initializer went into main itself (Block.create_parameter, as Paddle)
        np.testing.assert_array_equal(fluid.io.get_parameter_value_by_name("fc.w", exe, main),
                                      np.full([4, 3], 1.0625, "float32"))
        with pytest.raises(AssertionError, match="not parameter"):
            fluid.io.get_parameter_value(main.global_block().create_var(name="plain", shape=[1]), exe)


@pytest.mark.parametrize("kw, msg", [
    (dict(shape=None, dtype="float32"), "The shape of Parameter should not be None"),
    (dict(shape=[1], dtype=None), "The dtype of Parameter should not be None"),
    (dict(shape=[], dtype="float32"), "The dimensions of shape for Parameter must be greater than 0"),
    (dict(shape=[-1], dtype="float32"), r"Each dimension of shape for Parameter must be greater than 0, but "
                                        r"received \[-1\]")])
def test_create_parameter_refuses_as_paddle(kw, msg):
    b = fluid.Program().global_block()
    with pytest.raises(ValueError, match=msg):
        b.create_parameter(name="test", initializer=None, **kw)


def test_slice_variable_gives_paddles_blocks():
    # sizes from Paddle 1.8's test_slice_var (its rule: blocks rounded up to whole rows)
    prog = fluid.Program()
    shapes = [[3, 5], [1024], [28, 784], [8, 1020], [800, 10]]
    vs = [prog.global_block().create_var(name="v%d" % i, persistable=True, shape=s) for i, s in enumerate(shapes)]
    got = slice_variable(vs, 10, 1024)
    assert got[:3] == ["v0:0:15", "v1:0:1024", "v2:0:2352"]
    assert [int(s.split(":")[2]) for s in got[2:]] == [2352] * 9 + [784] + [2040] * 4 + [1150] * 6 + [1100]
    assert [s.rsplit(":", 1)[0] for s in got[-7:]] == ["v4:%d" % i for i in range(7)]


def test_default_scope_funcs_keep_a_stack_of_scopes():
    assert dsf.find_var("never_made") is None
    dsf.var("outer")
    seen = []

    def inner():
        seen.append(dsf.get_cur_scope().find_var("outer") is not None)
        dsf.var("inner").set_int(10)
        seen.append(dsf.find_var("inner").get_int())

    dsf.scoped_function(inner)
    assert seen == [True, 10]
    assert dsf.find_var("inner") is None   # the local scope was dropped


def test_a_compiled_program_from_a_core_graph_runs_and_fluid_io_refuses_it():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", [-1, 2])
        y = fluid.layers.scale(x, scale=3.0)
    compiled = fluid.CompiledProgram(fluid.core.Graph(fluid.core.ProgramDesc(main)))
    assert compiled._program is None   # as Paddle: fluid.io cannot take it
    with pytest.raises(TypeError, match="received None"):
        fluid.io._get_valid_program(compiled)
    with pytest.raises(TypeError, match="expected type is fluid.Program"):
        fluid.io._get_valid_program("program")
    assert fluid.io._get_valid_program(fluid.CompiledProgram(main)) is main
    out = fluid.Executor(fluid.CPUPlace()).run(compiled, feed={"x": np.ones([1, 2], "float32")}, fetch_list=[y])
    np.testing.assert_array_equal(out[0], [[3.0, 3.0]])


def test_a_dry_run_runs_no_op():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data(name="x", shape=[2], dtype="float32")
        loss = fluid.layers.mean(fluid.layers.fc(x, 1))
        fluid.optimizer.SGD(0.5).minimize(loss)
    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(scope):
        exe.run(startup)
        w = fluid.io.get_parameter_value_by_name(main.all_parameters()[0].name, exe, main).copy()
        strategy = fluid.ExecutionStrategy()
        strategy._dry_run = True
        prog = fluid.CompiledProgram(main).with_data_parallel(loss_name=loss.name, exec_strategy=strategy)
        assert exe.run(prog) == []   # nothing fed, no op run: the parameters keep their values
        np.testing.assert_array_equal(fluid.io.get_parameter_value_by_name(main.all_parameters()[0].name, exe,
                                                                           main), w)
        with pytest.raises(ValueError, match="nothing to fetch"):
            exe.run(prog, fetch_list=[loss])


def test_core_executor_reads_inputs_from_the_scope_and_leaves_only_persistables_and_fetches():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data(name="x", shape=[3], dtype="float32")
        loss = fluid.layers.mean(fluid.layers.fc(x, 2))
        fluid.optimizer.SGD(0.1).minimize(loss)
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        fluid.Executor(fluid.CPUPlace()).run(startup)
        place = fluid.core.Place()
        place.set_place(fluid.CPUPlace())
        exe = fluid.core.Executor(place)
        scope.var("x").get_tensor().set(np.ones((4, 3), "float32"), fluid.CPUPlace())
        exe.run(main.desc, scope, 0, False, True, [loss.name])
        for name, var in main.global_block().vars.items():
            held = scope.find_var(name)
            assert held is not None, name            # create_vars: every variable exists afterwards
            alive = held.get_tensor()._is_initialized()
            # eager deletion (Paddle 1.8's default): persistables and the fetched loss only
            assert alive == (var.persistable or name == loss.name), name
        assert np.array(scope.find_var(loss.name).get_tensor()).shape == (1,)
