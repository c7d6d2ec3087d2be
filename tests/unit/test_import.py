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
