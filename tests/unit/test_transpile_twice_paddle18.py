"""Fleet's minimize twice on one program (Paddle's test_fleet_api_input.test_transpile): Paddle 1.8.5 transpiles
the already transpiled program again, and what it builds is wrong (tests/data/paddle18/transpile_twice.json,
recorded by make_transpile_twice.py): the trainer runs two backward passes a step and sends the second one's
gradients under names ('grad/grad/...@GRAD') that no pserver receives, and a pserver updates a parameter with
two sgd ops in each of two blocks for the one gradient it gets. We refuse the second transpile, saying why."""

import json
import os
import sys

import pytest

import paddle_compat  # noqa: F401  (the `paddle` namespace)
import paddle.fluid as fluid

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "paddle18")
sys.path.insert(0, DATA)
import transpile_twice_case  # noqa: E402

WANT = json.load(open(os.path.join(DATA, "transpile_twice.json")))


def _ops(blocks, op_type):
    return [op for b in blocks for op in b if op[0] == op_type]


def test_paddle18s_second_transpile_is_wrong():
    first, second = WANT["worker"]["first"], WANT["worker"]["second"]
    assert len(_ops(first, "mean_grad")) == 1 and len(_ops(second, "mean_grad")) == 2    # two backward passes
    sent = [n for op in _ops(second, "send") for n in op[1]["X"]]
    received = [n for p in (WANT["server"]["first"], WANT["server"]["second"])
                for op in _ops(p, "listen_and_serv") for n in op[1]["X"]]
    strays = [n for n in sent if n.startswith("grad/")]
    assert strays and not set(strays) & set(received)          # sent where no pserver listens
    server = WANT["server"]["second"]
    updates = [op[1]["Param"][0] for op in _ops(server, "sgd")]
    assert updates.count("fc_0.b_0") == 4 and len(_ops(server, "listen_and_serv")[0][1]["X"]) == 1


@pytest.mark.parametrize("role", ["server", "worker"])
def test_we_refuse_the_second_transpile(role):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        got = transpile_twice_case.run(fluid, role)
    if role == "server":    # (a worker's first program is our async trainer program: test_ps_structure)
        assert [[op[0] for op in b] for b in got["first"]] == [[op[0] for op in b] for b in WANT[role]["first"]]
    assert got["second_error"].startswith("ValueError: transpile: program was already transpiled for pserver mode")
