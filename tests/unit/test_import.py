"""`import paddle_compat` stays light: no torch, no torch.distributed.rpc, no mpi4py."""

import subprocess
import sys

from dist_utils import base_env


def test_import_loads_no_heavy_modules():
    code = ("import sys, paddle_compat as fluid\n"
            "import paddle_compat.fluid.transpiler\n"
            "x = fluid.layers.data(name='x', shape=[3])\n"
            "y = fluid.layers.fc(x, 2)\n"
            "fluid.optimizer.SGD(0.1).minimize(fluid.layers.mean(y))\n"
            "bad = [m for m in ('torch', 'torch.distributed.rpc', 'mpi4py') if m in sys.modules]\n"
            "print(bad)\n")
    out = subprocess.run([sys.executable, "-c", code], env=base_env(), capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", out.stdout


def test_no_module_of_the_package_uses_torch_distributed_rpc():
    """Pserver mode runs on our wire transport (backends/wire): no module imports torch.distributed.rpc (torch
    itself loads the module at `import torch`; nothing of ours initializes or calls it)."""
    import ast
    import os
    import paddle_compat
    root = os.path.dirname(paddle_compat.__file__)
    found = []
    for d, _, files in os.walk(root):
        for f in files:
            if not f.endswith(".py"):
                continue
            path = os.path.join(d, f)
            with open(path) as fh:
                tree = ast.parse(fh.read(), path)
            for node in ast.walk(tree):
                names = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module:
                    names = [node.module] + ["%s.%s" % (node.module, a.name) for a in node.names]
                elif isinstance(node, ast.Attribute) and node.attr == "rpc":
                    v = node.value
                    if isinstance(v, ast.Attribute) and v.attr == "distributed":
                        names = ["torch.distributed.rpc"]
                found += ["%s: %s" % (os.path.relpath(path, root), n) for n in names
                          if n.startswith("torch.distributed.rpc")]
    assert found == [], found
