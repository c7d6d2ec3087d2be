"""Book chapter understand_sentiment (tests/book_sentiment.py: convolution net and stacked LSTM net, written as
in Paddle's book with small sizes): the first 10 Adagrad losses equal Paddle 1.8.5's from the same initial
weights and data (recorded by tests/data/paddle18/make_book_sentiment.py)."""

import json
import os

import numpy as np
import pytest

import book_sentiment as B
import paddle_compat as fluid

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18")
with open(os.path.join(DATA, "book_sentiment.json")) as _fh:
    REF = json.load(_fh)


@pytest.mark.parity
@pytest.mark.parametrize("name", ["conv", "stacked_lstm"])
def test_first_10_losses_match_paddle18(name):
    ref = REF[name]
    main, startup, cost, params = B.build(name)
    # same parameters in the same creation order (names may differ: unique-name counters run on per process)
    assert [list(p.shape) for p in params] == [s for _, s in ref["params"]]
    assert REF["batches"] == B.batches(10)
    exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
    losses = []
    with fluid.scope_guard(scope):
        exe.run(startup)
        B.set_params(scope, params)
        for b in REF["batches"]:
            loss, = exe.run(main, feed=B.feed(b), fetch_list=[cost])
            losses.append(float(np.array(loss).reshape(-1)[0]))
    np.testing.assert_allclose(losses, ref["losses"], rtol=1e-4, err_msg=name)
