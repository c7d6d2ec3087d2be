"""ParamAttr: how a layer's parameter is named, initialised, regularised, clipped and trained."""

from .initializer import Constant, Initializer, Xavier
from .regularizer import WeightDecayRegularizer

__all__ = ["ParamAttr", "WeightNormParamAttr"]


class ParamAttr:
    def __init__(self, name=None, initializer=None, learning_rate=1.0, regularizer=None, trainable=True,
                 gradient_clip=None, do_model_average=True):
        if name is not None and not isinstance(name, str):
            raise TypeError("ParamAttr name must be a str, got %r" % (name,))
        if initializer is not None and not isinstance(initializer, Initializer):
            raise TypeError("ParamAttr initializer must be a fluid.initializer.*, got %r" % (initializer,))
        self.name = name
        self.initializer = initializer
        self.learning_rate = learning_rate
        self.regularizer = regularizer
        self.trainable = trainable
        self.gradient_clip = gradient_clip
        self.do_model_average = do_model_average

    def _set_default_initializer(self, initializer):
        if initializer is None:
            if self.initializer is None:
                raise ValueError("ParamAttr.initializer is not set")
            return
        if self.initializer is not None:
            return
        self.initializer = initializer

    def _set_default_param_initializer(self):
        self._set_default_initializer(Xavier())

    def _set_default_bias_initializer(self):
        self._set_default_initializer(Constant(0.0))

    @staticmethod
    def _to_attr(arg):
        if arg is None:
            return ParamAttr()
        if isinstance(arg, (list, tuple)):
            return [ParamAttr._to_attr(a) for a in arg]
        if isinstance(arg, ParamAttr):
            return arg
        if isinstance(arg, str):
            return ParamAttr(name=arg)
        if isinstance(arg, Initializer):
            return ParamAttr(initializer=arg)
        if isinstance(arg, WeightDecayRegularizer):
            return ParamAttr(regularizer=arg)
        if isinstance(arg, bool):
            return ParamAttr._to_attr(None) if arg else False
        raise TypeError("%s cast to ParamAttr" % type(arg))

    def _to_kwargs(self, with_initializer=False):
        kwargs = {
            "name": self.name,
            "optimize_attr": {"learning_rate": self.learning_rate},
            "regularizer": self.regularizer,
            "trainable": self.trainable,
            "gradient_clip_attr": self.gradient_clip,
            "do_model_average": self.do_model_average,
        }
        if with_initializer:
            kwargs["initializer"] = self.initializer
        return kwargs


class WeightNormParamAttr(ParamAttr):
    """A parameter built as g * v / ||v|| (fluid/weight_norm.py); Paddle lists every such weight here."""

    params_with_weight_norm = []

    def __init__(self, dim=None, **kwargs):
        super().__init__(**kwargs)
        self.dim = dim
