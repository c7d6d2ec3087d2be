"""Paddle's layer_function_generator: builders made from an op type (the activations of layers.ops and layers.nn)."""

from .utils import append_defined, check_variable, single

__all__ = ["generate_activation_fn"]


def generate_activation_fn(op_type, attr_names=()):
    """The layer of a one-input activation op: layer(x, *attrs, name=None, **attrs) -> Out. attr_names:
    [(attribute, default), ...] in the order they may also be given positionally."""
    def layer(x, *args, name=None, **kwargs):
        check_variable(x, "x", op_type)
        attrs = {}
        for k, v in zip(attr_names, args):
            attrs[k[0]] = v
        for k, default in attr_names:
            if k in kwargs:
                attrs[k] = kwargs.pop(k)
            attrs.setdefault(k, default)
        if kwargs:
            raise TypeError("%s() got unexpected arguments %s" % (op_type, sorted(kwargs)))
        return single(append_defined(op_type, {"X": x}, attrs, name=name))

    layer.__name__ = op_type
    layer.__doc__ = "Paddle's %s activation: Out = %s(X), same shape and LoD as X." % (op_type, op_type)
    return layer
