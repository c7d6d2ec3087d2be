"""Gradient clipping: by value, by norm, by global norm (ops in the optimize role, Paddle's @CLIP scope)."""

from . import framework, layers

__all__ = ["ErrorClipByValue", "GradientClipByValue", "GradientClipByNorm", "GradientClipByGlobalNorm",
           "set_gradient_clip", "append_gradient_clip_ops"]

CLIP_SCOPE = "append_clip_@CLIP"


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
        return _apply(params_grads, lambda p: self)


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
        if grad.type == framework.VarType.SELECTED_ROWS:
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
        program = framework.default_main_program()
    if param_list is None:
        param_list = program.global_block().all_parameters()
    for p in param_list:
        if isinstance(p, str):
            p = program.global_block().var(p)
        p.gradient_clip_attr = clip


def _apply(params_grads, clip_of_attr):
    def clip_of(p):
        attr = clip_of_attr(p)
        if attr.need_clip is not None and not attr.need_clip(p):
            return _NO_CLIP
        return attr

    context = {}
    pairs = [(p, g) for p, g in params_grads if g is not None]
    for p, g in pairs:
        with p.block.program._optimized_guard([p, g]), framework.name_scope(CLIP_SCOPE):
            clip_of(p)._process_context(context=context, param=p, grad=g)
    res = []
    for p, g in pairs:
        with p.block.program._optimized_guard([p, g]), framework.name_scope(CLIP_SCOPE):
            res.append(clip_of(p)._create_operators(param=p, grad=g))
    return res


def append_gradient_clip_ops(params_grads):
    def clip_of(p):
        attr = getattr(p, "gradient_clip_attr", None) or NullGradientClipAttr()
        if not isinstance(attr, BaseGradientClipAttr):
            raise TypeError("param %s: gradient_clip must be a GradientClipBy* instance, got %r" % (p.name, attr))
        return attr

    if all(getattr(p, "gradient_clip_attr", None) is None for p, _ in params_grads):
        return list(params_grads)
    return _apply(params_grads, clip_of)
