"""embedding's argument checks (Paddle 1.8.5's TypeErrors), fluid.input.embedding, and lookup_table reading
a SelectedRows table put in the scope (Paddle's op test)."""

import numpy as np
import pytest

import paddle_compat.fluid as fluid
from paddle_compat.fluid import core
from paddle_compat.fluid.op import Operator


def test_embedding_refuses_non_int64_ids_and_integer_tables():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        with pytest.raises(TypeError, match="must be a Variable"):
            fluid.layers.embedding(input=np.zeros((4, 1), dtype="int64"), size=(10, 4))
        x = fluid.data("x", [4, 1], dtype="float32")
        with pytest.raises(TypeError, match=r"'input' in fluid.layers.embedding must be \['int64'\]"):
            fluid.layers.embedding(input=x, size=(10, 4))
        ids = fluid.data("ids", [4, 1], dtype="int64")
        with pytest.raises(TypeError, match="'dtype' in fluid.embedding"):
            fluid.input.embedding(input=ids, size=(10, 4), dtype="int64")
        out = fluid.layers.embedding(input=ids, size=(10, 4), dtype="float16")
        assert out.dtype == core.VarDesc.VarType.FP16


def test_lookup_table_reads_a_selected_rows_table():
    scope, place = core.Scope(), core.CPUPlace()
    scope.var("Ids").get_tensor().set(np.array([[0], [4], [3], [5]], dtype="int64"), place)
    w = scope.var("W").get_selected_rows()
    w.set_height(7)
    w.set_rows(list(range(7)))
    w.get_tensor().set(np.arange(7, dtype="float32")[:, None] * np.ones((1, 3), dtype="float32"), place)
    out = scope.var("Out").get_tensor()
    Operator("lookup_table", W="W", Ids="Ids", Out="Out").run(scope, place)
    np.testing.assert_array_equal(np.array(out)[:, 0], [0, 4, 3, 5])
