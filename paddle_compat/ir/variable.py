"""Variable and Parameter: named, typed slots of a Block. They hold no data; a Scope does.
VarDesc: Paddle's desc-level view of a Variable (`var.desc`)."""

from . import unique_name
from .dtypes import VarDesc as _VarDescBase, VarType, convert_dtype
from .proto_desc import encode_var
from .views import View, text


def _flag_property(name, doc):
    key = "_" + name

    def get(self):
        return getattr(self, key)

    def set(self, value):
        setattr(self, key, bool(value))
        if self.block is not None:
            self.block.program._bump()

    return property(get, set, doc=doc)


class Variable:
    """A named variable of a Block. Arithmetic and comparisons append elementwise ops
    (see layers/math_op_patch.py), as in Paddle."""

    def __init__(self, block, type=VarType.LOD_TENSOR, name=None, shape=None, dtype=None, lod_level=None,
                 persistable=None, error_clip=None, stop_gradient=False, is_data=False, need_check_feed=False,
                 belong_to_optimizer=False, **kwargs):
        self.block = block
        self.name = name if name is not None else unique_name.generate("_generated_var")
        self.type = type
        self.shape = tuple(int(d) for d in shape) if shape is not None else ()
        self.dtype = convert_dtype(dtype) if dtype is not None else VarType.FP32
        self.lod_level = int(lod_level) if lod_level is not None else 0
        self._persistable = bool(persistable) if persistable is not None else False
        self._stop_gradient = bool(stop_gradient)
        self.error_clip = error_clip
        self.is_data = is_data
        self.need_check_feed = need_check_feed
        self.belong_to_optimizer = belong_to_optimizer
        self.op = None

    persistable = _flag_property("persistable", "kept in the scope across runs (params, optimizer state)")
    stop_gradient = _flag_property("stop_gradient", "no gradient flows through this variable")

    @property
    def desc(self):
        """Paddle's `var.desc` (fluid.core.VarDesc): a view of this variable."""
        return VarDesc(self)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def grad_name(self):
        """The name this variable's gradient gets: <name>@GRAD."""
        return self.name + "@GRAD"

    def _copy_meta_to(self, block, cls=None, **extra):
        kw = dict(type=self.type, name=self.name, shape=self.shape, dtype=self.dtype, lod_level=self.lod_level,
                  persistable=self.persistable, error_clip=self.error_clip, stop_gradient=self.stop_gradient,
                  is_data=self.is_data, need_check_feed=self.need_check_feed,
                  belong_to_optimizer=self.belong_to_optimizer)
        kw.update(extra)
        return (cls or Variable)(block, **kw)

    def to_string(self, throw_on_error=False, with_details=False):
        kind = "persist " if self.persistable else ""
        s = "%svar %s : %s.shape%s.dtype(%s)" % (kind, self.name, self.type.name, self.shape, self.dtype)
        if self.lod_level:
            s += ".lod_level(%d)" % self.lod_level
        if self.stop_gradient:
            s += ".stop_gradient(True)"
        if with_details:   # Paddle's with_details adds the Python-side attributes
            s += " {%s}" % ", ".join("%s: %r" % (k, getattr(self, k)) for k in self._DETAILS)
        return s

    _DETAILS = ("persistable", "stop_gradient", "error_clip", "is_data", "need_check_feed")

    def __str__(self):
        return self.to_string()

    def __repr__(self):
        return "<Variable %s %s %s>" % (self.name, self.shape, self.dtype)

    def _set_info(self, key, value):
        """Paddle's per-variable Python-side notes (Variable._set_info / _get_info); never saved."""
        self.__dict__.setdefault("_info", {})[key] = value

    def _get_info(self, key):
        return self.__dict__.get("_info", {}).get(key)

    # identity-based hashing: __eq__ is overloaded into an elementwise op (as in Paddle)
    __hash__ = object.__hash__


