"""NCCL paths (CUDAPlace): the same checks as the gloo tests, run only where torch sees CUDA devices."""

import os
import subprocess
import sys

import numpy as np
import pytest

import paddle_compat as fluid
from dist_utils import Cluster, base_env, endpoints, gpu_count
import dp_reference

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(os.path.dirname(HERE), "dist", "scripts")
sys.path.insert(0, SCRIPTS)
import collective_trainer as T  # noqa: E402


pytestmark = [pytest.mark.gpu, pytest.mark.skipif(gpu_count() == 0, reason="needs a CUDA device (NCCL)")]
two_gpus = pytest.mark.skipif(gpu_count() < 2, reason="needs 2 CUDA devices")


def test_nccl_group_of_one_allreduces_and_broadcasts():
    """gen_nccl_id's group on cuda:0 (NCCL backend), exercised alone in a fresh process."""
    code = ("import torch\n"
            "from paddle_compat.backends import comm\n"
            "c = comm.connect(['127.0.0.1:%d'], 0, 'cuda:0', tag='t')\n"
            "assert c.backend == 'nccl', c\n"
            "a, b = torch.ones(3, device='cuda:0'), torch.arange(4., device='cuda:0')\n"
            "c.allreduce_([a, b]); c.broadcast_([a], root=0); c.barrier()\n"
            "assert a.tolist() == [1., 1., 1.] and b.tolist() == [0., 1., 2., 3.]\n"
            "print('ok')\n") % int(endpoints(1)[0].rsplit(":", 1)[1])
    out = subprocess.run([sys.executable, "-c", code], env=base_env(), capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stderr[-3000:]


@two_gpus
def test_two_gpu_trainers_match_local_gradient_averaging(tmp_path):
    eps, configs, steps = endpoints(2), ["pe", "compiled", "grad_allreduce", "local_sgd"], 5
    with Cluster(tmp_path) as c:
        for t in (0, 1):
            c.start("trainer%d" % t, [os.path.join(SCRIPTS, "collective_trainer.py"), "--trainer_id", str(t),
                                      "--endpoints", ",".join(eps), "--configs", ",".join(configs), "--steps",
                                      str(steps), "--out", str(tmp_path), "--use_cuda"],
                    base_env(FLAGS_selected_gpus=t, FLAGS_rpc_deadline=60000))
        rcs = c.wait(240)
        assert all(rc == 0 for rc in rcs.values()), c.report()
    ref_losses, ref_params = dp_reference.averaged_sgd(T.build, lambda s: [T.feed(s, 0), T.feed(s, 1)], steps, 0.1)
    for name in configs:
        got = [np.load(str(tmp_path / ("%s_%d.npz" % (name, t)))) for t in (0, 1)]
        for t in (0, 1):   # cuBLAS vs the CPU reference: looser than the gloo test's 1e-5
            np.testing.assert_allclose(got[t]["losses"], ref_losses[:, t], rtol=0, atol=1e-4, err_msg=name)
        for p in T.PARAMS:
            assert np.array_equal(got[0][p], got[1][p]), (name, p)


@two_gpus
def test_two_gpus_in_one_process():
    main, start, loss = T.build()
    with fluid.program_guard(main, start):
        fluid.optimizer.SGD(0.1).minimize(loss)
    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CUDAPlace(0))
    exe.run(start, scope=scope)
    prog = fluid.CompiledProgram(main).with_data_parallel(loss_name=loss.name,
                                                          places=[fluid.CUDAPlace(0), fluid.CUDAPlace(1)])
    losses = []
    for s in range(3):
        both = {k: np.concatenate([T.feed(s, 0)[k], T.feed(s, 1)[k]]) for k in ("img", "label")}
        losses.append(exe.run(prog, feed=both, fetch_list=[loss], scope=scope)[0])
    ref_losses, _ = dp_reference.averaged_sgd(T.build, lambda s: [T.feed(s, 0), T.feed(s, 1)], 3, 0.1)
    np.testing.assert_allclose(np.array(losses), ref_losses, rtol=0, atol=1e-4)
