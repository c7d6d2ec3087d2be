"""The step benchmarks still run, and their models still agree: step_speed.py checks that our ResNet-20, MLPs,
LSTM and CTR steps give the hand-written torch models' first losses (same weights, same batches) before it
counts ops, and conv_layout.py that our conv nets give the same first loss with channels-last convolutions
on and off. Tiny batches, no timing (speed targets live in the benchmarks, not in tests)."""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _run(script, *args):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    env.pop("PYTHONPATH", None)
    out = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", script)] + list(args),
                         capture_output=True, text=True, timeout=240, env=env, cwd=ROOT)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    return out.stdout


@pytest.mark.timeout(300)
def test_step_speed_models_agree_with_torch():
    out = _run("step_speed.py", "--no-time", "--batch", "2")
    for name in ("resnet20 b2", "mlp 784-1024-1024-10 b256", "mlp 784-200-200-10 b32", "lstm text b32",
                 "ctr-dnn 8 slots b32"):
        assert "%s: first losses ours/torch" % name in out, out
    assert out.count("ops/step: leaf aten") == 5, out


@pytest.mark.timeout(300)
def test_conv_layout_models_agree_on_and_off():
    out = _run("conv_layout.py", "--batch", "2", "--rounds", "1", "--steps", "1", "--paddle18", "")
    for name in ("resnet20", "vgg16", "mobilenet"):
        assert "%s b2: first loss" % name in out, out
