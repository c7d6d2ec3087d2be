"""Gradient clipping: by value, by norm, by global norm (ops in the optimize role, in Paddle's name scopes)."""

from ..ir import VarType, default_main_program, name_scope
from . import layers

__all__ = ["ErrorClipByValue", "GradientClipByValue", "GradientClipByNorm", "GradientClipByGlobalNorm",
           "set_gradient_clip", "append_gradient_clip_ops"]

# Paddle 1.8's name scopes: set_gradient_clip's ops (append_gradient_clip_ops) in a scope per parameter,
# the norms under "gradient_clip_@CLIP" and the clipped gradients under "graident_clip_@CLIP" (Paddle's
# spelling, kept: op_namescope is part of a program); its pserver transpiler keeps every op of an @CLIP
# scope on the trainer. optimizer(grad_clip=...) puts all of its ops in one "gradient_clip" scope.
CLIP_NORM_SCOPE = "gradient_clip_@CLIP"
CLIP_OPS_SCOPE = "graident_clip_@CLIP"
OPTIMIZER_CLIP_SCOPE = "gradient_clip"


class ErrorClipByValue:
    def __init__(self, max, min=None):
        max = float(max)
        self.max, self.min = max, (-max if min is None else float(min))


def _need_clip(fn):
    if fn is not None and not callable(fn):
        raise TypeError("need_clip must be a function param -> bool (or None), got %r" % (fn,))
    return fn


class BaseGradientClipAttr:
    need_clip = None   # Paddle 1.8: a param -> bool filter; params it rejects are neither clipped nor counted

    def _process_context(self, context, param, grad):
        pass

    def _create_operators(self, param, grad):
        return param, grad

    def __call__(self, params_grads):
        """The 1.8 `optimizer(grad_clip=...)` form: clip a whole list of (param, grad)."""
        with name_scope(OPTIMIZER_CLIP_SCOPE):
            return _apply(params_grads, lambda p: self, None, None, correct_role_var=False)


class NullGradientClipAttr(BaseGradientClipAttr):
    pass


_NO_CLIP = NullGradientClipAttr()


class GradientClipByValue(BaseGradientClipAttr):
    def __init__(self, max, min=None, need_clip=None):
        self.need_clip = _need_clip(need_clip)
        max = float(max)
        min = -max if min is None else float(min)
        if min > max:
            raise ValueError("GradientClipByValue: min (%s) must be <= max (%s)" % (min, max))
        self.max, self.min = max, min

    def _create_operators(self, param, grad):
        return param, layers.clip(x=grad, min=self.min, max=self.max)


class GradientClipByNorm(BaseGradientClipAttr):
    def __init__(self, clip_norm, need_clip=None):
        self.need_clip = _need_clip(need_clip)
        self.clip_norm = float(clip_norm)

    def _create_operators(self, param, grad):
        return param, layers.clip_by_norm(x=grad, max_norm=self.clip_norm)


class GradientClipByGlobalNorm(BaseGradientClipAttr):
    """Scale every grad of the group by clip_norm / max(global_norm, clip_norm)."""

    def __init__(self, clip_norm, group_name="default_group", need_clip=None):
        self.need_clip = _need_clip(need_clip)
        self.clip_norm = float(clip_norm)
        self.group_name = group_name

    def _process_context(self, context, param, grad):
        if self.group_name not in context:
            context[self.group_name] = []
            context[self.group_name + "_clip_value"] = self.clip_norm
            context[self.group_name + "_clip"] = layers.fill_constant(shape=[1], dtype="float32",
                                                                      value=self.clip_norm)
        elif self.clip_norm != context[self.group_name + "_clip_value"]:
            raise ValueError("GradientClipByGlobalNorm: all params of group '%s' need the same clip_norm"
                             % self.group_name)
        if grad.type == VarType.SELECTED_ROWS:
            # repeated rows must be added up before squaring (Paddle merges here too)
            grad = layers.get_tensor_from_selected_rows(layers.merge_selected_rows(grad))
        context[self.group_name].append(layers.reduce_sum(input=layers.square(grad)))
        self.context = context

    def _create_operators(self, param, grad):
        key = self.group_name + "_scale"
        if key not in self.context:
            norm = layers.sqrt(x=layers.sums(input=self.context[self.group_name]))
            clip_var = self.context[self.group_name + "_clip"]
            self.context[key] = layers.elementwise_div(x=clip_var,
                                                       y=layers.elementwise_max(x=clip_var, y=norm))
        return param, layers.elementwise_mul(x=grad, y=self.context[key])


def set_gradient_clip(clip, param_list=None, program=None):
    if not isinstance(clip, BaseGradientClipAttr):
        raise TypeError("set_gradient_clip: clip must be a GradientClipBy* instance, got %r" % (clip,))
    if program is None:
        program = default_main_program()
    if param_list is None:
        param_list = program.global_block().all_parameters()
    for p in param_list:
        if isinstance(p, str):
            p = program.global_block().var(p)
        p.gradient_clip_attr = clip


def _apply(params_grads, clip_of_attr, norm_scope, ops_scope, correct_role_var=True):
    def clip_of(p):
        attr = clip_of_attr(p)
        if attr.need_clip is not None and not attr.need_clip(p):
            return _NO_CLIP
        return attr

    context = {}
    pairs = [(p, g) for p, g in params_grads if g is not None]
    for p, g in pairs:
        with p.block.program._optimized_guard([p, g]), name_scope(norm_scope):
            clip_of(p)._process_context(context=context, param=p, grad=g)
    res = []
    for p, g in pairs:
        with p.block.program._optimized_guard([p, g]), name_scope(ops_scope):
            res.append(clip_of(p)._create_operators(param=p, grad=g))
    if correct_role_var:
        # (not for optimizer(grad_clip=...): there Paddle renames them too, and its pserver transpiler then
        # fails on the program; keeping [param, param@GRAD] lets ours move a per-parameter clip to the pservers)
        _correct_clip_op_role_var(res)
    return res


def _correct_clip_op_role_var(params_grads):
    """As Paddle: the clip ops in a "gradient_clip" scope name the clipped gradient in op_role_var."""
    new_grad = {p.name: g.name for p, g in params_grads if g is not None}
    if not params_grads:
        return
    for op in params_grads[0][0].block.program.global_block().ops:
        role_var = op.attrs.get("op_role_var") or []
        if "gradient_clip" in (op.attrs.get("op_namescope") or "") and role_var and role_var[0] in new_grad:
            op.attrs["op_role_var"] = [role_var[0], new_grad[role_var[0]]]


def append_gradient_clip_ops(params_grads):
    def clip_of(p):
        attr = getattr(p, "gradient_clip_attr", None) or NullGradientClipAttr()
        if not isinstance(attr, BaseGradientClipAttr):
            raise TypeError("param %s: gradient_clip must be a GradientClipBy* instance, got %r" % (p.name, attr))
        return attr

    if all(getattr(p, "gradient_clip_attr", None) is None for p, _ in params_grads):
        return list(params_grads)
    return _apply(params_grads, clip_of, CLIP_NORM_SCOPE, CLIP_OPS_SCOPE)