class Parameter(Variable):
    """A trainable, persistable variable of the global block."""

    def __init__(self, block, shape, dtype, **kwargs):
        # Paddle 1.8.5's checks and messages (framework.Parameter)
        if shape is None:
            raise ValueError("The shape of Parameter should not be None")
        if dtype is None:
            raise ValueError("The dtype of Parameter should not be None")
        if len(shape) == 0:
            raise ValueError("The dimensions of shape for Parameter must be greater than 0")
        for d in shape:
            if int(d) < 0:
                raise ValueError("Each dimension of shape for Parameter must be greater than 0, but received %s"
                                 % list(shape))
        self.trainable = kwargs.pop("trainable", True)
        self.optimize_attr = kwargs.pop("optimize_attr", {"learning_rate": 1.0})
        self.regularizer = kwargs.pop("regularizer", None)
        self.gradient_clip_attr = kwargs.pop("gradient_clip_attr", None)
        self.do_model_average = kwargs.pop("do_model_average", None)
        self.is_distributed = kwargs.pop("is_distributed", False)
        kwargs["persistable"] = True
        super().__init__(block, shape=shape, dtype=dtype, **kwargs)

    def _copy_meta_to(self, block, cls=None, **extra):
        v = super()._copy_meta_to(block, cls=cls or Parameter, trainable=self.trainable,
                                  optimize_attr=dict(self.optimize_attr), regularizer=self.regularizer,
                                  gradient_clip_attr=self.gradient_clip_attr,
                                  do_model_average=self.do_model_average, is_distributed=self.is_distributed,
                                  **extra)
        return v

    _DETAILS = Variable._DETAILS + ("trainable", "optimize_attr", "regularizer", "gradient_clip_attr",
                                    "do_model_average")

    def to_string(self, throw_on_error=False, with_details=False):
        s = super().to_string(throw_on_error, with_details)
        return ("trainable param " if self.trainable else "param ") + s[len("persist "):]

    def __repr__(self):
        return "<Parameter %s %s %s>" % (self.name, self.shape, self.dtype)


class VarDesc(_VarDescBase, View):
    """A variable's desc (core.VarDesc keeps Paddle's VarType enum: core.VarDesc.VarType.FP32)."""
    __slots__ = ()

    def name(self):
        return self._obj.name

    def set_name(self, name):
        self._obj.block._rename_var(self._obj.name, text(name))

    def type(self):
        return self._obj.type

    def set_type(self, t):
        self._obj.type = convert_dtype(t)
        self._touch()

    def shape(self):
        return list(self._obj.shape)

    def set_shape(self, shape):
        self._obj.shape = tuple(int(s) for s in shape)
        self._touch()

    def dtype(self):
        return self._obj.dtype

    def set_dtype(self, dtype):
        self._obj.dtype = convert_dtype(dtype)
        self._touch()

    def lod_level(self):
        return self._obj.lod_level

    def set_lod_level(self, level):
        self._obj.lod_level = int(level)
        self._touch()

    def persistable(self):
        return self._obj.persistable

    def set_persistable(self, value):
        self._obj.persistable = value

    def need_check_feed(self):
        return bool(self._obj.need_check_feed)

    def set_need_check_feed(self, value):
        self._obj.need_check_feed = bool(value)
        self._touch()

    # a READER variable describes several tensors
    def shapes(self):
        return [list(s) for s in getattr(self._obj, "_reader_shapes", [])]

    def set_shapes(self, shapes):
        self._obj._reader_shapes = [tuple(int(d) for d in s) for s in shapes]
        self._touch()

    def dtypes(self):
        return list(getattr(self._obj, "_reader_dtypes", []))

    def set_dtypes(self, dtypes):
        self._obj._reader_dtypes = [convert_dtype(d) for d in dtypes]
        self._touch()

    def lod_levels(self):
        return list(getattr(self._obj, "_reader_lod_levels", []))

    def set_lod_levels(self, levels):
        self._obj._reader_lod_levels = [int(x) for x in levels]
        self._touch()

    def serialize_to_string(self):
        return encode_var(self._obj)

    def _touch(self):
        if self._obj.block is not None:
            self._obj.block.program._bump()


VarDesc.VarType = VarType
