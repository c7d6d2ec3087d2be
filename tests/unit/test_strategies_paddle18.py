"""Fleet's StrategyFactory strategies carry Paddle 1.8.5's settings, field by field (program config, trainer
runtime config and its communicator flags, server config, build and execution strategies, debug options), as
created and after each set_* call: tests/data/paddle18/strategies.json, recorded by make_strategies.py."""

import json
import os
import sys
import warnings

import pytest

import paddle_compat  # noqa: F401  (the `paddle` namespace)
import paddle.fluid as fluid

HERE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "paddle18")
sys.path.insert(0, HERE)
import strategy_cases  # noqa: E402

WANT = json.load(open(os.path.join(HERE, "strategies.json")))


@pytest.fixture(scope="module")
def ours():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # the forced communicator flags (Paddle prints the same warning)
        return json.loads(json.dumps(strategy_cases.dump(fluid)))


@pytest.mark.parametrize("case", sorted(WANT))
def test_strategy_fields_match_paddle18(ours, case):
    assert case in ours
    diff = {k: (ours[case].get(k), v) for k, v in WANT[case].items() if ours[case].get(k) != v}
    assert not diff, "field: (ours, Paddle 1.8.5's): %s" % diff


def test_sync_strategy_still_trains_as_sync_mode():
    # Paddle 1.8's sync strategy is a completely_not_async config; our transpiler reads it as sync mode
    from paddle.fluid.incubate.fleet.parameter_server.distribute_transpiler.distributed_strategy import \
        StrategyFactory
    cfg = StrategyFactory.create_sync_strategy().get_program_config().frozen()
    assert (cfg.sync_mode, cfg.runtime_split_send_recv, cfg.half_async) == (True, False, False)
    half = StrategyFactory.create_half_async_strategy().get_program_config().frozen()
    assert (half.sync_mode, half.runtime_split_send_recv, half.half_async) == (False, True, True)
