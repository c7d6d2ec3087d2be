"""Test set-up: fresh default programs per test, and the program verifier after every program change."""

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
os.environ.setdefault("OMP_NUM_THREADS", "1")

import paddle_compat as fluid  # noqa: E402
from paddle_compat.backends.lowering.registry import known_op_types  # noqa: E402
from paddle_compat.fluid import framework  # noqa: E402
from paddle_compat.ir import recording  # noqa: E402
from paddle_compat.ir.verifier import verify  # noqa: E402


def _verify_hook(prog, what):
    # every op type must be one the lowering knows (the registry's, with the backends' kernels loaded)
    verify(prog, known=known_op_types())


recording.change_hooks.append(_verify_hook)


@pytest.fixture(autouse=True)
def fresh_programs():
    """Each test builds into new default programs, a new global scope and fresh unique names."""
    main, start = fluid.Program(), fluid.Program()
    old_main = framework.switch_main_program(main)
    old_start = framework.switch_startup_program(start)
    scope = fluid.Scope()
    old_scope = fluid.core._switch_scope(scope)
    with fluid.unique_name.guard():
        yield
    framework.switch_main_program(old_main)
    framework.switch_startup_program(old_start)
    fluid.core._switch_scope(old_scope)


def pytest_configure(config):
    import torch
    torch.set_num_threads(1)
