"""accuracy's and Print's argument checks: Paddle 1.8.5's TypeErrors (layers/arg_checks.py)."""

import numpy as np
import pytest

import paddle_compat.fluid as fluid


def test_accuracy_and_print_refuse_what_paddle_refuses():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        t = fluid.create_lod_tensor(np.array([[-1]]), [[1]], fluid.CPUPlace())
        label = fluid.layers.data(name="label", shape=[-1, 1], dtype="int32")
        with pytest.raises(TypeError, match="The type of 'input' in accuracy"):
            fluid.layers.accuracy(t, label)
        x2 = fluid.layers.data(name="x2", shape=[4], dtype="int32")
        with pytest.raises(TypeError, match=r"The data type of 'input' in accuracy must be \['float16', "):
            fluid.layers.accuracy(x2, label)
        fluid.layers.accuracy(input=fluid.layers.data(name="x3", shape=[-1, 2], dtype="float16"), label=label)
        with pytest.raises(TypeError, match="fluid.layers.Print"):
            fluid.layers.Print(t)
        with pytest.raises(TypeError, match="received float16"):
            fluid.layers.Print(fluid.layers.data(name="x4", shape=[4], dtype="float16"))
        fluid.layers.Print(fluid.layers.data(name="x5", shape=[4], dtype="bool"))


def test_get_tensor_from_selected_rows_wants_a_selected_rows_variable():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.data("x", [-1, 4])
        with pytest.raises(TypeError, match="must be SELECTED_ROWS"):
            fluid.layers.get_tensor_from_selected_rows(x)
        rows = fluid.default_main_program().global_block().create_var(
            name="rows", type=fluid.core.VarDesc.VarType.SELECTED_ROWS, shape=[10, 4], dtype="float32",
            persistable=True)
        assert fluid.layers.get_tensor_from_selected_rows(rows).shape[1:] == (4,)


def test_create_parameter_and_global_var_check_their_arguments_as_paddle():
    # messages as Paddle 1.8.5's data_feeder.check_type / check_dtype
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        for make in (lambda s, d: fluid.layers.create_parameter(s, d),
                     lambda s, d: fluid.layers.create_global_var(s, 2.0, d)):
            with pytest.raises(TypeError, match="The type of 'shape' in create_"):
                make(1, np.float32)
            with pytest.raises(TypeError, match="The type of 'item of shape' in create_.*received <class 'float'>"):
                make([1.0, 2.0, 3.0], "float32")
            with pytest.raises(ValueError):   # convert_dtype refuses it before the dtype check, as in Paddle
                make([1, 2, 3], np.complex128)
            make([np.int64(2), 3], "float32")
        with pytest.raises(TypeError, match="The type of 'attr' in create_parameter"):
            fluid.layers.create_parameter([1, 2, 3], np.float32, attr=np.arange(6))
        with pytest.raises(TypeError, match="The type of 'default_initializer' in create_parameter"):
            fluid.layers.create_parameter([1, 2, 3], np.float32, default_initializer=np.arange(6))


def test_create_global_var_takes_a_one_element_array_as_its_value():
    # float() of a shape-[1] array is an error under NumPy 2; Paddle 1.8 scripts pass one (test_var_info)
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        var = fluid.layers.create_global_var([1], np.array([0.5]), "float32")
        var._set_info("name", "test")
        assert var._get_info("name") == "test" and var._get_info("absent") is None


def test_switch_case_wants_an_integer_branch_index():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        key = fluid.layers.fill_constant(shape=[1], dtype="float32", value=0.23)
        with pytest.raises(TypeError, match=r"The data type of 'branch_index' in switch_case must be \['uint8'"):
            fluid.layers.switch_case(branch_index=key, branch_fns=[(1, lambda: key)], default=lambda: key)


def test_one_hot_wants_ids_of_rank_two_at_build_and_at_run_time():
    # Paddle 1.8.5's one_hot InferShape: EnforceNotMet for rank-1 ids (built, or fed to a [-1, 1] data var)
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        label = fluid.layers.data(name="label", shape=[1], dtype="int64", append_batch_size=False)
        with pytest.raises(fluid.core.EnforceNotMet, match="rank should be at least 2"):
            fluid.layers.one_hot(input=label, depth=100)
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        label = fluid.layers.data(name="label", shape=[1], dtype="int64")
        out = fluid.layers.one_hot(input=label, depth=10)
    exe = fluid.Executor(fluid.CPUPlace())
    with pytest.raises(fluid.core.EnforceNotMet, match="rank should be at least 2"):
        exe.run(main, feed={"label": np.zeros(4, "int64")}, fetch_list=[out])
    assert exe.run(main, feed={"label": np.zeros((4, 1), "int64")}, fetch_list=[out])[0].shape == (4, 10)


def test_nce_checks_its_input_and_label_dtypes():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x16 = fluid.layers.data(name="x16", shape=[-1, 4], dtype="float16")
        x = fluid.layers.data(name="x", shape=[-1, 4], dtype="float32")
        l64 = fluid.layers.data(name="l64", shape=[-1, 1], dtype="int64")
        l32 = fluid.layers.data(name="l32", shape=[-1, 1], dtype="int32")
        with pytest.raises(TypeError, match=r"The data type of 'input' in nce must be \['float32', 'float64'\]"):
            fluid.layers.nce(x16, l64, 5)
        with pytest.raises(TypeError, match=r"The data type of 'label' in nce must be \['int64'\]"):
            fluid.layers.nce(x, l32, 5)
        with pytest.raises(TypeError, match="The type of 'input' in nce"):
            fluid.layers.nce(fluid.create_lod_tensor(np.zeros([4, 1]), [[1, 3]], fluid.CPUPlace()), l64, 5)
