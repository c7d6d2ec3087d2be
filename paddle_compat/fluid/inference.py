"""Paddle 1.8's inference API (`fluid.core.AnalysisConfig`, `NativeConfig`, `create_paddle_predictor`,
`PaddleTensor`, `PaddleBuf`, `PaddleDType`, the zero-copy tensors) over a saved inference model, run by the
Executor on torch.

A predictor owns a Scope holding the model's parameters and an Executor on the configured place; `run`
feeds PaddleTensors in the model's feed order and returns one PaddleTensor per fetch target, the zero-copy
calls hold inputs and outputs by name between runs. Settings that steer Paddle's own engine (IR passes,
MKLDNN, TensorRT, Lite, memory optimisation, profiling) are accepted and recorded, and change nothing here.

Where we differ from Paddle on purpose:
- `PaddleTensor(array)` keeps the array's dtype (float32, int64, int32) and refuses others; Paddle 1.8 could
  turn an int64 or float64 array into INT32 data when another argument needed a conversion.
- zero-copy calls work whether or not `switch_use_feed_fetch_ops(False)` was set (Paddle requires it), and
  one config may make several predictors.
- a model whose op types we cannot run is refused when the predictor is made, naming those ops.
"""

import enum
import os
import tempfile
import warnings

import numpy as np

__all__ = ["PaddleDType", "PaddlePlace", "PaddleBuf", "PaddleTensor", "ZeroCopyTensor", "AnalysisConfig",
           "NativeConfig", "PaddlePredictor", "AnalysisPredictor", "NativePaddlePredictor",
           "create_paddle_predictor"]


class _PyEnum(enum.IntEnum):
    """An int enum that prints as pybind11's enums do (PaddleDType.FLOAT32)."""

    def __str__(self):
        return "%s.%s" % (type(self).__name__, self.name)

    __repr__ = __str__


class PaddleDType(_PyEnum):
    FLOAT32 = 0
    INT64 = 1
    INT32 = 2


class PaddlePlace(_PyEnum):
    UNK = -1
    CPU = 0
    GPU = 1


_NP_OF = {PaddleDType.FLOAT32: np.dtype("float32"), PaddleDType.INT64: np.dtype("int64"),
          PaddleDType.INT32: np.dtype("int32")}
_DTYPE_OF = {v: k for k, v in _NP_OF.items()}


def _dtype_of_array(arr, what):
    d = _DTYPE_OF.get(np.dtype(arr.dtype))
    if d is None:
        raise TypeError("%s: PaddleTensor holds float32, int64 or int32 data, got %s (cast it with .astype())"
                        % (what, np.dtype(arr.dtype).name))
    return d


class PaddleBuf:
    """A byte buffer: PaddleBuf(nbytes), PaddleBuf([floats]) or PaddleBuf(ndarray of float32/int64/int32)."""

    def __init__(self, data=0):
        self._bytes = np.zeros(0, dtype=np.uint8)
        if isinstance(data, (int, np.integer)) and not isinstance(data, bool):
            self.resize(int(data))
        else:
            self.reset(data)

    def reset(self, data):
        if isinstance(data, np.ndarray):
            _dtype_of_array(data, "PaddleBuf")
            arr = np.ascontiguousarray(data)
        else:
            arr = np.asarray(list(data), dtype=np.float32)
        self._bytes = arr.reshape(-1).view(np.uint8).copy()

    def resize(self, nbytes):
        if nbytes < 0:
            raise ValueError("PaddleBuf.resize: size must be >= 0, got %d" % nbytes)
        old = self._bytes
        self._bytes = np.zeros(nbytes, dtype=np.uint8)
        self._bytes[:min(nbytes, old.size)] = old[:nbytes]

    def length(self):
        return int(self._bytes.size)

    def empty(self):
        return self._bytes.size == 0

    def _view(self, dtype):
        dtype = np.dtype(dtype)
        n = self._bytes.size // dtype.itemsize
        return self._bytes[:n * dtype.itemsize].view(dtype)

    def float_data(self):
        return self._view(np.float32).tolist()

    def int64_data(self):
        return self._view(np.int64).tolist()

    def int32_data(self):
        return self._view(np.int32).tolist()

    def tolist(self, dtype):
        if dtype not in ("float32", "int64", "int32"):
            raise ValueError("PaddleBuf.tolist: dtype must be 'float32', 'int64' or 'int32', got %r" % (dtype,))
        return self._view(dtype).tolist()

    def __repr__(self):
        return "PaddleBuf(%d bytes)" % self.length()


