"""What the builder's context adds to each op it records (fluid.name_scope's path, fluid.device_guard's device),
and the hooks told of every public change of a program (tests install the verifier there)."""

__all__ = ["NameScope", "current_name_scope", "switch_name_scope", "current_device", "switch_device",
           "change_hooks", "notify_changed", "eager_active", "install_eager_tracer"]

# Called with (program, what) after each public change of a program; tests install the verifier here.
change_hooks = []

OP_DEVICE_KEY = "op_device"
# the device fluid.device_guard names for the ops built inside it (Paddle's framework._current_device)
_current_device = None


def switch_device(device):
    global _current_device
    old, _current_device = _current_device, device
    return old


class NameScope:
    """One level of fluid.name_scope (Paddle's framework.NameScope): a prefix used again under the same
    parent gets _1, _2, ... ("optimizer", "optimizer_1"). Global, as in Paddle: the ops of every program
    built inside take its path (the startup program's initializers too)."""

    def __init__(self, name="", parent=None):
        self.name, self.parent, self._children = name, parent, {}
        self.path = (parent.path if parent is not None else "/") + (name + "/" if name else "")

    def child(self, prefix):
        n = self._children.get(prefix, 0)
        self._children[prefix] = n + 1
        return NameScope(prefix if n == 0 else "%s_%d" % (prefix, n), self)


_name_scope = NameScope()


def switch_name_scope(scope):
    global _name_scope
    old, _name_scope = _name_scope, scope
    return old


def current_name_scope():
    return _name_scope


def notify_changed(program, what):
    for hook in change_hooks:
        hook(program, what)


# The minimal eager mode (fluid/eager_op.py, above the IR) installs itself here: while its active() answers
# True, Block.create_var / append_op hand over to its create_var / trace_op (Paddle's dygraph tracer).
eager_tracer = None


def install_eager_tracer(tracer):
    global eager_tracer
    eager_tracer = tracer


def eager_active():
    return eager_tracer is not None and eager_tracer.active()


def current_device():
    return _current_device
