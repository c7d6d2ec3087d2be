"""What the IR asks about an op type, answered by the op registry (Paddle's OpInfoMap).

The IR records ops of any declared type but declares none itself: paddle_compat.ops fills this table when it
is imported (`install`), as Paddle's operators register themselves with the framework. The IR asks it whether
a type may be recorded, which attributes it defaults, its proto (slots and attribute types) and its shape
inference.
"""

__all__ = ["install", "is_known_type", "attr_defaults", "declared_attrs", "get_proto", "infer_shape_of"]

_registry = None


class _NoRegistry:
    """Before paddle_compat.ops is imported: no op type is declared."""

    @staticmethod
    def is_known_type(op_type):
        return False

    @staticmethod
    def attr_defaults(op_type):
        return []

    @staticmethod
    def declared_attrs(op_type):
        return ()

    @staticmethod
    def get_proto(op_type):
        return None

    @staticmethod
    def infer_shape_of(op_type):
        return None


def install(registry):
    """registry: an object with is_known_type(t), attr_defaults(t) -> [(name, default)], declared_attrs(t) ->
    [(name, AttrType, default)] of an op type Paddle lacks, get_proto(t) -> OpProto or None,
    infer_shape_of(t) -> infer_shape(ins, attrs) or None."""
    global _registry
    _registry = registry


def _get():
    return _registry if _registry is not None else _NoRegistry


def is_known_type(op_type):
    return _get().is_known_type(op_type)


def attr_defaults(op_type):
    return _get().attr_defaults(op_type)


def declared_attrs(op_type):
    return _get().declared_attrs(op_type)


def get_proto(op_type):
    return _get().get_proto(op_type)


def infer_shape_of(op_type):
    return _get().infer_shape_of(op_type)
