"""nccl2 / collective / Fleet collective with 2 real trainer processes over gloo on 127.0.0.1.

Each trainer feeds its own batch; every configuration must give the losses of one local process whose
SGD step uses the mean of both trainers' gradients, and both trainers must end with identical parameters.
"""

import os
import re
import sys

import numpy as np
import pytest

from dist_utils import Cluster, base_env, endpoints, free_ports
import dp_reference
import paddle_compat as fluid

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "scripts", "collective_trainer.py")
sys.path.insert(0, os.path.join(HERE, "scripts"))
import collective_trainer as T  # noqa: E402

pytestmark = pytest.mark.dist

CONFIGS = ["pe", "compiled", "grad_allreduce", "local_sgd", "fleet_nccl2", "fleet_collective"]
STEPS = 5


def _launch(tmp_path, eps, configs, extra_env=None, trainers=(0, 1), timeout=150):
    with Cluster(tmp_path) as c:
        for t in trainers:
            env = base_env(PADDLE_TRAINER_ID=t, PADDLE_TRAINER_ENDPOINTS=",".join(eps),
                           PADDLE_CURRENT_ENDPOINT=eps[t], PADDLE_TRAINERS_NUM=len(eps),
                           FLAGS_rpc_deadline=60000, **(extra_env or {}))
            # trainer 1 starts from other weights: trainer 0's must be broadcast to it
            c.start("trainer%d" % t, [SCRIPT, "--trainer_id", str(t), "--endpoints", ",".join(eps),
                                      "--configs", ",".join(configs), "--steps", str(STEPS), "--out", str(tmp_path)]
                    + (["--perturb_init"] if t == 1 else []), env)
        rcs = c.wait(timeout)
        return rcs, c.report()


def test_two_trainers_match_local_gradient_averaging(tmp_path):
    rcs, report = _launch(tmp_path, endpoints(2), CONFIGS)
    assert all(rc == 0 for rc in rcs.values()), report
    ref_losses, ref_params = dp_reference.averaged_sgd(T.build, lambda s: [T.feed(s, 0), T.feed(s, 1)], STEPS, 0.1)
    got_params = {}
    for name in CONFIGS:
        got = [np.load(str(tmp_path / ("%s_%d.npz" % (name, t)))) for t in (0, 1)]
        for t in (0, 1):
            np.testing.assert_allclose(got[t]["losses"], ref_losses[:, t], rtol=0, atol=1e-5, err_msg=name)
        got_params[name] = got[0]
        for p in T.PARAMS:
            assert np.array_equal(got[0][p], got[1][p]), (name, p)    # identical on both trainers
            np.testing.assert_allclose(got[0][p], ref_params[p], rtol=0, atol=1e-5, err_msg=(name, p))
    # fleet.save_persistables: worker 0 writes the trained parameters, worker 1 writes nothing
    for name in ("fleet_nccl2", "fleet_collective"):
        saved = str(tmp_path / ("%s_saved_0" % name))
        assert set(T.PARAMS) <= set(os.listdir(saved)), name
        assert not (tmp_path / ("%s_saved_1" % name)).exists()
        assert (tmp_path / ("%s_model_0" % name) / "__model__").exists()
        assert not (tmp_path / ("%s_model_1" % name)).exists()
        main, start, _ = T.build()
        scope = fluid.Scope()
        exe = fluid.Executor(fluid.CPUPlace())
        with fluid.scope_guard(scope):
            fluid.io.load_vars(exe, saved, main, vars=[main.global_block().var(p) for p in T.PARAMS])
        for p in T.PARAMS:
            assert np.array_equal(np.array(scope.find_var(p).get_tensor()), got_params[name][p]), (name, p)


def test_conv_net_allreduces_its_filter_gradients(tmp_path):
    """A convolutional net in grad_allreduce mode: its filter gradients, computed from channels-last activations
    on the CPU, are allreduced as ordinary tensors; losses and parameters as one process averaging both
    trainers' gradients."""
    rcs, report = _launch(tmp_path, endpoints(2), ["conv_grad_allreduce"])
    assert all(rc == 0 for rc in rcs.values()), report
    ref_losses, ref_params = dp_reference.averaged_sgd(T.build_conv, lambda s: [T.feed(s, 0), T.feed(s, 1)],
                                                       STEPS, 0.1)
    got = [np.load(str(tmp_path / ("conv_grad_allreduce_%d.npz" % t))) for t in (0, 1)]
    for t in (0, 1):
        np.testing.assert_allclose(got[t]["losses"], ref_losses[:, t], rtol=0, atol=1e-5)
    for p in T.CONV_PARAMS:
        assert np.array_equal(got[0][p], got[1][p]), p
        np.testing.assert_allclose(got[0][p], ref_params[p], rtol=0, atol=1e-5, err_msg=p)


