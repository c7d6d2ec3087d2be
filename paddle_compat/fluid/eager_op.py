"""A minimal eager mode: `fluid.dygraph.guard()` in which `block.append_op` runs the op at once.

This is the part of Paddle 1.8's dygraph mode that its op unit tests (op_test.py) drive: inside the guard,
`block.create_var(...)` and `to_variable(array)` give VarBase objects holding a value, `block.append_op(type,
inputs, outputs, attrs)` runs that one op through the op's declaration and kernels (a one-op Program run by the
Executor, so the numbers are the static path's) and fills its output VarBases, and `loss.backward()` replays
the ops recorded since the guard opened as a Program, appends its backward (fluid.gradients) and stores each
leaf's gradient, which `var.gradient()` returns as a numpy array.

Dygraph Layers (fluid.dygraph.Linear, Layer subclasses), optimizers' minimize in eager mode, jit and
DataParallel stay unsupported (fluid.dygraph raises DygraphUnsupportedError for them).
"""

import contextlib
import sys

import numpy as np

from ..ir import (CPUPlace, LoDTensor, Program, Scope, ScopeVar, SelectedRows, VarType, convert_dtype,
                  program_guard, unique_name)
from ..ir.recording import install_eager_tracer
from .backward import gradients
from .executor import Executor
from .op import _declare_outputs

__all__ = ["VarBase", "guard", "to_variable", "active", "current_place"]


class _State:
    def __init__(self):
        self.frames = []      # one per open guard: {"place", "tape"}
        self.internal = 0     # > 0 while this module builds its own programs (hooks off)


_STATE = _State()


def active():
    """True inside a guard, outside this module's own program building (Paddle's in_dygraph_mode)."""
    return bool(_STATE.frames) and not _STATE.internal


def current_place():
    return _STATE.frames[-1]["place"] if _STATE.frames else CPUPlace()


@contextlib.contextmanager
def _internal():
    _STATE.internal += 1
    try:
        yield
    finally:
        _STATE.internal -= 1


_counter = [0]


def _auto_name(prefix):
    _counter[0] += 1
    return "%s_%d" % (prefix, _counter[0])


class VarBase:
    """Paddle 1.8's core.VarBase as its op tests use it: name, dtype, shape, stop_gradient, value(), numpy(),
    backward(), gradient()."""

    def __init__(self, name=None, dtype=None, shape=None, type=VarType.LOD_TENSOR, persistable=False,
                 stop_gradient=True):
        self.name = name or _auto_name("eager_tmp")
        self._declared_dtype = convert_dtype(dtype) if dtype is not None else VarType.FP32
        self._declared_shape = list(shape) if shape else []
        self.type = type
        self.persistable = bool(persistable)
        self.stop_gradient = stop_gradient
        self._holder = ScopeVar(self.name)
        self._grad = None

    # value ------------------------------------------------------------------------------------------
    def value(self):
        """Paddle's core Variable of this VarBase: `.get_tensor()` is its LoDTensor (shared, not a copy)."""
        return self._holder

    def numpy(self):
        if self._holder.value is None:
            raise ValueError("VarBase %s holds no value" % self.name)
        return np.array(self._holder.get_tensor())

    @property
    def dtype(self):
        if self._holder.value is not None and not isinstance(self._holder.value, (list, int, float)):
            try:
                return self._holder.get_tensor()._dtype()
            except Exception:     # a SelectedRows or other holder: the declared type
                pass
        return self._declared_dtype

    @property
    def shape(self):
        if self._holder.value is not None and hasattr(self._holder.value, "shape"):
            return list(self._holder.value.shape)
        return list(self._declared_shape)

    @property
    def lod_level(self):
        return len(self._holder.get_tensor().lod()) if self._holder.value is not None else 0

    # gradients --------------------------------------------------------------------------------------
    def backward(self, backward_strategy=None):
        if not _STATE.frames:
            raise ValueError("VarBase.backward: only inside fluid.dygraph.guard()")
        _backward(self, _STATE.frames[-1])

    def gradient(self):
        """The gradient the last backward() gave this variable (numpy), or None (Paddle 1.8)."""
        return None if self._grad is None else np.array(self._grad)

    def clear_gradient(self):
        self._grad = None

    def detach(self):
        out = VarBase(dtype=self.dtype, shape=self.shape, type=self.type)
        out._holder.value, out._holder.lod = self._holder.value, self._holder.lod
        return out

    def __repr__(self):
        return "<VarBase %s %s %s>" % (self.name, tuple(self.shape), self.dtype)

    def __str__(self):
        return str(self._holder.get_tensor()) if self._holder.value is not None else repr(self)


@contextlib.contextmanager
def guard(place=None):
    """Paddle's fluid.dygraph.guard: a fresh main/startup program and name generator; ops run eagerly."""
    _STATE.frames.append({"place": place if place is not None else CPUPlace(), "tape": []})
    try:
        with program_guard(Program(), Program()), unique_name.guard():
            yield
    finally:
        _STATE.frames.pop()


def to_variable(value, name=None, zero_copy=None):
    """A VarBase holding `value` (a numpy array, or a VarBase given back as it is); only inside a guard."""
    if isinstance(value, VarBase):
        return value
    if not _STATE.frames:
        raise AssertionError("to_variable could only be called in dygraph mode (inside fluid.dygraph.guard())")
    if not isinstance(value, np.ndarray):
        raise TypeError("to_variable: value must be a numpy.ndarray or a VarBase, got %s" % type(value).__name__)
    v = VarBase(name=name or unique_name.generate("_generated_var"), dtype=value.dtype, shape=value.shape)
    v._holder.get_tensor().set(value, current_place())
    return v


