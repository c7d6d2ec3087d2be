"""AnalysisConfig and NativeConfig: where the model is, which place runs it, and the engine settings that
are accepted and recorded (they steer Paddle's own engine and change nothing here)."""

from .tensors import _PyEnum


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
