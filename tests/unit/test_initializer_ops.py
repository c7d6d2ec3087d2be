"""The startup ops of Paddle 1.8.5's initializers (tests/data/paddle18/make_initializer_ops.py recorded them):
float16 parameters initialised in float32 then cast, init ops prepended (Bilinear's appended)."""

import json
import os
import sys

import numpy as np

import paddle_compat.fluid as fluid

HERE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "paddle18")
sys.path.insert(0, HERE)
import make_initializer_ops as M  # noqa: E402  (builds the same programs)

REF = json.load(open(os.path.join(HERE, "initializer_ops.json")))


def test_startup_ops_are_paddles():
    for case in M.CASES:
        got = M.describe(M.build(fluid, case)[1])
        assert got == REF["cases"][case], case


def test_a_float16_parameter_gets_the_float32_values_cast():
    _, startup = M.build(fluid, "fp16")
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        fluid.Executor(fluid.CPUPlace()).run(startup)
        c = np.array(scope.find_var("c").get_tensor())
        assert c.dtype == np.float16 and c.ravel().astype("float32").tolist() == REF["fp16_constant"]
        a = np.array(scope.find_var("a").get_tensor())
        assert a.dtype == np.float16 and a.ravel().tolist() == list(range(8))
