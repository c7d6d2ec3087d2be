"""Records Paddle 1.8.5's public names (each module's __all__) for the coverage test (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_public_api.py

Writes public_api.json beside this script: {"modules": {module: [names]}, "excluded": {module: {reason: [names]}}}.
Detection ops and probability distributions are recorded as exclusions (not counted).
"""

import importlib
import json
import os

import paddle
import paddle.fluid  # noqa: F401

HERE = os.path.dirname(os.path.abspath(__file__))
MODULES = ["paddle.fluid", "paddle.fluid.layers", "paddle.fluid.optimizer", "paddle.fluid.io",
           "paddle.fluid.contrib", "paddle.fluid.contrib.mixed_precision", "paddle.fluid.initializer",
           "paddle.fluid.regularizer", "paddle.fluid.clip", "paddle.fluid.metrics", "paddle.fluid.nets",
           "paddle.fluid.backward", "paddle.fluid.transpiler", "paddle.fluid.unique_name", "paddle.fluid.param_attr",
           "paddle.fluid.executor", "paddle.fluid.framework", "paddle.fluid.compiler", "paddle.fluid.profiler"]

modules = {m: sorted(set(importlib.import_module(m).__all__)) for m in MODULES}
excluded = {"paddle.fluid.layers": {
    "detection": sorted(importlib.import_module("paddle.fluid.layers.detection").__all__),
    "distributions": sorted(importlib.import_module("paddle.fluid.layers.distributions").__all__),
}}
with open(os.path.join(HERE, "public_api.json"), "w") as f:
    json.dump({"paddle_version": paddle.__version__, "modules": modules, "excluded": excluded}, f, indent=0,
              sort_keys=True)
print({m: len(v) for m, v in modules.items()})
