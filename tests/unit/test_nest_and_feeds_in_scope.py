"""fluid.layers.utils' nested-structure helpers (Paddle's map_structure & co.), and fed values left in the scope
as Paddle's feed op leaves them."""

import collections

import numpy as np
import pytest

import paddle_compat.fluid as fluid
from paddle_compat.fluid.layers import utils


def test_map_structure_and_assert_same_structure():
    inputs = {"key1": 1, "key2": (2, [3])}
    out = utils.map_structure(lambda x: x + 1, inputs)
    assert out == {"key1": 2, "key2": (3, [4])}
    utils.assert_same_structure(inputs, out)
    assert utils.flatten({"b": 1, "a": [2, 3]}) == [2, 3, 1]      # dicts by sorted key
    P = collections.namedtuple("P", "h c")
    assert utils.pack_sequence_as(P(0, [0, 0]), [1, 2, 3]) == P(1, [2, 3])
    with pytest.raises(ValueError, match="same number of elements"):
        utils.assert_same_structure(dict(inputs, key3=3), out)
    with pytest.raises(TypeError, match="sequence type"):
        utils.assert_same_structure((1, 2), [1, 2])
    utils.assert_same_structure((1, 2), [1, 2], check_types=False)


def test_a_fed_value_stays_in_the_scope_for_a_later_run():
    # Paddle 1.8.5: the feed op writes the value into the scope; a later run that does not feed it reads it
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        a = fluid.layers.data(name="a", shape=[2], dtype="float32")
        b = fluid.layers.data(name="b", shape=[2], dtype="float32")
        s = a + b
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(main, scope=scope, feed={"a": np.ones((1, 2), "float32"), "b": np.ones((1, 2), "float32")},
            fetch_list=[s])
    got = exe.run(main, scope=scope, feed={"b": np.full((1, 2), 2.0, "float32")}, fetch_list=[s])
    assert got[0].tolist() == [[3.0, 3.0]]
    assert np.array(scope.find_var("a").get_tensor()).tolist() == [[1.0, 1.0]]
    with pytest.raises(fluid.core.EnforceNotMet, match="data variable 'a'.*was not fed"):
        exe.run(main, scope=fluid.Scope(), feed={"b": np.ones((1, 2), "float32")}, fetch_list=[s])