class PaddleTensor:
    """An input or output of PaddlePredictor.run: name, shape, lod (offsets, Paddle's form), dtype, data."""

    # shape and lod read back as lists whatever was assigned (a tuple shape, numpy offsets), as in Paddle
    shape = property(lambda self: self._shape,
                     lambda self, v: setattr(self, "_shape", [int(d) for d in v]))
    lod = property(lambda self: self._lod,
                   lambda self, v: setattr(self, "_lod", [[int(x) for x in level] for level in (v or [])]))

    def __init__(self, data=None, name="", lod=None, copy=True):
        self.name = name
        self.lod = lod
        if data is None:
            self.shape, self.dtype, self.data = [], PaddleDType.FLOAT32, PaddleBuf()
            return
        arr = data if isinstance(data, np.ndarray) else np.asarray(data)
        self.dtype = _dtype_of_array(arr, "PaddleTensor %r" % name if name else "PaddleTensor")
        self.shape = [int(s) for s in arr.shape]
        self.data = PaddleBuf(arr)

    def as_ndarray(self):
        dtype = _NP_OF[PaddleDType(int(self.dtype))]
        flat = self.data._view(dtype)
        n = int(np.prod(self.shape)) if self.shape else flat.size
        if flat.size != n:
            raise ValueError("PaddleTensor %r: shape %s needs %d %s values, its data holds %d"
                             % (self.name, list(self.shape), n, dtype.name, flat.size))
        return flat.reshape([int(s) for s in self.shape] if self.shape else [n]).copy()

    def __repr__(self):
        return "PaddleTensor(name=%r, shape=%s, dtype=%s, lod=%s)" % (self.name, self.shape, self.dtype, self.lod)


class ZeroCopyTensor:
    """One input or output of a predictor, by name (get_input_tensor / get_output_tensor)."""

    def __init__(self, predictor, name, is_input):
        self._p, self._name, self._input = predictor, name, is_input

    def name(self):
        return self._name

    def reshape(self, shape):
        if not self._input:
            raise ValueError("ZeroCopyTensor.reshape: '%s' is an output" % self._name)
        self._p._in_shape[self._name] = [int(s) for s in shape]

    def copy_from_cpu(self, data):
        if not self._input:
            raise ValueError("ZeroCopyTensor.copy_from_cpu: '%s' is an output of the model" % self._name)
        arr = np.array(data, copy=True)
        self._p._in_data[self._name] = arr
        self._p._in_shape[self._name] = list(arr.shape)

    def set_lod(self, lod):
        if not self._input:
            raise ValueError("ZeroCopyTensor.set_lod: '%s' is an output of the model" % self._name)
        self._p._in_lod[self._name] = [[int(x) for x in level] for level in lod]

    def lod(self):
        if self._input:
            return [list(level) for level in self._p._in_lod.get(self._name, [])]
        return self._p._output(self._name)[1]

    def shape(self):
        if self._input:
            return list(self._p._in_shape.get(self._name, []))
        return list(self._p._output(self._name)[0].shape)

    def type(self):
        if self._input:
            arr = self._p._in_data.get(self._name)
            return _DTYPE_OF.get(arr.dtype if arr is not None else self._p._var_dtype(self._name),
                                 PaddleDType.FLOAT32)
        return _DTYPE_OF.get(self._p._output(self._name)[0].dtype, PaddleDType.FLOAT32)

    def copy_to_cpu(self):
        if self._input:
            arr = self._p._in_data.get(self._name)
            if arr is None:
                raise ValueError("ZeroCopyTensor.copy_to_cpu: input '%s' holds no data yet" % self._name)
            return arr.copy()
        return self._p._output(self._name)[0].copy()


# -- configs ----------------------------------------------------------------------------------------

class _PassStrategy:
    """config.pass_builder(): the pass list is kept, as scripts edit it, and changes nothing here."""

    def __init__(self, use_gpu=False):
        self._passes, self._analysis, self._gpu, self._debug = [], [], use_gpu, False

    def all_passes(self):
        return list(self._passes)

    def analysis_passes(self):
        return list(self._analysis)

    def set_passes(self, passes):
        self._passes = list(passes)

    def append_pass(self, name):
        self._passes.append(name)

    def append_analysis_pass(self, name):
        self._analysis.append(name)

    def insert_pass(self, idx, name):
        self._passes.insert(idx, name)

    def delete_pass(self, name_or_idx):
        if isinstance(name_or_idx, int):
            if 0 <= name_or_idx < len(self._passes):
                del self._passes[name_or_idx]
        else:
            self._passes = [p for p in self._passes if p != name_or_idx]

    def turn_on_debug(self):
        self._debug = True

    def debug_string(self):
        return "\n".join(self._passes)

    def enable_cudnn(self):
        pass

    def enable_mkldnn(self):
        pass

    def enable_mkldnn_quantizer(self):
        pass

    def use_gpu(self):
        return self._gpu


class _Precision(_PyEnum):
    Float32 = 0
    Int8 = 1
    Half = 2