def test_fleet_under_torchrun(tmp_path):
    """torchrun sets only RANK/WORLD_SIZE/MASTER_*: the role maker derives the trainer endpoints."""
    port = free_ports(1)[0]
    with Cluster(tmp_path) as c:
        c.start("torchrun", ["-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_addr", "127.0.0.1",
                             "--master_port", str(port), SCRIPT, "--configs", "fleet_nccl2,fleet_collective",
                             "--steps", "3", "--out", str(tmp_path)], base_env(FLAGS_rpc_deadline=60000))
        rcs = c.wait(150)
        out = c.procs[0].output
    assert rcs["torchrun"] == 0, out[-4000:]
    assert "derived from torchrun's MASTER_ADDR/MASTER_PORT" in out
    ref_losses, ref_params = dp_reference.averaged_sgd(T.build, lambda s: [T.feed(s, 0), T.feed(s, 1)], 3, 0.1)
    for name in ("fleet_nccl2", "fleet_collective"):
        got = [np.load(str(tmp_path / ("%s_%d.npz" % (name, t)))) for t in (0, 1)]
        for t in (0, 1):
            np.testing.assert_allclose(got[t]["losses"], ref_losses[:, t], rtol=0, atol=1e-5, err_msg=name)
        for p in T.PARAMS:
            assert np.array_equal(got[0][p], got[1][p]), (name, p)


def test_missing_trainer_is_named_within_the_deadline(tmp_path):
    """A trainer whose peer never starts fails after FLAGS_rpc_deadline, naming the missing endpoint."""
    alone0, alone1 = endpoints(2), endpoints(2)
    with Cluster(tmp_path) as c:
        for name, eps, t in (("only0", alone0, 0), ("only1", alone1, 1)):
            env = base_env(FLAGS_rpc_deadline=1500)
            c.start(name, [SCRIPT, "--trainer_id", str(t), "--endpoints", ",".join(eps), "--configs", "pe",
                           "--out", str(tmp_path)], env)
        rcs = c.wait(60)
        out0, out1 = c.procs[0].output, c.procs[1].output
    assert rcs["only0"] != 0 and rcs["only1"] != 0
    assert "RendezvousError" in out0 and alone0[1] in out0 and "never joined" in out0, out0[-2000:]
    assert "RendezvousError" in out1 and "could not reach trainer 0 at %s" % alone1[0] in out1, out1[-2000:]


@pytest.mark.parametrize("config", ["pe", "grad_allreduce"])
def test_trainer_dying_mid_training_fails_its_peer_with_a_named_error(tmp_path, config):
    """No hang: the surviving trainer's allreduce errors (peer gone, or FLAGS_rpc_deadline), naming the group."""
    eps = endpoints(2)
    with Cluster(tmp_path) as c:
        for t in (0, 1):
            args = [SCRIPT, "--trainer_id", str(t), "--endpoints", ",".join(eps), "--configs", config, "--steps", "4",
                    "--out", str(tmp_path)] + (["--die_at", "2"] if t == 1 else [])
            c.start("trainer%d" % t, args, base_env(FLAGS_rpc_deadline=5000))
        rcs = c.wait(60)
        out0 = c.procs[0].output
    assert rcs == {"trainer0": rcs["trainer0"], "trainer1": 3} and rcs["trainer0"] != 0, out0[-2000:]
    assert "CommError" in out0 and ",".join(eps) in out0, out0[-3000:]


def test_trainer_with_another_key_is_refused_at_the_rendezvous(tmp_path):
    """Collective mode's rendezvous (trainer 0's endpoint) is a wire listener: a trainer holding another job key
    is refused (its error says the keys differ and how to set them), trainer 0 logs the refusal with the
    stranger's socket address, and then fails naming the trainer that never joined."""
    eps = endpoints(2)
    with Cluster(tmp_path) as c:
        for t, token in ((0, "good"), (1, "wrong")):
            c.start("trainer%d" % t, [SCRIPT, "--trainer_id", str(t), "--endpoints", ",".join(eps), "--configs",
                                      "pe", "--out", str(tmp_path)],
                    base_env(FLAGS_rpc_deadline=6000, PADDLE_COMPAT_JOB_TOKEN=token))
        rcs = c.wait(60)
        out0, out1 = c.procs[0].output, c.procs[1].output
    assert rcs["trainer0"] != 0 and rcs["trainer1"] != 0
    assert "trainer 0 (%s) refused this process: the job keys differ" % eps[0] in out1, out1[-2000:]
    assert "PADDLE_COMPAT_JOB_TOKEN_FILE" in out1, out1[-2000:]
    assert re.search(r"trainer 0's rendezvous \(%s\) refused a connection from 127\.0\.0\.1:\d+: bad key: it "
                     r"claims to be trainer 1" % re.escape(eps[0]), out0), out0[-2000:]
    assert "never joined" in out0 and eps[1] in out0, out0[-2000:]
