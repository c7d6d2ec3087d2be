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


def _loop_square(i0):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        i = fluid.data(name="i", shape=[1], dtype="float32")
        i.stop_gradient = False
        eleven = L.fill_constant(shape=[1], dtype="float32", value=11)
        x = fluid.data(name="x", shape=[1], dtype="float32")
        x.stop_gradient = False
        def body(i, x):
            x = L.elementwise_mul(i, i)
            return [L.increment(i), x]
        out = L.while_loop(lambda i, x: L.less_than(i, eleven), body, [i, x])
        mean = L.mean(out[1])
        fluid.backward.append_backward(mean)
    with fluid.scope_guard(fluid.Scope()):
        return fluid.Executor(fluid.CPUPlace()).run(
            main, feed={"i": np.array([i0], "float32"), "x": np.ones(1, "float32")},
            fetch_list=[mean, i.grad_name])


def test_the_gradient_of_a_loop_variable_is_the_entry_values():
    """Paddle's test_while_loop_backward: mean = i_last^2 with i_last = i0 + 9 for i0 in [1, 2): d/di0 = 20
    at 1 (finite differences below, at 1.5). Paddle 1.8.5 gives 110, the sum of every iteration's 2 * i_k (its
    increment passes no gradient and every iteration adds into the one i@GRAD); we give the derivative."""
    mean, grad = _loop_square(1.0)
    assert mean[0] == 100.0 and grad[0] == 20.0
    # away from the integers, where the number of iterations changes: mean = (i0 + 9)^2, 21 at 1.5
    eps = 1e-2
    mean, grad = _loop_square(1.5)
    fd = (_loop_square(1.5 + eps)[0][0] - _loop_square(1.5 - eps)[0][0]) / (2 * eps)
    assert grad[0] == 21.0
    np.testing.assert_allclose(grad[0], fd, rtol=1e-3)


def test_nested_loops_with_arrays_give_the_input_gradient():
    """Paddle's test_nested_net_with_backward_and_lodtensor (1.8.5 gives these values): the sum of three
    arrays and 3 x, read back after two nested while_loops; d mean / d x = 0.3."""
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        d = [fluid.data(name="d%d" % k, shape=[10], dtype="float32") for k in range(3)]
        x = fluid.data(name="x", shape=[10], dtype="float32")
        x.stop_gradient = False
        i = L.zeros(shape=[1], dtype="int64")
        i.stop_gradient = True
        mem = L.array_write(x=L.zeros(shape=[10], dtype="float32"), i=i)
        data = L.array_write(x=d[0], i=i)
        i = L.increment(i)
        L.array_write(d[1], i, array=data)
        i = L.increment(i)
        L.array_write(d[2], i, array=data)
        i = L.zeros(shape=[1], dtype="int64")
        i.stop_gradient = True
        n1 = L.fill_constant(shape=[1], dtype="int64", value=1)
        j = L.fill_constant(shape=[1], dtype="int64", value=1)
        j.stop_gradient = True
        n3 = L.fill_constant(shape=[1], dtype="int64", value=3)

        def inner(j, x, mem):
            s = L.elementwise_add(x=x, y=L.elementwise_add(L.array_read(data, j), L.array_read(mem, j)))
            j = L.increment(x=j, in_place=True)
            L.array_write(s, i=j, array=mem)
            return [j, x, mem]

        def outer(i, j, x, mem):
            s = L.elementwise_add(x=x, y=L.elementwise_add(L.array_read(data, i), L.array_read(mem, i)))
            i = L.increment(x=i, in_place=True)
            L.array_write(s, i=i, array=mem)
            j, x, mem = L.while_loop(lambda j, x, mem: L.less_than(j, n3), inner, [j, x, mem])
            return [i, j, x, mem]

        L.while_loop(lambda i, j, x, mem: L.less_than(i, n1), outer, [i, j, x, mem])
        result = L.array_read(array=mem, i=j)
        fluid.backward.append_backward(L.mean(result))
    rng = np.random.RandomState(0)
    vals = [rng.rand(10).astype("float32") for _ in range(3)]
    feed = {"d%d" % k: v for k, v in enumerate(vals)}
    feed["x"] = np.ones(10, "float32")
    with fluid.scope_guard(fluid.Scope()):
        res, gx = fluid.Executor(fluid.CPUPlace()).run(main, feed=feed, fetch_list=[result, x.grad_name])
    np.testing.assert_allclose(res, vals[0] + vals[1] + vals[2] + 3, rtol=1e-6)
    np.testing.assert_allclose(gx, np.full(10, 0.3, "float32"), rtol=1e-6)