class AnalysisConfig:
    """AnalysisConfig(), AnalysisConfig(model_dir), AnalysisConfig(prog_file, params_file) or a copy of another.

    model_dir holds `__model__` and one file per parameter; prog_file + params_file are a model file and a
    combined parameter file. enable_use_gpu selects CUDA when torch sees a CUDA device (else CPU, with a
    warning); the other engine settings are recorded and have no effect on torch."""

    Precision = _Precision
    Float32, Int8, Half = _Precision.Float32, _Precision.Int8, _Precision.Half

    def __init__(self, model_dir_or_prog=None, params_file=None):
        self._s = dict(model_dir="", prog_file="", params_file="", prog_buffer=None, params_buffer=None,
                       use_gpu=False, gpu_device_id=0, memory_pool_init_size_mb=100, ir_optim=True,
                       ir_debug=False, use_feed_fetch_ops=True, specify_input_name=False, mkldnn=False,
                       tensorrt=False, lite=False, memory_optim=False, profile=False, glog_info=True,
                       quantizer=False, num_threads=1, threads_set=False, mkldnn_cache_capacity=0,
                       mkldnn_op=set(), optim_cache_dir="")
        if isinstance(model_dir_or_prog, AnalysisConfig):
            self._s = dict(model_dir_or_prog._s)
            self._s["mkldnn_op"] = set(self._s["mkldnn_op"])
        elif model_dir_or_prog is not None:
            self.set_model(model_dir_or_prog, params_file)
        self._passes = _PassStrategy()

    # model ------------------------------------------------------------------------------------------
    def set_model(self, model_dir_or_prog, params_file=None):
        if params_file is None:
            self._s.update(model_dir=str(model_dir_or_prog), prog_file="", params_file="")
        else:
            self._s.update(model_dir="", prog_file=str(model_dir_or_prog), params_file=str(params_file))
        self._s.update(prog_buffer=None, params_buffer=None)

    def set_prog_file(self, path):
        self._s["prog_file"] = str(path)

    def set_params_file(self, path):
        self._s["params_file"] = str(path)

    def set_model_buffer(self, prog_buffer, prog_size, params_buffer, params_size):
        def as_bytes(b, n):
            b = b.encode("latin-1") if isinstance(b, str) else bytes(b)
            return b[:n]
        self._s.update(prog_buffer=as_bytes(prog_buffer, prog_size), params_buffer=as_bytes(params_buffer,
                                                                                             params_size))

    def model_from_memory(self):
        return self._s["prog_buffer"] is not None

    def model_dir(self):
        return self._s["model_dir"]

    def prog_file(self):
        return self._s["prog_file"]

    def params_file(self):
        return self._s["params_file"]

    # device -----------------------------------------------------------------------------------------
    def enable_use_gpu(self, memory_pool_init_size_mb, device_id=0):
        self._s.update(use_gpu=True, memory_pool_init_size_mb=int(memory_pool_init_size_mb),
                       gpu_device_id=int(device_id))

    def disable_gpu(self):
        self._s["use_gpu"] = False

    def use_gpu(self):
        return self._s["use_gpu"]

    def gpu_device_id(self):
        return self._s["gpu_device_id"]

    def memory_pool_init_size_mb(self):
        return self._s["memory_pool_init_size_mb"]

    def fraction_of_gpu_memory_for_pool(self):
        return 0.0

    def set_cpu_math_library_num_threads(self, n):
        self._s.update(num_threads=int(n), threads_set=True)

    def cpu_math_library_num_threads(self):
        return self._s["num_threads"]

    # feed/fetch -------------------------------------------------------------------------------------
    def switch_use_feed_fetch_ops(self, x=True):
        self._s["use_feed_fetch_ops"] = bool(x)

    def use_feed_fetch_ops_enabled(self):
        return self._s["use_feed_fetch_ops"]

    def switch_specify_input_names(self, x=True):
        self._s["specify_input_name"] = bool(x)

    def specify_input_name(self):
        return self._s["specify_input_name"]

    # Paddle's engine settings: recorded, no effect on torch -----------------------------------------
    def switch_ir_optim(self, x=True):
        self._s["ir_optim"] = bool(x)

    def ir_optim(self):
        return self._s["ir_optim"]

    def switch_ir_debug(self, x=True):
        self._s["ir_debug"] = bool(x)

    def enable_mkldnn(self):
        self._s["mkldnn"] = True

    def mkldnn_enabled(self):
        return self._s["mkldnn"]

    def set_mkldnn_cache_capacity(self, capacity=0):
        self._s["mkldnn_cache_capacity"] = int(capacity)

    def set_mkldnn_op(self, op_types):
        self._s["mkldnn_op"] = set(op_types)

    def enable_quantizer(self):
        self._s["quantizer"] = True

    def quantizer_config(self):
        return None

    def enable_tensorrt_engine(self, workspace_size=1 << 20, max_batch_size=1, min_subgraph_size=3,
                               precision_mode=_Precision.Float32, use_static=False, use_calib_mode=True):
        self._s["tensorrt"] = True

    def tensorrt_engine_enabled(self):
        return self._s["tensorrt"]

    def set_trt_dynamic_shape_info(self, min_input_shape=None, max_input_shape=None, optim_input_shape=None,
                                   disable_trt_plugin_fp16=False):
        pass

    def enable_lite_engine(self, precision_mode=_Precision.Float32, zero_copy=False, passes_filter=None,
                           ops_filter=None):
        self._s["lite"] = True

    def lite_engine_enabled(self):
        return self._s["lite"]

    def enable_memory_optim(self):
        self._s["memory_optim"] = True

    def enable_profile(self):
        self._s["profile"] = True

    def disable_glog_info(self):
        self._s["glog_info"] = False

    def glog_info_disabled(self):
        return not self._s["glog_info"]

    def set_optim_cache_dir(self, path):
        self._s["optim_cache_dir"] = str(path)

    def delete_pass(self, name):
        self._passes.delete_pass(name)

    def pass_builder(self):
        return self._passes

    def to_native_config(self):
        c = NativeConfig()
        c.model_dir, c.prog_file, c.param_file = self.model_dir(), self.prog_file(), self.params_file()
        c.use_gpu, c.device = self.use_gpu(), self.gpu_device_id()
        c.specify_input_name = self.specify_input_name()
        c.set_cpu_math_library_num_threads(self.cpu_math_library_num_threads())
        return c

    def _model_source(self):
        s = self._s
        return dict(model_dir=s["model_dir"], prog_file=s["prog_file"], params_file=s["params_file"],
                    prog_buffer=s["prog_buffer"], params_buffer=s["params_buffer"], use_gpu=s["use_gpu"],
                    device=s["gpu_device_id"], specify_input_name=s["specify_input_name"],
                    num_threads=s["num_threads"] if s["threads_set"] else None)


