"""Whole-step CUDA-graph capture (backends/lowering/capture.py), the parts the CPU can check: a fake graphs
backend stands in for torch.cuda's (capture records the step and leaves no trace, as a real capture runs
nothing; replay runs it into the captured output tensors). Capture on and off give the same losses and
state; feeds go through static buffers; one graph per feed signature up to a bound; a failed capture puts
the scope back and says why once; a scope value replaced between steps reaches the graph; the switches
(FLAGS_cuda_graph_capture, BuildStrategy.allow_cuda_graph_capture) and the executor's plumbing.
tests/gpu/test_cuda_graphs.py runs the real thing."""

import logging

import numpy as np
import pytest
import torch

import paddle_compat as fluid
from paddle_compat.ops.defs import control_flow
from paddle_compat.backends.lowering import capture
from paddle_compat.backends.lowering.codegen import lower_block
from paddle_compat.backends.lowering.emit import LoweredBlock

import lowering_families as F
from test_capture_check import SAFE
from test_lowering_differential import as_feeds, startup_scope, state


@pytest.fixture(autouse=True)
def predicate_on_cpu(monkeypatch):
    # the predicated Switch cases a device runs, run here on the CPU (where the host decides by default)
    monkeypatch.setattr(control_flow, "PREDICATE_ON_CPU", True)


class FakeGraphs:
    """torch.cuda graphs' protocol on the CPU. capture(fn) runs fn once to learn its outputs and then puts
    every scope tensor and the RNG back (a real capture only records); replay runs it again and copies the
    results into the captured outputs (a real replay refills the same memory). fail: capture raises this."""

    def __init__(self, scope, fail=None, max_graphs=4):
        self.scope, self.fail, self.max_graphs = scope, fail, max_graphs
        self.warmups = self.captures = self.replays = 0

    def warmup(self, fn):
        self.warmups += 1
        return fn()

    def capture(self, fn):
        self.captures += 1
        if self.fail:
            raise RuntimeError(self.fail)
        held = []
        for n in self.scope.local_var_names():
            v = self.scope.find_var(n).value
            if isinstance(v, torch.Tensor):
                held.append((v, v.detach().clone()))
        rng = torch.get_rng_state()
        outs = fn()
        with torch.no_grad():
            for v, before in held:
                v.copy_(before)
        torch.set_rng_state(rng)
        return (fn, outs), outs

    def replay(self, graph):
        self.replays += 1
        fn, outs = graph
        with torch.no_grad():
            for (out, _), (value, _) in zip(outs, fn()):
                out.copy_(value)


def run_steps(name, steps, make_capture, batch_sizes=None):
    main, startup, loss, feeds = F.build(name)
    scope = startup_scope(startup)
    backend = make_capture(scope) if make_capture else False
    fetched, lowered = [], {}
    for k in range(steps):
        feed = dict(feeds[k % len(feeds)])
        if batch_sizes:
            feed = {n: v[:batch_sizes[k % len(batch_sizes)]] for n, v in feed.items()}
        names, values, with_lod = as_feeds(main.global_block(), feed)
        if "lb" not in lowered:
            lowered["lb"] = lower_block(main, 0, scope, "cpu", names, [loss.name], feed_lod=with_lod,
                                        capture=backend)
        torch.manual_seed(k)
        (value, _), = lowered["lb"](values)
        fetched.append(value.detach().clone().numpy())
    return fetched, state(scope), lowered["lb"], backend


@pytest.mark.parametrize("name", sorted(SAFE))
def test_capture_on_and_off_give_the_same_numbers(name):
    want, want_state, plain, _ = run_steps(name, 6, None)
    got, got_state, lb, fake = run_steps(name, 6, FakeGraphs)
    assert isinstance(plain, LoweredBlock) and isinstance(lb, capture.CapturedBlock)
    assert (fake.warmups, fake.captures, fake.replays) == (2, 1, 4)
    for k, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_array_equal(g, w, err_msg="%s step %d" % (name, k))
    assert set(got_state) == set(want_state)
    for n, w in want_state.items():
        np.testing.assert_array_equal(got_state[n], w, err_msg=n)
    assert "__write(h_" in lb.code          # scope values updated in place: the graph's memory stays put


def test_one_graph_per_feed_shape_up_to_a_bound(caplog):
    sizes = [8, 4, 8, 4, 8, 4, 2, 2, 2, 2, 8]
    want, want_state, _, _ = run_steps("mlp", len(sizes), None, sizes)
    with caplog.at_level(logging.WARNING, "paddle_compat.capture"):
        got, got_state, lb, fake = run_steps("mlp", len(sizes), lambda scope: FakeGraphs(scope, max_graphs=2),
                                             sizes)
    captured = sorted(sig[0][0][0] for sig, g in lb.graphs.items() if not isinstance(g, int))
    assert captured == [4, 8]           # the batch sizes seen first; batch 2 runs uncaptured
    assert fake.captures == 2
    assert sum("more than 2 feed shapes" in r.message for r in caplog.records) == 1   # said once
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    for n, w in want_state.items():
        np.testing.assert_array_equal(got_state[n], w, err_msg=n)


def test_a_failed_capture_restores_the_scope_and_says_why_once(caplog):
    want, want_state, _, _ = run_steps("opt_adam_cosine", 6, None)
    with caplog.at_level(logging.WARNING, "paddle_compat.capture"):
        got, got_state, lb, fake = run_steps("opt_adam_cosine", 6,
                                             lambda scope: FakeGraphs(scope, fail="operation not permitted"))
    assert fake.captures == 1 and fake.replays == 0
    assert "operation not permitted" in lb.off
    assert sum("operation not permitted" in r.message for r in caplog.records) == 1
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    for n, w in want_state.items():
        np.testing.assert_array_equal(got_state[n], w, err_msg=n)


