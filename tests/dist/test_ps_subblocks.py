"""Programs with sub-blocks as 2 pservers + 2 trainers on 127.0.0.1: the rnn_encoder_decoder book model (its
decoder a DynamicRNN, i.e. a `while` whose step block uses the decoder's parameters) and a While/cond model
(parameters inside a While body and inside both branches of a cond), and a learning rate from a Switch
(its conditional_blocks and their sub-blocks move to the pservers' LR block); the first two in collective
grad_allreduce mode too (2 trainers over gloo). The trainer program keeps the control
flow and sends the gradients the `while_grad` / `conditional_block_grad` ops leave in block 0; each trainer's
losses equal one process that averages the two trainers' gradients (tests/subblock_models.py)."""

import os

import numpy as np
import pytest

import paddle_compat as fluid
import subblock_models as M
from dist_utils import endpoints
from ps_cluster import run_ok

pytestmark = [pytest.mark.dist, pytest.mark.timeout(300)]
SCRIPT = os.path.join("tests", "dist", "scripts", "subblock_node.py")
STEPS = 8


def _local(model):
    import importlib.util
    spec = importlib.util.spec_from_file_location("subblock_node", SCRIPT)
    node = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(node)
    main, startup, cost, params, inits, data, feed = node.setup(model, STEPS, 2)
    return M.local_two_trainer_losses(fluid, main, startup, cost, params, inits, data, feed, STEPS)


@pytest.mark.parametrize("model", ["rnn_encoder_decoder", "while_cond", "switch_lr"])
def test_subblock_model_two_pservers_two_trainers(tmp_path, model):
    got = run_ok(tmp_path, [{"model": model, "steps": STEPS}], script=SCRIPT)
    want = _local(model)
    assert want[0][0] != want[0][-1]    # the updates move the loss
    for t in range(2):
        np.testing.assert_allclose(got[(0, t)], want[t], rtol=1e-4, err_msg="%s trainer %d" % (model, t))


@pytest.mark.parametrize("model", ["rnn_encoder_decoder", "while_cond"])
def test_subblock_model_collective_two_trainers(tmp_path, model):
    """grad_allreduce: the c_allreduce_sum of a gradient from a sub-block follows its while_grad /
    conditional_block_grad; each trainer applies the averaged gradient itself."""
    got = run_ok(tmp_path, [{"model": model, "steps": STEPS, "mode": "collective"}], script=SCRIPT, pservers=0,
                 eps=["unused:0"], only=("tr0", "tr1"),
                 extra_env={"PADDLE_TRAINER_ENDPOINTS": ",".join(endpoints(2))})
    want = _local(model)
    for t in range(2):
        np.testing.assert_allclose(got[(0, t)], want[t], rtol=1e-4, err_msg="%s trainer %d" % (model, t))
