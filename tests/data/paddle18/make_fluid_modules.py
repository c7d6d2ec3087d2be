"""Records the module files of Paddle 1.8.5's paddle.fluid and the public names each holds (its __all__), for
tests/compat/test_fluid18_modules.py (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_fluid_modules.py

Writes fluid_modules.json beside this script: {"paddle_version": ..., "modules": {module: [names] or null}};
null: the module has no __all__, or Paddle 1.8.5 itself cannot import it (then "unimportable" lists it).
"""

import importlib
import json
import os

import paddle
import paddle.fluid as fluid

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(fluid.__file__)
SKIP_DIRS = ("tests", "proto", "__pycache__")

modules, unimportable = {}, []
for dirpath, dirnames, filenames in os.walk(ROOT):
    dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS]
    for f in filenames:
        if not f.endswith(".py"):
            continue
        rel = os.path.relpath(os.path.join(dirpath, f), os.path.dirname(os.path.dirname(ROOT)))[:-3]
        name = rel.replace(os.sep, ".")
        if name.endswith(".__init__"):
            name = name[:-len(".__init__")]
        try:
            mod = importlib.import_module(name)
        except BaseException:   # noqa: BLE001  (Paddle's own broken modules: PSLib's protobufs, py2-only files)
            unimportable.append(name)
            modules[name] = None
            continue
        names = getattr(mod, "__all__", None)
        modules[name] = sorted(set(names)) if isinstance(names, (list, tuple)) else None
with open(os.path.join(HERE, "fluid_modules.json"), "w") as fh:
    json.dump({"paddle_version": paddle.__version__, "modules": modules, "unimportable": sorted(unimportable)},
              fh, indent=0, sort_keys=True)
print(len(modules), "modules,", len(unimportable), "unimportable in Paddle itself")
