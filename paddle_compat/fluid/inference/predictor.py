"""Predictors: load the model a config names into a private Scope and run it with the Executor."""

import os
import tempfile
import warnings

import numpy as np

from .config import AnalysisConfig, NativeConfig
from .tensors import _DTYPE_OF, PaddleTensor, ZeroCopyTensor
from ...ir import CPUPlace, CUDAPlace, LoDTensor, Scope, dtype_name, is_autograd_op
from ...ir.lazy import torch
from ...ir.proto_desc import serialize_inference_model
from ...backends.lowering.registry import known_op_types
from ..executor.executor import Executor, scope_guard
from ..io.save_load import MODEL_FILENAME, load_persistables, read_inference_program


# -- predictors -------------------------------------------------------------------------------------

def _place(src):
    if not src["use_gpu"]:
        return CPUPlace()
    if torch.cuda.is_available():
        return CUDAPlace(src["device"])
    warnings.warn("inference config asks for GPU %d but torch sees no CUDA device: running on CPU"
                  % src["device"], RuntimeWarning, stacklevel=3)
    return CPUPlace()


def _check_ops(program, path):
    """Name every op type of the model that has no lowering here, with where it first occurs."""
    known = known_op_types()
    lacking = {}
    for block in program.blocks:
        for i, op in enumerate(block.ops):
            # feed and fetch are the executor's own (no kernel runs them)
            if op.type not in known and op.type not in ("feed", "fetch") and not is_autograd_op(op):
                lacking.setdefault(op.type, "block %d op %d" % (block.idx, i))
    if lacking:
        raise NotImplementedError("inference model %s uses op type(s) this package cannot run: %s"
                                  % (path, ", ".join("'%s' (%s)" % kv for kv in sorted(lacking.items()))))


def _load_model(src, scope, exe):
    """Read the model the config names into scope -> (program, feed names, fetch names, model path)."""
    if src["prog_buffer"] is not None:
        path = "<model buffer>"
        program, feeds, fetches = read_inference_program(path, src["prog_buffer"])
        params_dir, params_name = None, None
    elif src["model_dir"]:
        path = os.path.join(src["model_dir"], MODEL_FILENAME)
        if not os.path.isdir(src["model_dir"]):
            raise ValueError("inference config: model_dir %s is not a directory" % src["model_dir"])
        program, feeds, fetches = read_inference_program(path)
        params_dir, params_name = src["model_dir"], None
    elif src["prog_file"]:
        path = src["prog_file"]
        program, feeds, fetches = read_inference_program(path)
        if src["params_file"]:
            params_dir, params_name = os.path.dirname(src["params_file"]) or ".", os.path.basename(src["params_file"])
        else:   # one file per parameter next to the model file
            params_dir, params_name = os.path.dirname(path) or ".", None
    else:
        raise ValueError("inference config names no model: give a model directory (AnalysisConfig(model_dir), "
                         "NativeConfig.model_dir) or a model and a params file (AnalysisConfig(prog_file, "
                         "params_file))")
    _check_ops(program, path)
    with scope_guard(scope):
        if src["prog_buffer"] is not None:
            if src["params_buffer"]:
                with tempfile.TemporaryDirectory() as d:
                    with open(os.path.join(d, "params"), "wb") as f:
                        f.write(src["params_buffer"])
                    load_persistables(exe, d, program, "params")
        else:
            load_persistables(exe, params_dir, program, params_name)
    return program, feeds, fetches, path