def test_a_scope_value_replaced_between_steps_reaches_the_graph():
    def train(make_capture):
        main, startup, loss, feeds = F.build("mlp")
        scope = startup_scope(startup)
        backend = make_capture(scope) if make_capture else False
        names, values, with_lod = as_feeds(main.global_block(), feeds[0])
        lb = lower_block(main, 0, scope, "cpu", names, [loss.name], capture=backend)
        out = []
        for k in range(6):
            if k == 4:      # as a user's tensor.set() or a checkpoint load: a new tensor in the scope
                w = scope.find_var("fc_0.w_0")
                w.value = torch.full_like(w.value.detach(), 0.01)
            out.append(float(lb(values)[0][0].detach()))
        return out, state(scope)
    want, want_state = train(None)
    got, got_state = train(FakeGraphs)
    assert got == want
    for n, w in want_state.items():
        np.testing.assert_array_equal(got_state[n], w, err_msg=n)


def test_an_unsafe_block_runs_uncaptured_and_says_why_once(caplog):
    main, startup, loss, feeds = F.build("lstm_lod")
    scope = startup_scope(startup)
    said = []
    with caplog.at_level(logging.WARNING, "paddle_compat.capture"):
        for lowering in range(2):
            lb = None
            for k, feed in enumerate(feeds):
                names, values, with_lod = as_feeds(main.global_block(), feed)
                lb = lb or lower_block(main, 0, scope, "cpu", names, [loss.name], feed_lod=with_lod,
                                       capture=FakeGraphs(scope))
                lb(values)
                said.append(len([r for r in caplog.records if "words" in r.message]))
    assert isinstance(lb, capture.Uncaptured) and isinstance(lb.lowered, LoweredBlock)
    assert lb.code == lb.lowered.code and lb.fetch_persistable == [False]
    assert said == [0, 0, 1, 1, 1, 1]       # when a capture would have happened (after 2 warm-up steps), once
    assert "carries a LoD" in [r.message for r in caplog.records if "words" in r.message][0]


def test_no_capture_on_the_cpu_by_default():
    main, startup, loss, feeds = F.build("mlp")
    scope = startup_scope(startup)
    names, values, _ = as_feeds(main.global_block(), feeds[0])
    assert isinstance(lower_block(main, 0, scope, "cpu", names, [loss.name], capture=True), LoweredBlock)


@pytest.fixture
def fake_cuda(monkeypatch):
    """The executor's CUDA path on the CPU: capture 'supported' on this device, with the fake backend."""
    made = []

    def backend(device):
        made.append(FakeGraphs(fluid.global_scope()))
        return made[-1]
    monkeypatch.setattr(capture, "device_supports", lambda device: True)
    monkeypatch.setattr(capture, "default_backend", backend)
    # the CPU, though the executor's `device != "cpu"` says otherwise (so that its CUDA branch runs)
    monkeypatch.setattr(fluid.Executor, "device", property(lambda self: _OffCpu("cpu")))
    return made


class _OffCpu(str):
    def __ne__(self, other):
        return True

    __hash__ = str.__hash__


def _exe_losses(run, steps=5):
    main, startup, loss, feeds = F.build("opt_momentum_nesterov_noam")
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    losses = [float(run(exe, main, feeds[k % len(feeds)], loss)[0]) for k in range(steps)]
    lowered = [p.lowered for p in exe._cache.values() if getattr(p, "feed_specs", None)]
    return losses, lowered


def test_capture_is_off_by_default_and_the_switches_turn_it_on_and_off(fake_cuda, monkeypatch):
    # off by default until the GPU tests (tests/gpu/test_cuda_graphs.py) have passed on a real device
    plain = lambda exe, main, feed, loss: exe.run(main, feed=feed, fetch_list=[loss])  # noqa: E731
    monkeypatch.delenv("FLAGS_cuda_graph_capture", raising=False)
    default, lowered = _exe_losses(plain)
    assert isinstance(lowered[0], LoweredBlock)

    monkeypatch.setenv("FLAGS_cuda_graph_capture", "1")
    on, lowered = _exe_losses(plain)
    assert isinstance(lowered[0], capture.CapturedBlock) and lowered[0].backend is fake_cuda[-1]
    assert lowered[0].off is None, lowered[0].off
    assert fake_cuda[-1].replays == 3   # after 2 warm-up steps and the capture

    monkeypatch.setenv("FLAGS_cuda_graph_capture", "0")
    off, lowered = _exe_losses(plain)
    assert isinstance(lowered[0], LoweredBlock)

    def compiled(allow):
        def run(exe, main, feed, loss):
            bs = fluid.BuildStrategy()
            bs.allow_cuda_graph_capture = allow
            prog = compiled.progs.setdefault(allow, fluid.CompiledProgram(main, build_strategy=bs))
            return exe.run(prog, feed=feed, fetch_list=[loss])
        return run
    compiled.progs = {}
    strategy_off, lowered = _exe_losses(compiled(False))
    assert isinstance(lowered[0], LoweredBlock)
    monkeypatch.setenv("FLAGS_cuda_graph_capture", "0")
    compiled.progs = {}
    strategy_on, lowered = _exe_losses(compiled(True))
    assert isinstance(lowered[0], capture.CapturedBlock)
    assert default == on == off == strategy_off == strategy_on
