"""while_loop with nested loop_vars (lists, tuples, dicts of Variables) and Paddle 1.8's argument errors
(Paddle's test_while_loop_op test_var_dict and test_error, whose values 1.8.5 gives)."""

import numpy as np
import pytest

import paddle_compat as fluid

L = fluid.layers


def test_loop_vars_nest_dicts_and_lists():
    def cond(i, ten, d, lst, lst_d):
        return L.less_than(i, ten)

    def body(i, ten, d, lst, lst_d):
        d["k"] = i
        d["k"] += 1
        lst[0] = L.reshape(lst[0], [2, -1]) + 1      # assign reshapes the loop variable, as in Paddle
        lst_d[0]["k"] = L.relu(lst_d[0]["k"] + 1)
        return [L.increment(i), ten, d, lst, lst_d]

    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        i = L.zeros(shape=[1], dtype="int64")
        ten = L.fill_constant(shape=[1], dtype="int64", value=10)
        d = {"k": L.fill_constant(shape=[1], dtype="int64", value=0)}
        lst = [L.fill_constant(shape=[1, 2], dtype="int64", value=0)]
        lst_d = [{"k": L.fill_constant(shape=[1], dtype="float32", value=0)}]
        i, ten, d2, lst2, lst_d2 = L.while_loop(cond, body, [i, ten, d, lst, lst_d])
    # the body filled copies of the containers: the loop variables stay the ones given
    assert d2 is d and d2["k"] is d["k"] and lst2[0] is lst[0]
    with fluid.scope_guard(fluid.Scope()):
        res = fluid.Executor(fluid.CPUPlace()).run(main, fetch_list=[d["k"], lst[0], lst_d[0]["k"]])
    np.testing.assert_array_equal(res[0], [10])
    np.testing.assert_array_equal(res[1], np.full((2, 1), 10))
    np.testing.assert_array_equal(res[2], [10.0])


def test_paddles_errors():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        one = L.fill_constant(shape=[1], dtype="int64", value=1)
        ten = L.fill_constant(shape=[1], dtype="int64", value=10)
        two_d = L.fill_constant(shape=[2, 2], dtype="int64", value=1)
        lt = lambda i: L.less_than(i, ten)   # noqa: E731
        inc = lambda i: L.increment(i)       # noqa: E731
        with pytest.raises(TypeError, match="cond in while_loop should be callable"):
            L.while_loop(one, inc, [one])
        with pytest.raises(TypeError, match="body in while_loop should be callable"):
            L.while_loop(lt, one, [one])
        with pytest.raises(TypeError, match="list or tuple"):
            L.while_loop(lt, inc, one)
        with pytest.raises(ValueError, match="should not be empty"):
            L.while_loop(lt, inc, [])
        with pytest.raises(TypeError, match="should return a variable"):
            L.while_loop(lambda i: 1, inc, [one])
        with pytest.raises(TypeError, match="bool"):
            L.while_loop(lambda i: L.increment(i), inc, [one])
        with pytest.raises(TypeError, match="one element"):
            L.while_loop(lambda i: L.less_than(i, L.fill_constant([2, 2], "int64", 10)), inc, [two_d])
        with pytest.raises(ValueError, match="same arity"):
            L.while_loop(lt, lambda i: [L.increment(i), i], [one])

        def grows(i, dct):
            dct["new"] = L.fill_constant(shape=[1], dtype="int64", value=1)
            return L.increment(i), dct
        with pytest.raises(ValueError, match="keys differ"):
            L.while_loop(lambda i, dct: i > 0, grows, [one, {"k": two_d}])
