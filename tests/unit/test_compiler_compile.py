"""CompiledProgram._compile's checks (Paddle 1.8.5: another scope or place, share_vars_from)."""

import pytest

import paddle_compat.fluid as fluid
from paddle_compat.fluid import core


def _model():
    img = fluid.data(name="image", shape=[-1, 4], dtype="float32")
    return fluid.layers.mean(fluid.layers.fc(img, 2))


def test_compile_again_for_another_scope_is_refused():
    prog = fluid.Program()
    with fluid.program_guard(prog, fluid.Program()):
        _model()
    cp = fluid.CompiledProgram(prog)
    scope = core.Scope()
    assert cp._compile(scope, fluid.CPUPlace()) is cp
    cp._compile(scope, fluid.CPUPlace())       # the same scope and place: fine
    with pytest.raises(ValueError, match="different scope"):
        cp._compile(core.Scope(), fluid.CPUPlace())


def test_share_vars_from_must_be_data_parallel_and_compiled():
    def compiled(data_parallel, compile_it):
        prog = fluid.Program()
        with fluid.program_guard(prog, fluid.Program()):
            _model()
        cp = fluid.CompiledProgram(prog)
        if data_parallel:
            cp.with_data_parallel()
        if compile_it:
            cp._compile(core.Scope(), fluid.CPUPlace())
        return cp

    for source, msg in ((compiled(False, True), "not data parallel"), (compiled(True, False), "not compiled")):
        prog = fluid.Program()
        with fluid.program_guard(prog, fluid.Program()):
            _model()
        cp = fluid.CompiledProgram(prog).with_data_parallel(share_vars_from=source)
        with pytest.raises(ValueError, match=msg):
            cp._compile(core.Scope(), fluid.CPUPlace())
