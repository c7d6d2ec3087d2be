"""A pytest plugin (not used by CI): every CPU step of the unit suite that the capture analysis calls safe
(capture_check.py) runs once more on torch's meta device (tests/meta_device.py, as a CUDA-graph capture would:
every kernel on its device branch, no host read possible), in a copy of its scope: two warm-up runs, then
the run a capture would record. A step that then reads the
host, uploads a CPU tensor mid-step or mixes devices is a verdict the analysis got wrong (or a kernel bug);
the report groups them by op.

    PYTHONPATH=tests python -m pytest -p verdict_sweep tests/unit      (report: $VERDICT_SWEEP_OUT or
                                                                      /tmp/verdict_sweep.json)

Startup programs (initializers only, nothing fed) are left out: they run once and are never captured. The run
fails when a step goes wrong on meta. Steps whose scope holds row-sparse values are skipped.
"""

import collections
import json
import os
import random
import re
import time

import numpy as np
import torch

_current = {"test": None}
_results = {}           # key -> (test, outcome, op, message)


def _classify(exc):
    msg = str(exc)
    if "attempted to run this operator with Meta" in msg or "register_meta" in msg or \
            "no meta" in msg.lower():
        return "no meta kernel"
    if "expected device" in msg or "same device" in msg:
        return "device mixing"
    if "meta" in msg:
        return "host read"
    return "other error"


_INIT = ("fill_constant", "assign_value", "uniform_random", "gaussian_random", "truncated_gaussian_random")


def _startup(program, feed):
    """A startup program (initializers only, nothing fed): it runs once and is never captured."""
    from paddle_compat.ops import info
    return not feed and all(info(op.type).random_init or op.type in _INIT for op in program.global_block().ops)


def _meta_run(program, feed, fetch_names, scope, plan):
    import paddle_compat as fluid
    if _startup(program, feed):
        return "skipped", None, "a startup program"
    from meta_device import MetaDevice
    meta_scope = fluid.Scope()
    for n in set(v.name for v in program.list_vars()) | set(plan.scope_reads):
        held = scope.find_var(n)
        if held is None or held.value is None:
            continue
        if not isinstance(held.value, torch.Tensor) or held.value.is_sparse:
            return "skipped", None, "scope value %s is a %s" % (n, type(held.value).__name__)
        meta_scope.var(n).value = held.value.detach().to("meta")
        meta_scope.var(n).lod = held.lod
    exe = fluid.Executor(fluid.CUDAPlace(0))
    with MetaDevice(capturing=True) as dev:
        # as a capture: warm-up runs first (lazily built state settles), then the step that would be recorded
        for _ in range(3):
            try:
                exe.run(program, feed=feed, fetch_list=list(fetch_names), scope=meta_scope, return_numpy=False)
            except Exception as e:     # (after a finished step: the fetch of a meta tensor, not the step's)
                if not dev.steps or not dev.steps[-1].done:
                    m = re.search(r"op '([^']+)'", str(e))
                    return _classify(e), m.group(1) if m else None, str(e).splitlines()[0][:300]
        if dev.steps and dev.steps[-1].uploads:
            return "upload", None, str(dev.steps[-1].uploads[:5])
    return "ok", None, ""


def pytest_configure(config):
    from paddle_compat.backends import feeds
    from paddle_compat.backends.lowering.emit import LoweredBlock
    from paddle_compat.fluid.executor import executor
    prepare, run = executor.Executor._prepare, feeds.PreparedRun.run

    def _prepare(self, program, feed, fetch_names, scope, *a, **k):
        prepared = prepare(self, program, feed, fetch_names, scope, *a, **k)
        if self.device == "cpu" and isinstance(prepared, feeds.PreparedRun) and \
                type(prepared.lowered) is LoweredBlock and prepared.lowered.plan.capture.safe:
            prepared._sweep = (program, tuple(fetch_names), scope)
        return prepared

    def _run(self, feed, return_numpy):
        out = run(self, feed, return_numpy)
        sweep = getattr(self, "_sweep", None)
        if sweep is not None and not _current.get("inside"):
            self._sweep = None          # once per lowering
            program, fetch_names, scope = sweep
            key = (_current["test"], program._uid, program._version, tuple(feed), fetch_names)
            _current["inside"] = True
            rng = (torch.get_rng_state(), np.random.get_state(), random.getstate())
            try:
                _results[key] = (_current["test"],) + _meta_run(program, feed, fetch_names, scope,
                                                                 self.lowered.plan)
            except Exception as e:      # the sweep's own trouble: reported, never the test's
                _results[key] = (_current["test"], "sweep error", None, repr(e)[:300])
            finally:
                _current["inside"] = False
                torch.set_rng_state(rng[0])      # the test's own random draws stay as they were
                np.random.set_state(rng[1])
                random.setstate(rng[2])
        return out
    executor.Executor._prepare = _prepare
    feeds.PreparedRun.run = _run


def pytest_runtest_setup(item):
    _current["test"] = item.nodeid


def _write():
    path = os.environ.get("VERDICT_SWEEP_OUT", "/tmp/verdict_sweep.json")
    with open(path, "w") as f:
        json.dump([dict(zip(("test", "outcome", "op", "message"), r)) for r in _results.values()], f, indent=1)
    return path


def pytest_runtest_teardown(item):
    # (a run cut short keeps what it found, written at most every 30 s: Paddle's op tests make 10^5 steps)
    if len(_results) != _current.get("written") and time.time() - _current.get("at", 0) > 30:
        _current["written"], _current["at"] = len(_results), time.time()
        _write()


def pytest_sessionfinish(session, exitstatus):
    rows = list(_results.values())
    path = _write()
    counts = collections.Counter(r[1] for r in rows)
    bad = collections.defaultdict(list)
    for t, outcome, op, msg in rows:
        if outcome not in ("ok", "skipped"):
            bad[(outcome, op)].append((t, msg))
    lines = ["verdict sweep: %d capture-safe steps run on meta: %s (%s)" % (len(rows), dict(counts), path)]
    for (outcome, op), hits in sorted(bad.items(), key=lambda kv: -len(kv[1])):
        lines.append("  %-14s %-28s %3d  e.g. %s: %s" % (outcome, op, len(hits), hits[0][0], hits[0][1][:160]))
    print("\n" + "\n".join(lines))
    if bad and session.exitstatus == 0:
        session.exitstatus = 1          # a wrong verdict fails the run
