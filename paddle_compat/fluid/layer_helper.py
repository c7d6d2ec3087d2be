"""LayerHelper: what every layer builder uses to name, create parameters and append ops (Paddle's API)."""

import copy

from ..ir import (Parameter, VarType, Variable, convert_dtype, default_main_program, default_startup_program,
                  unique_name)
from .param_attr import ParamAttr, WeightNormParamAttr
from .weight_norm import weight_normalized_parameter
from ..ir import notify_changed


class LayerHelper:
    def __init__(self, layer_type, **kwargs):
        self.kwargs = kwargs
        self.layer_type = layer_type
        if kwargs.get("name") is None:
            self.kwargs["name"] = unique_name.generate(layer_type)

    @property
    def name(self):
        return self.kwargs["name"]

    @property
    def main_program(self):
        return default_main_program()

    @property
    def startup_program(self):
        return default_startup_program()

    def append_op(self, *args, **kwargs):
        block = self.main_program.current_block()
        op = block.append_op(*args, **kwargs)
        for names in op.outputs.values():
            for n in names:
                v = block._find_var_recursive(n)
                if v is not None and v.op is None:
                    v.op = op
        notify_changed(self.main_program, op.type)
        return op

    # inputs ----------------------------------------------------------------------------------------
    def multiple_input(self, input_param_name="input"):
        inputs = self.kwargs.get(input_param_name, [])
        if isinstance(inputs, Variable):
            return [inputs]
        if isinstance(inputs, (list, tuple)):
            for i in inputs:
                if not isinstance(i, Variable):
                    raise TypeError("%s: every element of '%s' must be a Variable, got %s"
                                    % (self.layer_type, input_param_name, type(i).__name__))
            return list(inputs)
        raise TypeError("%s: '%s' must be a Variable or a list of Variables, got %s"
                        % (self.layer_type, input_param_name, type(inputs).__name__))

    def input(self, input_param_name="input"):
        inputs = self.multiple_input(input_param_name)
        if len(inputs) != 1:
            raise ValueError("%s layer only takes one input" % self.layer_type)
        return inputs[0]

    def input_dtype(self, input_param_name="input"):
        dtype = None
        for each in self.multiple_input(input_param_name):
            if dtype is None:
                dtype = each.dtype
            elif dtype != each.dtype:
                raise ValueError("%s: all inputs must have the same dtype, got %s and %s"
                                 % (self.layer_type, dtype, each.dtype))
        return dtype

    @property
    def param_attr(self):
        return ParamAttr._to_attr(self.kwargs.get("param_attr", None))

    @property
    def bias_attr(self):
        return ParamAttr._to_attr(self.kwargs.get("bias_attr", None))

    def multiple_param_attr(self, length):
        param_attr = self.param_attr
        if isinstance(param_attr, ParamAttr):
            param_attr = [param_attr]
        if len(param_attr) != 1 and len(param_attr) != length:
            raise ValueError("%s: %d param_attrs given for %d inputs" % (self.layer_type, len(param_attr), length))
        if len(param_attr) == 1 and length != 1:
            param_attr = [param_attr[0]] + [copy.copy(param_attr[0]) for _ in range(length - 1)]
            for a in param_attr[1:]:
                if a.name is not None:
                    # Paddle shares one named parameter across inputs only by explicit repetition.
                    pass
        return param_attr

    def iter_inputs_and_params(self, input_param_name="input"):
        inputs = self.multiple_input(input_param_name)
        param_attrs = self.multiple_param_attr(len(inputs))
        for ipt, attr in zip(inputs, param_attrs):
            yield ipt, attr

    # variables ---------------------------------------------------------------------------------------
    def create_parameter(self, attr, shape, dtype, is_bias=False, default_initializer=None, stop_gradient=False,
                         type=VarType.LOD_TENSOR):
        if attr is False:
            return None
        attr = copy.copy(attr)
        if default_initializer is None:
            if is_bias:
                attr._set_default_bias_initializer()
            else:
                attr._set_default_param_initializer()
        else:
            attr._set_default_initializer(default_initializer)
        if attr.name is None:
            attr.name = unique_name.generate(".".join([self.name, "b" if is_bias else "w"]))
        shape = [int(d) for d in shape]
        for d in shape:
            if d <= 0:
                raise ValueError("%s: parameter %s needs a positive shape, got %s (is an input's feature "
                                 "dimension unknown?)" % (self.layer_type, attr.name, shape))
        if isinstance(attr, WeightNormParamAttr):
            w = weight_normalized_parameter(self, attr, shape, dtype)
            WeightNormParamAttr.params_with_weight_norm.append(w)
            return w
        self.startup_program.global_block().create_parameter(dtype=dtype, shape=shape, type=type,
                                                             **attr._to_kwargs(with_initializer=True))
        p = self.main_program.global_block().create_parameter(dtype=dtype, shape=shape, type=type,
                                                              **attr._to_kwargs())
        if stop_gradient:
            p.stop_gradient = True
        return p

    def get_parameter(self, name):
        p = self.main_program.global_block().var(name)
        if not isinstance(p, Parameter):
            raise ValueError("no Parameter named %s" % name)
        return p

    def create_variable_for_type_inference(self, dtype, stop_gradient=False, shape=None, lod_level=0):
        return self.main_program.current_block().create_var(
            name=unique_name.generate_with_ignorable_key(".".join([self.name, "tmp"])), dtype=dtype,
            shape=shape, type=VarType.LOD_TENSOR, persistable=False, stop_gradient=stop_gradient,
            lod_level=lod_level)

    create_tmp_variable = create_variable_for_type_inference

    def create_variable(self, **kwargs):
        return self.main_program.current_block().create_var(**kwargs)

    def create_global_variable(self, persistable=False, *args, **kwargs):
        return self.main_program.global_block().create_var(*args, persistable=persistable, **kwargs)

    def create_or_get_global_variable(self, name, *args, **kwargs):
        gb = self.main_program.global_block()
        if gb.has_var(name):
            return gb.var(name), False
        return self.create_global_variable(*args, name=name, **kwargs), True

    def set_variable_initializer(self, var, initializer):
        sb = self.startup_program.global_block()
        if sb.has_var(var.name):
            return
        svar = sb.create_var(name=var.name, type=var.type, dtype=var.dtype, shape=var.shape,
                             persistable=True)
        initializer(svar, sb)

    # common tails --------------------------------------------------------------------------------------
    def append_bias_op(self, input_var, dim_start=1, dim_end=None):
        size = list(input_var.shape[dim_start:dim_end])
        bias_attr = self.bias_attr
        if not bias_attr:
            return input_var
        b = self.create_parameter(attr=bias_attr, shape=size, dtype=input_var.dtype, is_bias=True)
        tmp = self.create_variable_for_type_inference(dtype=input_var.dtype, lod_level=input_var.lod_level)
        self.append_op(type="elementwise_add", inputs={"X": [input_var], "Y": [b]}, outputs={"Out": [tmp]},
                       attrs={"axis": dim_start})
        return tmp

    def append_activation(self, input_var):
        act = self.kwargs.get("act", None)
        if act is None:
            return input_var
        if isinstance(act, str):
            act = {"type": act}
        elif isinstance(act, dict):
            act = dict(act)
        else:
            raise TypeError("%s: act must be a str such as 'relu', got %r" % (self.layer_type, act))
        act_type = act.pop("type")
        tmp = self.create_variable_for_type_inference(dtype=input_var.dtype, lod_level=input_var.lod_level)
        self.append_op(type=act_type, inputs={"X": [input_var]}, outputs={"Out": [tmp]}, attrs=act)
        return tmp

    def is_instance(self, param_name, cls):
        param = self.kwargs.get(param_name, None)
        if not isinstance(param, cls):
            raise TypeError("The input {0} parameter of method {1} must be {2}".format(
                param_name, self.layer_type, cls.__name__))


def check_dtype(dtype):
    return convert_dtype(dtype)
