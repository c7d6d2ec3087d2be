"""A pytest plugin (not used by CI): every block an executor lowers runs through the reference interpreter
(backends/lowering/interpreter.py) instead of generated code, so that the whole unit suite checks the
interpreter -- and, where a test holds numbers to Paddle 1.8.5, the lowering's semantics -- a second way.

    PYTHONPATH=tests python -m pytest -p interpret_everywhere tests/unit

Tests that look at the generated code itself (its fused ops, line map, freed locals, the fused lookup's
error text, the capture wrappers) are skipped: the interpreter has none of that by design."""

import pytest

_CODEGEN_ONLY = (
    "test_lookup_fusion.py::test_fused_training_is_bit_identical_to_separate_ops",
    "test_lookup_fusion.py::test_out_of_range_id_is_named",
    "test_lowering_differential.py::test_the_interpreter_runs_without_generated_code_or_fusion",
    "test_recompute_paddle18.py::test_copies_run_only_when_fetched",
    "test_train_step_paddle18.py::test_matches_paddle18",
    "test_capture_plumbing.py", "test_lowering_plan.py", "test_check_nan_inf.py",
    "test_fusion_loss.py::test_fused_loss_gives_the_three_ops_numbers_bit_for_bit",   # reads the code
)


def pytest_configure(config):
    from paddle_compat.backends.lowering import codegen, interpreter
    lower = codegen.lower_block

    def interpret(*args, **kw):
        if kw.get("capture") not in (None, False, True):    # a test's own graphs backend: generated code
            return lower(*args, **kw)
        kw.pop("capture", None)
        return interpreter.interpret_block(*args, **kw)
    codegen.lower_block = interpret


def pytest_collection_modifyitems(config, items):
    skip = pytest.mark.skip(reason="looks at the generated code (interpret_everywhere)")
    for item in items:
        if any(c in item.nodeid for c in _CODEGEN_ONLY):
            item.add_marker(skip)
