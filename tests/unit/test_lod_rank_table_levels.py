"""lod_rank_table of a deeper LoD level, a LoD fed to a lod_level=0 variable (kept, as Paddle keeps it), and
the table read back from the scope (Paddle 1.8's test_lod_rank_table)."""

import numpy as np
import pytest

import paddle_compat.fluid as fluid


def test_a_level_one_rank_table_of_a_fed_three_level_lod():
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        x = fluid.layers.data(name="x", shape=[100])          # lod_level 0: the fed LoD is kept all the same
        table = fluid.layers.lod_rank_table(x=[x], level=1)   # a list: its first Variable
        table.persistable = True
    t = fluid.LoDTensor()
    t.set(np.random.random(size=(17, 100)), fluid.CPUPlace())   # float64: rounded to the declared float32
    t.set_recursive_sequence_lengths([[1, 2], [5, 1, 1], [3, 1, 5, 1, 3, 3, 1]])
    scope = fluid.Scope()
    fluid.Executor(fluid.CPUPlace()).run(main, scope=scope, feed={"x": t})
    # Paddle 1.8.5: level 1's sequences (5, 1 and 1 sub-sequences) longest first, ties in order
    assert list(scope.find_var(table.name).get_lod_rank_table().items()) == [(0, 5), (1, 1), (2, 1)]


def test_lod_rank_table_takes_a_variable_or_a_list_of_them():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        a = np.zeros((2, 4), "float32")
        with pytest.raises(TypeError, match="The type of 'x' in lod_rank_table"):
            fluid.layers.lod_rank_table(x=a, level=1)
        with pytest.raises(TypeError, match=r"The type of 'input\[0\]' in lod_rank_table"):
            fluid.layers.lod_rank_table(x=[a], level=1)
        x = fluid.layers.data(name="x", shape=[10], dtype="float32", lod_level=1)
        fluid.layers.lod_rank_table(x=[x], level=0)