def create_var(type=VarType.LOD_TENSOR, name=None, shape=None, dtype=None, persistable=None, stop_gradient=True,
               **kwargs):
    """block.create_var inside a guard (Paddle's _varbase_creator)."""
    return VarBase(name=name, dtype=dtype, shape=shape, type=type or VarType.LOD_TENSOR,
                   persistable=persistable, stop_gradient=stop_gradient)


# running ops ------------------------------------------------------------------------------------------
def _slot_vars(slots):
    out = {}
    for slot, vs in (slots or {}).items():
        vs = vs if isinstance(vs, (list, tuple)) else [vs]
        vs = [v for v in vs if v is not None]
        bad = [v for v in vs if not isinstance(v, VarBase)]
        if bad:
            raise TypeError("append_op in dygraph mode: slot %s takes VarBase objects (to_variable / "
                            "block.create_var), got %s" % (slot, type(bad[0]).__name__))
        out[slot] = list(vs)
    return out


def _declare(block, v, persistable, is_data=False):
    """A static variable standing for VarBase `v` (its value's type, shape, dtype and LoD level when it has one)."""
    if block.has_var(v.name):
        return block.var(v.name)
    if isinstance(v._holder.value, SelectedRows):
        sr = v._holder.value
        return block.create_var(name=v.name, type=VarType.SELECTED_ROWS, persistable=persistable,
                                shape=[sr.height()] + list(np.array(sr.get_tensor()).shape[1:]),
                                dtype=np.array(sr.get_tensor()).dtype, stop_gradient=v.stop_gradient,
                                is_data=is_data)
    return block.create_var(name=v.name, type=v.type, shape=v.shape, dtype=v.dtype, lod_level=v.lod_level,
                            persistable=persistable, stop_gradient=v.stop_gradient, is_data=is_data)


def trace_op(type, inputs=None, outputs=None, attrs=None, stop_gradient=False):
    """Run one op eagerly on VarBase inputs, fill its output VarBases, record it for backward()."""
    ins, outs = _slot_vars(inputs), _slot_vars(outputs)
    attrs = {k: v for k, v in (attrs or {}).items() if v is not None}
    scope = Scope()
    with _internal():
        prog = Program()
        with program_guard(prog, Program()):
            block = prog.global_block()
            for vs in ins.values():
                for v in vs:
                    if v._holder.value is None:
                        raise ValueError("op %s: input %s holds no value" % (type, v.name))
                    _declare(block, v, True)
                    scope._vars[v.name] = v._holder
            for vs in outs.values():
                for v in vs:
                    if not block.has_var(v.name):
                        block.create_var(name=v.name, type=v.type, dtype=v._declared_dtype, persistable=True)
            op = block.append_op(type=type, inputs={k: [v.name for v in vs] for k, vs in ins.items()},
                                 outputs={k: [v.name for v in vs] for k, vs in outs.items()}, attrs=dict(attrs))
            _declare_outputs(op, block, {k: [v.name for v in vs] for k, vs in ins.items()})
        Executor(current_place()).run(prog, scope=scope)
    for vs in outs.values():
        for v in vs:
            got = scope.find_var(v.name)
            if got is not None and got is not v._holder:
                v._holder.value, v._holder.lod = got.value, got.lod
    if _STATE.frames:
        _STATE.frames[-1]["tape"].append((type, ins, outs, attrs))
    return op


def _backward(loss, frame):
    """Replay the recorded ops as a Program, append the gradients of `loss` w.r.t. every leaf VarBase whose
    stop_gradient is False, run it and store them (var.gradient())."""
    tape = frame["tape"]
    made, leaves = set(), {}
    for _, ins, outs, _ in tape:
        for vs in ins.values():
            for v in vs:
                if v.name not in made and v.name not in leaves:
                    leaves[v.name] = v
        for vs in outs.values():
            made.update(v.name for v in vs)
    if loss.name not in made:
        raise ValueError("VarBase.backward: %s was not produced by an op run in this guard" % loss.name)
    wanted = [v for v in leaves.values() if not v.stop_gradient]
    with _internal():
        prog = Program()
        with program_guard(prog, Program()):
            block = prog.global_block()
            for v in leaves.values():     # fed: data variables
                _declare(block, v, False, is_data=True)
            for type, ins, outs, attrs in tape:
                for vs in outs.values():
                    for v in vs:
                        _declare(block, v, False)
                block.append_op(type=type, inputs={k: [v.name for v in vs] for k, vs in ins.items()},
                                outputs={k: [v.name for v in vs] for k, vs in outs.items()}, attrs=dict(attrs))
            grads = gradients([block.var(loss.name)], [block.var(v.name) for v in wanted]) if wanted else []
        feed = {n: LoDTensor(_holder=ScopeVar(n, v._holder.value, v._holder.lod)) for n, v in leaves.items()}
        pairs = [(v, g) for v, g in zip(wanted, grads) if g is not None]
        got = Executor(frame["place"]).run(prog, feed=feed, fetch_list=[g for _, g in pairs], scope=Scope(),
                                           return_numpy=False) if pairs else []
    for (v, _), g in zip(pairs, got):
        v._grad = np.array(g)


# Block.create_var / append_op hand over to this module while a guard is open (see ir/recording.py)
install_eager_tracer(sys.modules[__name__])