class PaddlePredictor:
    """Runs one inference model: run([PaddleTensor]) -> [PaddleTensor], or the zero-copy calls
    (get_input_tensor(name).copy_from_cpu(a); zero_copy_run(); get_output_tensor(name).copy_to_cpu())."""

    def __init__(self, config, _share=None):
        src = config._model_source()
        self._config, self._src = config, src
        if src["num_threads"] is not None:    # Paddle sets the math library's threads for the process too
            torch.set_num_threads(max(1, src["num_threads"]))
        if _share is None:
            self._scope = Scope()
            self._exe = Executor(_place(src))
            self._program, self._feeds, self._fetches, self._path = _load_model(src, self._scope, self._exe)
        else:   # clone(): the same program and parameters, its own executor and inputs/outputs
            self._scope, self._program = _share._scope, _share._program
            self._feeds, self._fetches, self._path = _share._feeds, _share._fetches, _share._path
            self._exe = Executor(_share._exe.place)
        self._in_data, self._in_lod, self._in_shape, self._outputs = {}, {}, {}, {}
        # variables other than the fetch targets asked for with get_output_tensor (Paddle reads any variable
        # of its scope): fetched with the targets from then on
        self._extra, self._last_feed = [], None

    # names ------------------------------------------------------------------------------------------
    def get_input_names(self):
        return list(self._feeds)

    def get_output_names(self):
        return list(self._fetches)

    def get_input_tensor_shape(self):
        gb = self._program.global_block()
        return {n: list(gb.var(n).shape) for n in self._feeds}

    def _var_dtype(self, name):
        return np.dtype(dtype_name(self._program.global_block().var(name).dtype))

    # running ----------------------------------------------------------------------------------------
    def _execute(self, feed):
        values = {}
        for name, (arr, lod) in feed.items():
            if lod:
                t = LoDTensor()
                t.set(arr, CPUPlace())
                try:
                    t.set_lod(lod)
                except ValueError as e:
                    raise ValueError("input '%s' of %s: %s" % (name, self._path, e)) from None
                values[name] = t
            else:
                values[name] = arr
        names = list(self._fetches) + [n for n in self._extra if n not in self._fetches]
        outs = self._exe.run(self._program, feed=values, fetch_list=names, scope=self._scope, return_numpy=False)
        self._last_feed = feed
        self._outputs = {n: (np.array(o), o.lod()) for n, o in zip(names, outs)}
        return [self._outputs[n] for n in self._fetches]

    def run(self, inputs):
        if isinstance(inputs, PaddleTensor):
            inputs = [inputs]
        if not isinstance(inputs, (list, tuple)) or not all(isinstance(t, PaddleTensor) for t in inputs):
            raise TypeError("PaddlePredictor.run takes a list of PaddleTensor, got %r" % (inputs,))
        if len(inputs) != len(self._feeds):
            raise ValueError("PaddlePredictor.run: %s takes %d input(s) %s, got %d"
                             % (self._path, len(self._feeds), self._feeds, len(inputs)))
        if self._src["specify_input_name"]:
            by_name = {t.name: t for t in inputs}
            unknown = [t.name for t in inputs if t.name not in self._feeds]
            if unknown:
                raise ValueError("PaddlePredictor.run: input name(s) %s are not inputs of %s (inputs: %s)"
                                 % (unknown, self._path, self._feeds))
            ordered = [by_name[n] for n in self._feeds]
        else:   # Paddle's rule: inputs go in the model's feed order, whatever their names
            ordered = list(inputs)
        feed = {}
        for name, t in zip(self._feeds, ordered):
            try:
                arr = t.as_ndarray()
            except ValueError as e:
                raise ValueError("input '%s': %s" % (name, e)) from None
            feed[name] = (arr, t.lod)
        out = []
        for name, (arr, lod) in zip(self._fetches, self._execute(feed)):
            if arr.dtype not in _DTYPE_OF:
                raise TypeError("PaddlePredictor.run: output '%s' of %s is %s; a PaddleTensor holds float32, "
                                "int64 or int32 (read it with the zero-copy get_output_tensor)"
                                % (name, self._path, arr.dtype.name))
            out.append(PaddleTensor(arr, name, lod))
        return out

    def get_input_tensor(self, name):
        if name not in self._feeds:
            raise ValueError("get_input_tensor: '%s' is not an input of %s (inputs: %s)"
                             % (name, self._path, self._feeds))
        return ZeroCopyTensor(self, name, True)

    def get_output_tensor(self, name):
        if name not in self._fetches:
            if not self._program.global_block().has_var(name):
                raise ValueError("get_output_tensor: '%s' is not a variable of %s (outputs: %s)"
                                 % (name, self._path, self._fetches))
            if name not in self._extra:
                self._extra.append(name)
                if self._last_feed is not None:   # asked for after a run: that run again, fetching it too
                    self._execute(self._last_feed)
        return ZeroCopyTensor(self, name, False)

    def zero_copy_run(self):
        missing = [n for n in self._feeds if n not in self._in_data]
        if missing:
            raise ValueError("zero_copy_run: input(s) %s of %s have no data (get_input_tensor(name)"
                             ".copy_from_cpu(array))" % (missing, self._path))
        feed = {n: (self._in_data[n], self._in_lod.get(n)) for n in self._feeds}
        self._execute(feed)
        return True

    def _output(self, name):
        if name not in self._outputs:
            raise ValueError("output '%s' of %s has no value yet: call zero_copy_run() first" % (name, self._path))
        return self._outputs[name]

    def clone(self):
        return type(self)(self._config, _share=self)

    def get_serialized_program(self):
        return serialize_inference_model(self._program, self._feeds, self._fetches)

    def program(self):
        return self._program

    def scope(self):
        return self._scope


class AnalysisPredictor(PaddlePredictor):
    pass


class NativePaddlePredictor(PaddlePredictor):
    pass


def create_paddle_predictor(config):
    if isinstance(config, AnalysisConfig):
        return AnalysisPredictor(config)
    if isinstance(config, NativeConfig):
        return NativePaddlePredictor(config)
    raise TypeError("create_paddle_predictor takes an AnalysisConfig or a NativeConfig, got %s"
                    % type(config).__name__)