class NativeConfig:
    """Paddle's NativeConfig: fields model_dir, prog_file, param_file, use_gpu, device, fraction_of_gpu_memory,
    specify_input_name."""

    def __init__(self):
        self.model_dir = ""
        self.prog_file = ""
        self.param_file = ""
        self.use_gpu = False
        self.device = 0
        self.fraction_of_gpu_memory = -1.0
        self.specify_input_name = False
        self._num_threads = 1
        self._threads_set = False

    def set_cpu_math_library_num_threads(self, n):
        self._num_threads, self._threads_set = int(n), True

    def cpu_math_library_num_threads(self):
        return self._num_threads

    def _model_source(self):
        return dict(model_dir=self.model_dir, prog_file=self.prog_file, params_file=self.param_file,
                    prog_buffer=None, params_buffer=None, use_gpu=bool(self.use_gpu), device=int(self.device),
                    specify_input_name=bool(self.specify_input_name),
                    num_threads=self._num_threads if self._threads_set else None)


# -- predictors -------------------------------------------------------------------------------------

def _place(src):
    from .core import CPUPlace, CUDAPlace
    if not src["use_gpu"]:
        return CPUPlace()
    import torch
    if torch.cuda.is_available():
        return CUDAPlace(src["device"])
    warnings.warn("inference config asks for GPU %d but torch sees no CUDA device: running on CPU"
                  % src["device"], RuntimeWarning, stacklevel=3)
    return CPUPlace()


def _check_ops(program, path):
    """Name every op type of the model that has no lowering here, with where it first occurs."""
    from ..backends.lowering.registry import known_op_types
    from ..ops.roles import is_autograd_op
    known = known_op_types()
    lacking = {}
    for block in program.blocks:
        for i, op in enumerate(block.ops):
            if op.type not in known and op.type not in ("feed", "fetch") and not is_autograd_op(op):
                lacking.setdefault(op.type, "block %d op %d" % (block.idx, i))
    if lacking:
        raise NotImplementedError("inference model %s uses op type(s) this package cannot run: %s"
                                  % (path, ", ".join("'%s' (%s)" % kv for kv in sorted(lacking.items()))))


def _load_model(src, scope, exe):
    """Read the model the config names into scope -> (program, feed names, fetch names, model path)."""
    from .executor import scope_guard
    from .io import MODEL_FILENAME, load_persistables, read_inference_program
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
        from .core import Scope
        from .executor import Executor
        src = config._model_source()
        self._config, self._src = config, src
        if src["num_threads"] is not None:    # Paddle sets the math library's threads for the process too
            import torch
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
        from .dtypes import dtype_name
        return np.dtype(dtype_name(self._program.global_block().var(name).dtype))

    # running ----------------------------------------------------------------------------------------
    def _execute(self, feed):
        from .core import CPUPlace, LoDTensor
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
        from .proto_desc import serialize_inference_model
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
