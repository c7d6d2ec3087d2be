"""Whole-step CUDA-graph capture of a lowered block: a static program replays one graph per step instead of
launching each kernel from Python (torch.cuda.graphs; see torch's "whole network capture").

The lowering decides (codegen.lower_block): on a CUDA device, with capture on (FLAGS_cuda_graph_capture, or
BuildStrategy.allow_cuda_graph_capture for a CompiledProgram), a block whose plan is capture-safe
(capture_check.py) is emitted with in-place scope writes and wrapped in a CapturedBlock; otherwise the
step runs as generated code and the reason is logged once, when it would have been captured (Uncaptured). Per feed signature (shapes, dtypes, devices):

  first calls   run eagerly on a side stream (warm-up: lazily built state and buffers settle)
  next call     captures the step into a graph reading static feed buffers and the scope's own tensors,
                then replays it (capture itself runs nothing)
  after that    copies the feeds into the static buffers, replays, returns copies of the fetched values

Parameters, optimizer state, learning-rate and step counters are scope tensors the graph reads and updates
in place, so they stay where the graph expects them; a scope value replaced between steps (set from numpy,
a checkpoint load) is copied into the captured tensor before the replay. Dropout draws from torch's default
CUDA generator, whose offsets torch's graphs advance per replay. At most `max_graphs` signatures are
captured; others run as generated code. A failed capture restores the scope, logs why once and turns capture
off for this lowering.
"""

import logging

from ...ir.lazy import torch

__all__ = ["CapturedBlock", "Uncaptured", "TorchGraphs", "note_once", "device_supports", "default_backend"]

log = logging.getLogger("paddle_compat.capture")
WARMUP_STEPS = 2     # eager runs per feed signature before its capture
MAX_GRAPHS = 4       # feed signatures captured per lowering (each graph holds its own memory)
_noted = set()


def note_once(key, message):
    """Log `message` once per key (a program and reason): a fallback is said once, not every step."""
    if key in _noted:
        return False
    _noted.add(key)
    log.warning("CUDA graph capture off: %s", message)
    return True


def device_supports(device):
    return str(device).startswith("cuda")


def default_backend(device):
    return TorchGraphs(device)


class TorchGraphs:
    """torch.cuda graphs on one device: warm-up on a side stream, capture, replay. (A backend may set
    warmup_steps and max_graphs; the module's defaults otherwise.)"""

    def __init__(self, device):
        self.torch = torch
        self.device = torch.device(device)
        self.side = None

    def warmup(self, fn):
        torch = self.torch
        if self.side is None:
            self.side = torch.cuda.Stream(self.device)
        main = torch.cuda.current_stream(self.device)
        self.side.wait_stream(main)
        with torch.cuda.stream(self.side):
            out = fn()
        main.wait_stream(self.side)
        return out

    def capture(self, fn):
        graph = self.torch.cuda.CUDAGraph()
        # thread_local: a data-loader thread's host work does not invalidate the capture
        with self.torch.cuda.graph(graph, capture_error_mode="thread_local"):
            outs = fn()
        return graph, outs

    def replay(self, graph):
        graph.replay()


class _Graph:
    __slots__ = ("graph", "static", "outs", "reads")

    def __init__(self, graph, static, outs, reads):
        self.graph, self.static, self.outs, self.reads = graph, static, outs, reads


def signature(feeds, tensor_type):
    """(shape, dtype, device) per feed; None when a feed is not a plain dense tensor (a LoD pair, a list)."""
    sig = []
    for f in feeds:
        if not isinstance(f, tensor_type) or f.is_sparse:
            return None
        sig.append((tuple(f.shape), f.dtype, f.device))
    return tuple(sig)


class CapturedBlock:
    """A LoweredBlock run through graphs; same call protocol and attributes (code, plan, fetch_persistable)."""

    def __init__(self, lowered, scope, backend):
        self._torch = torch
        self.lowered = lowered
        for a in ("plan", "code", "src", "line_ops", "block", "feed_names", "fetch_names", "fetch_persistable",
                  "fetch_lod", "fn"):
            setattr(self, a, getattr(lowered, a))
        self.scope, self.backend = scope, backend
        self.warmup = getattr(backend, "warmup_steps", WARMUP_STEPS)
        self.max_graphs = getattr(backend, "max_graphs", MAX_GRAPHS)
        self.graphs = {}            # signature -> _Graph, or the number of warm-up runs so far
        self.off = None             # why capture stopped for this lowering (every call then runs eagerly)
        self.key = (self.plan.program._uid, self.plan.block.idx)

    def __call__(self, feeds):
        if self.off is not None:
            return self.lowered(feeds)
        sig = signature(feeds, self._torch.Tensor)
        if sig is None:
            note_once(self.key + ("feeds",), "program %d: a feed is not a plain tensor" % self.key[0])
            return self.lowered(feeds)
        g = self.graphs.get(sig, 0)
        if isinstance(g, int):
            if g == 0 and len(self.graphs) >= self.max_graphs:
                note_once(self.key + ("shapes",), "program %d: more than %d feed shapes; the others run "
                          "uncaptured" % (self.key[0], self.max_graphs))
                return self.lowered(feeds)
            if g < self.warmup:
                self.graphs[sig] = g + 1
                return self.backend.warmup(lambda: self.lowered(feeds))
            g = self._capture(sig, feeds)
            if g is None:
                return self.lowered(feeds)
        return self._replay(sig, g, feeds)

    def _holders(self):
        return [(n, self.scope.find_var(n)) for n in self.plan.scope_reads]

    def _capture(self, sig, feeds):
        plan = self.plan
        reads = self._holders()
        writes = [self.scope.var(n) for n in plan.writes]
        saved = [(h, h.value, h.lod) for _, h in reads] + [(h, h.value, h.lod) for h in writes]
        before = [h.value for _, h in reads]
        static = [f.clone() for f in feeds]     # the graph's input buffers
        try:
            graph, outs = self.backend.capture(lambda: self.lowered(static))
            moved = [n for (n, h), v in zip(reads, before) if h.value is not v]
            if moved:
                raise _Unsafe("scope value '%s' is replaced, not updated in place, by the step" % moved[0])
        except Exception as e:          # (what the static analysis missed: a sync, a host read, ...)
            for h, value, lod in saved:
                h.value, h.lod = value, lod
            self.off = "capture failed: %s: %s" % (type(e).__name__, e)
            note_once(self.key + ("failed",), "program %d block %d: %s" % (self.key + (self.off,)))
            return None
        g = self.graphs[sig] = _Graph(graph, static, outs, [(h, h.value) for _, h in reads])
        return g

    def _replay(self, sig, g, feeds):
        torch = self._torch
        with torch.no_grad():
            for buf, f in zip(g.static, feeds):
                buf.copy_(f)
            for h, v in g.reads:
                if h.value is not v:    # replaced between steps: into the captured tensor, or capture anew
                    new = h.value
                    if not isinstance(new, torch.Tensor) or new.shape != v.shape or new.dtype != v.dtype:
                        del self.graphs[sig]
                        return self.lowered(feeds)
                    v.copy_(new)
                    h.value = v
        self.backend.replay(g.graph)
        return [(t.clone() if isinstance(t, torch.Tensor) else t, lod) for t, lod in g.outs]


class _Unsafe(RuntimeError):
    pass


class Uncaptured:
    """A lowered block capture was asked for but its plan rules out: runs as generated code, and says why
    once it has run as often as a captured one would have before its capture (a startup program, run once,
    says nothing)."""

    def __init__(self, lowered, key, message):
        self.lowered, self.key, self.message = lowered, key, message
        self.calls = 0

    def __getattr__(self, name):        # code, plan, fetch_persistable, ... of the lowered block
        return getattr(self.lowered, name)

    def __call__(self, feeds):
        if self.calls <= WARMUP_STEPS:
            self.calls += 1
            if self.calls > WARMUP_STEPS:
                note_once(self.key, self.message)
        return self.lowered(feeds)
