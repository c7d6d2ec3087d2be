"""StaticRNN, DynamicRNN and IfElse, and the LoD rank tables and tensor arrays they run on (Paddle's
fluid.layers.control_flow)."""

import contextlib

from ....ir import VarType, Variable, unique_name
from ...layer_helper import LayerHelper
from ..tensor import assign, fill_constant
from ..utils import check_variable
from .compare import increment, less_than
from .flow import ConditionalBlock, While, _SubBlock, array_read, array_write

__all__ = ["lod_rank_table", "max_sequence_len", "lod_tensor_to_array", "array_to_lod_tensor", "shrink_memory",
           "reorder_lod_tensor_by_rank", "split_lod_tensor", "merge_lod_tensor", "DynamicRNN", "StaticRNN", "IfElse"]


def _tmp(helper, dtype, block=None, **kw):
    block = block or helper.main_program.current_block()
    return block.create_var(name=unique_name.generate_with_ignorable_key(helper.name + ".tmp"), dtype=dtype, **kw)


def lod_rank_table(x, level=0):
    # Paddle 1.8.5 takes a Variable or a list of them (the op reads the first)
    if not isinstance(x, (Variable, list)):
        raise TypeError("The type of 'x' in lod_rank_table must be (Variable, list), but received %s. "
                        % type(x))
    for i, v in enumerate(x if isinstance(x, list) else [x]):
        if not isinstance(v, Variable):
            raise TypeError("The type of 'input[%d]' in lod_rank_table must be Variable, but received %s. "
                            % (i, type(v)))
    x = x[0] if isinstance(x, list) else x
    helper = LayerHelper("lod_rank_table")
    table = helper.create_variable(type=VarType.LOD_RANK_TABLE, name=unique_name.generate("lod_rank_table"))
    table.stop_gradient = True
    helper.append_op(type="lod_rank_table", inputs={"X": [x]}, outputs={"Out": [table]}, attrs={"level": level})
    return table


def _check_table(t, layer):
    if not isinstance(t, Variable) or t.type != VarType.LOD_RANK_TABLE:
        raise TypeError("%s: table must be a rank table (fluid.layers.lod_rank_table), got %r" % (layer, t))


def max_sequence_len(rank_table):
    _check_table(rank_table, "max_sequence_len")
    helper = LayerHelper("max_seqence_len")
    out = helper.create_variable_for_type_inference(dtype="int64", stop_gradient=True)
    helper.append_op(type="max_sequence_len", inputs={"RankTable": [rank_table]}, outputs={"Out": [out]})
    return out


def lod_tensor_to_array(x, table):
    check_variable(x, "x", "lod_tensor_to_array")
    _check_table(table, "lod_tensor_to_array")
    helper = LayerHelper("lod_tensor_to_array")
    arr = helper.create_variable(name=unique_name.generate("lod_tensor_to_array"),
                                 type=VarType.LOD_TENSOR_ARRAY, dtype=x.dtype)
    arr.shape = tuple(x.shape)
    helper.append_op(type="lod_tensor_to_array", inputs={"X": [x], "RankTable": [table]}, outputs={"Out": [arr]})
    return arr


def array_to_lod_tensor(x, table):
    if not isinstance(x, Variable) or x.type != VarType.LOD_TENSOR_ARRAY:
        raise TypeError("array_to_lod_tensor: x must be a LoDTensorArray, got %r" % (x,))
    _check_table(table, "array_to_lod_tensor")
    helper = LayerHelper("array_to_lod_tensor")
    # elements with a LoD (sub-sequences of a nested DynamicRNN) give one more level
    out = helper.create_variable_for_type_inference(dtype=x.dtype, shape=tuple(x.shape or (-1,)),
                                                    lod_level=1 + (x.lod_level or 0))
    helper.append_op(type="array_to_lod_tensor", inputs={"X": [x], "RankTable": [table]}, outputs={"Out": [out]})
    return out


def shrink_memory(x, i, table):
    check_variable(x, "x", "shrink_memory")
    check_variable(i, "i", "shrink_memory")
    _check_table(table, "shrink_memory")
    helper = LayerHelper("shrink_memory")
    out = helper.create_variable_for_type_inference(dtype=x.dtype, lod_level=x.lod_level)
    helper.append_op(type="shrink_rnn_memory", inputs={"X": [x], "I": [i], "RankTable": [table]},
                     outputs={"Out": [out]})
    return out


def reorder_lod_tensor_by_rank(x, rank_table):
    check_variable(x, "x", "reorder_lod_tensor_by_rank")
    _check_table(rank_table, "reorder_lod_tensor_by_rank")
    helper = LayerHelper("reorder_lod_tensor_by_rank")
    out = helper.create_variable_for_type_inference(dtype=x.dtype, lod_level=x.lod_level)
    helper.append_op(type="reorder_lod_tensor_by_rank", inputs={"X": [x], "RankTable": [rank_table]},
                     outputs={"Out": [out]})
    return out


def split_lod_tensor(input, mask, level=0):
    check_variable(input, "input", "split_lod_tensor")
    check_variable(mask, "mask", "split_lod_tensor")
    helper = LayerHelper("split_lod_tensor")
    t = helper.create_variable_for_type_inference(input.dtype, lod_level=input.lod_level)
    f = helper.create_variable_for_type_inference(input.dtype, lod_level=input.lod_level)
    helper.append_op(type="split_lod_tensor", inputs={"X": [input], "Mask": [mask]},
                     outputs={"OutTrue": [t], "OutFalse": [f]}, attrs={"level": level})
    return t, f


def merge_lod_tensor(in_true, in_false, x, mask, level=0):
    for v, n in ((in_true, "in_true"), (in_false, "in_false"), (x, "x"), (mask, "mask")):
        check_variable(v, n, "merge_lod_tensor")
    helper = LayerHelper("merge_lod_tensor")
    out = helper.create_variable_for_type_inference(in_true.dtype, lod_level=x.lod_level)
    helper.append_op(type="merge_lod_tensor", inputs={"X": [x], "Mask": [mask], "InTrue": [in_true],
                                                      "InFalse": [in_false]},
                     outputs={"Out": [out]}, attrs={"level": level})
    return out


class DynamicRNN:
    """`with drnn.block(): x_t = drnn.step_input(x); h = drnn.memory(...); ...; drnn.update_memory(h, h_new);
    drnn.output(o)`, then `drnn()` is the output as a LoD tensor with x's LoD."""

    BEFORE_RNN, IN_RNN, AFTER_RNN = 0, 1, 2

    def __init__(self, name=None):
        self.helper = LayerHelper("dynamic_rnn", name=name)
        self.status = DynamicRNN.BEFORE_RNN
        self.lod_rank_table = None
        self.max_seq_len = None
        self.step_idx = None
        self.zero_idx = None
        self.mem_dict = {}
        self.output_array = []
        self.outputs = []
        self.cond = self.helper.create_variable_for_type_inference(dtype="bool")
        self.cond.stop_gradient = False
        self.while_op = While(self.cond)
        self.input_array = []
        self.mem_link = []
        self.first_input = None

    def _parent_block_(self):
        prog = self.helper.main_program
        return prog.block(prog.current_block().parent_idx)

    def _assert_in_rnn_block_(self, method):
        if self.status != DynamicRNN.IN_RNN:
            raise ValueError("{0} can only be invoked inside rnn block.".format(method))

    def step_input(self, x, level=0):
        self._assert_in_rnn_block_("step_input")
        if not isinstance(x, Variable):
            raise TypeError("step_input() can only take a Variable as its input.")
        if x.lod_level < 1:
            raise TypeError("DynamicRNN.step_input: x (%s) must be a LoD tensor (lod_level >= 1), got lod_level "
                            "%d" % (x.name, x.lod_level))
        parent = self._parent_block_()
        if self.lod_rank_table is None:
            self.first_input = x
            self.lod_rank_table = parent.create_var(name=unique_name.generate("lod_rank_table"),
                                                    type=VarType.LOD_RANK_TABLE)
            self.lod_rank_table.stop_gradient = True
            parent.append_op(type="lod_rank_table", inputs={"X": [x]}, outputs={"Out": [self.lod_rank_table]},
                             attrs={"level": level})
            self.max_seq_len = parent.create_var(name=unique_name.generate("dynamic_rnn_max_seq_len"),
                                                 dtype="int64")
            self.max_seq_len.stop_gradient = False
            parent.append_op(type="max_sequence_len", inputs={"RankTable": [self.lod_rank_table]},
                             outputs={"Out": [self.max_seq_len]})
            self.cond.stop_gradient = True
            parent.append_op(type="less_than", inputs={"X": [self.step_idx], "Y": [self.max_seq_len]},
                             outputs={"Out": [self.cond]}, attrs={"force_cpu": True})
        arr = parent.create_var(name=unique_name.generate("dynamic_rnn_input_array"),
                                type=VarType.LOD_TENSOR_ARRAY, dtype=x.dtype)
        arr.shape = (-1,) + tuple(x.shape[1:])
        arr.lod_level = x.lod_level - 1   # a 2-level input gives each step its sub-sequences (1 level)
        self.input_array.append((arr, x.dtype))
        parent.append_op(type="lod_tensor_to_array", inputs={"X": [x], "RankTable": [self.lod_rank_table]},
                         outputs={"Out": [arr]})
        return array_read(array=arr, i=self.step_idx)

    def static_input(self, x):
        self._assert_in_rnn_block_("static_input")
        if not isinstance(x, Variable):
            raise TypeError("static_input() can only take a Variable as its input")
        if self.lod_rank_table is None:
            raise RuntimeError("static_input() must be called after step_input().")
        # a LoD input: one sequence per step-input sequence, reordered and shrunk as whole sequences
        parent = self._parent_block_()
        reordered = parent.create_var(name=unique_name.generate("dynamic_rnn_static_input_reordered"),
                                      type=VarType.LOD_TENSOR, dtype=x.dtype, lod_level=x.lod_level)
        parent.append_op(type="reorder_lod_tensor_by_rank",
                         inputs={"X": [x], "RankTable": [self.lod_rank_table]}, outputs={"Out": [reordered]})
        return shrink_memory(reordered, self.step_idx, self.lod_rank_table)

    @contextlib.contextmanager
    def block(self):
        if self.status != DynamicRNN.BEFORE_RNN:
            raise ValueError("rnn.block() can only be invoke once")
        self.step_idx = fill_constant(shape=[1], dtype="int64", value=0, force_cpu=True)
        self.step_idx.stop_gradient = False
        self.status = DynamicRNN.IN_RNN
        with self.while_op.block():
            yield
            if self.lod_rank_table is None:
                raise ValueError("DynamicRNN: call step_input() inside rnn.block()")
            increment(x=self.step_idx, value=1.0, in_place=True)
            for new_mem, mem_array in self.mem_link:
                array_write(x=new_mem, i=self.step_idx, array=mem_array)
            less_than(x=self.step_idx, y=self.max_seq_len, force_cpu=True, cond=self.cond)
        self.status = DynamicRNN.AFTER_RNN
        for arr in self.output_array:
            self.outputs.append(array_to_lod_tensor(x=arr, table=self.lod_rank_table))

    def __call__(self, *args, **kwargs):
        if self.status != DynamicRNN.AFTER_RNN:
            raise ValueError("Output of the dynamic RNN can only be visited outside the rnn block.")
        return self.outputs[0] if len(self.outputs) == 1 else self.outputs

    def _init_zero_idx_(self):
        if self.zero_idx is None:
            parent = self._parent_block_()
            self.zero_idx = parent.create_var(name=unique_name.generate("zero_idx"), dtype="int64")
            parent.append_op(type="fill_constant", inputs={}, outputs={"Out": [self.zero_idx]},
                             attrs={"shape": [1], "dtype": self.zero_idx.dtype, "value": 0.0, "force_cpu": True})

    def memory(self, init=None, shape=None, value=0.0, need_reorder=False, dtype="float32"):
        self._assert_in_rnn_block_("memory")
        self._init_zero_idx_()
        parent = self._parent_block_()
        if init is not None:
            if not isinstance(init, Variable):
                raise TypeError("The input arg `init` of memory() must be a Variable")
            init_tensor = init
            if need_reorder:
                if self.lod_rank_table is None:
                    raise ValueError("If set need_reorder to True, make sure step_input be invoked before "
                                     "memory(init=init, need_reordered=True, ...).")
                reordered = parent.create_var(name=unique_name.generate("dynamic_rnn_mem_init_reordered"),
                                              type=VarType.LOD_TENSOR, dtype=init.dtype)
                parent.append_op(type="reorder_lod_tensor_by_rank",
                                 inputs={"X": [init_tensor], "RankTable": [self.lod_rank_table]},
                                 outputs={"Out": [reordered]})
                init_tensor = reordered
            mem_array = parent.create_var(name=unique_name.generate("dynamic_rnn_mem_array"),
                                          type=VarType.LOD_TENSOR_ARRAY, dtype=init.dtype)
            mem_array.shape = tuple(init.shape)
            parent.append_op(type="write_to_array", inputs={"X": [init_tensor], "I": [self.zero_idx]},
                             outputs={"Out": [mem_array]})
            retv = array_read(array=mem_array, i=self.step_idx)
            retv = shrink_memory(x=retv, i=self.step_idx, table=self.lod_rank_table)
            self.mem_dict[retv.name] = mem_array
            return retv
        if not self.input_array:
            raise ValueError("step_input should be invoked before memory(shape=..., value=...)")
        if shape is None:
            raise ValueError("DynamicRNN.memory: give init or shape")
        init = parent.create_var(name=unique_name.generate("mem_init"), dtype=dtype, shape=[-1] + list(shape))
        arr, in_dtype = self.input_array[0]
        in0 = parent.create_var(name=unique_name.generate("in0"), dtype=in_dtype)
        parent.append_op(type="read_from_array", inputs={"X": [arr], "I": [self.zero_idx]}, outputs={"Out": [in0]})
        parent.append_op(type="fill_constant_batch_size_like", inputs={"Input": [in0]}, outputs={"Out": [init]},
                         attrs={"shape": [-1] + list(shape), "value": float(value), "dtype": init.dtype})
        return self.memory(init=init)

    def update_memory(self, ex_mem, new_mem):
        self._assert_in_rnn_block_("update_memory")
        if not isinstance(ex_mem, Variable):
            raise TypeError("The input arg `ex_mem` of update_memory() must be a Variable")
        if not isinstance(new_mem, Variable):
            raise TypeError("The input arg `new_mem` of update_memory() must be a Variable")
        mem_array = self.mem_dict.get(ex_mem.name)
        if mem_array is None:
            raise ValueError("Please invoke memory before update_memory")
        self.mem_link.append((new_mem, mem_array))

    def output(self, *outputs):
        self._assert_in_rnn_block_("output")
        parent = self._parent_block_()
        for each in outputs:
            arr = parent.create_var(name=unique_name.generate_with_ignorable_key(
                "_".join([self.helper.name, "output_array", each.name])),
                type=VarType.LOD_TENSOR_ARRAY, dtype=each.dtype)
            array_write(x=each, i=self.step_idx, array=arr)
            self.output_array.append(arr)


class _MemoryLink:
    def __init__(self, init, pre_mem, mem=None):
        self.init, self.pre_mem, self.mem = init, pre_mem, mem


class StaticRNN:
    """`with rnn.step(): x_t = rnn.step_input(x); h = rnn.memory(init=h0); ...; rnn.update_memory(h, h_new);
    rnn.step_output(o)`; then `rnn()` is [T, ...]. Inputs are time-major ([T, N, ...])."""

    BEFORE_RNN_BLOCK, IN_RNN_BLOCK, AFTER_RNN_BLOCK = 0, 1, 2

    def __init__(self, name=None):
        if name is not None and not isinstance(name, str):
            raise TypeError("StaticRNN: name must be a str or None, got %r" % (name,))
        self.helper = LayerHelper("static_rnn", name=name)
        self.memories = {}
        self.inputs = []
        self.outputs = []
        self.status = StaticRNN.BEFORE_RNN_BLOCK
        self.seq_len = None

    def step(self):
        self.status = StaticRNN.IN_RNN_BLOCK
        return _SubBlock(self.helper.main_program, self._complete_op)

    def _assert_in_rnn_block_(self, method):
        if self.status != StaticRNN.IN_RNN_BLOCK:
            raise ValueError("You must invoke {0} in rnn block".format(method))

    def _parent_block(self):
        prog = self.helper.main_program
        return prog.block(prog.current_block().parent_idx)

    def memory(self, init=None, shape=None, batch_ref=None, init_value=0.0, init_batch_dim_idx=0,
               ref_batch_dim_idx=1):
        self._assert_in_rnn_block_("memory")
        if init is None:
            if shape is None or batch_ref is None:
                raise ValueError("if init is None, memory at least need shape and batch_ref")
            parent = self._parent_block()
            boot = parent.create_var(name=unique_name.generate_with_ignorable_key(
                "@".join([self.helper.name, "memory_boot"])), shape=shape, dtype=batch_ref.dtype, persistable=False)
            parent.append_op(type="fill_constant_batch_size_like", inputs={"Input": [batch_ref]},
                             outputs={"Out": [boot]},
                             attrs={"value": init_value, "shape": list(boot.shape), "dtype": boot.dtype,
                                    "input_dim_idx": ref_batch_dim_idx, "output_dim_idx": init_batch_dim_idx})
            return self.memory(init=boot)
        check_variable(init, "init", "StaticRNN.memory")
        pre_mem = self.helper.create_variable(name=unique_name.generate_with_ignorable_key(
            "@".join([self.helper.name, "mem"])), dtype=init.dtype, shape=init.shape)
        self.memories[pre_mem.name] = _MemoryLink(init, pre_mem)
        return pre_mem

    def step_input(self, x):
        self._assert_in_rnn_block_("step_input")
        check_variable(x, "x", "StaticRNN.step_input")
        if self.seq_len is None:
            self.seq_len = x.shape[0]
        elif x.shape[0] != -1 and self.seq_len != x.shape[0]:
            raise ValueError("Static RNN only take fix seq_len input: %s has %d steps, an earlier input %d"
                             % (x.name, x.shape[0], self.seq_len))
        ipt = self.helper.create_variable(name=x.name, dtype=x.dtype, shape=list(x.shape[1:]), type=x.type)
        self.inputs.append(ipt)
        return ipt

    def step_output(self, o):
        self._assert_in_rnn_block_("step_output")
        check_variable(o, "o", "StaticRNN.step_output")
        tmp = self.helper.create_variable_for_type_inference(dtype=o.dtype)
        self.helper.append_op(type="rnn_memory_helper", inputs={"X": [o]}, outputs={"Out": [tmp]},
                              attrs={"dtype": o.dtype})
        out = self._parent_block().create_var(name=tmp.name, shape=[self.seq_len] + list(tmp.shape or ()),
                                              dtype=tmp.dtype)
        self.outputs.append(out)

    def output(self, *outputs):
        for each in outputs:
            self.step_output(each)

    def update_memory(self, mem, var):
        check_variable(mem, "mem", "StaticRNN.update_memory")
        check_variable(var, "var", "StaticRNN.update_memory")
        if mem.name not in self.memories:
            raise ValueError("StaticRNN.update_memory: %s is not a memory of this StaticRNN" % mem.name)
        self.memories[mem.name].mem = var

    def __call__(self, *args, **kwargs):
        if self.status != StaticRNN.AFTER_RNN_BLOCK:
            raise ValueError("RNN output can only be retrieved after rnn block")
        if not self.outputs:
            raise ValueError("RNN has no output")
        return self.outputs[0] if len(self.outputs) == 1 else self.outputs

    def _complete_op(self, rnn_block):
        self.status = StaticRNN.AFTER_RNN_BLOCK
        parent = self._parent_block()
        local = set()
        for op in rnn_block.ops:
            local.update(op.output_arg_names)
        local.update(v.name for v in self.inputs)
        local.update(self.memories)
        params = []
        for op in rnn_block.ops:
            for n in op.input_arg_names:
                if n not in local and n not in params:
                    params.append(n)
        boot, pre, states = [], [], []
        for name, m in self.memories.items():
            if m.mem is None:
                raise ValueError("StaticRNN: memory %s (initialised from %s) is never updated: call "
                                 "update_memory in the step" % (name, m.init.name))
            boot.append(m.init)
            pre.append(m.pre_mem.name)
            new_mem = self.helper.create_variable_for_type_inference(dtype=m.mem.dtype)
            rnn_block.append_op(type="rnn_memory_helper", inputs={"X": [m.mem]}, outputs={"Out": [new_mem]},
                                attrs={"dtype": m.mem.dtype})
            states.append(new_mem.name)
        step_scope = parent.create_var(type=VarType.STEP_SCOPES, name=unique_name.generate("static_rnn.scopes"))
        parent.append_op(type="recurrent",
                         inputs={"inputs": [parent._var_recursive(v.name) for v in self.inputs],
                                 "initial_states": boot,
                                 "parameters": [parent._var_recursive(n) for n in params]},
                         outputs={"outputs": self.outputs, "step_scopes": [step_scope]},
                         attrs={"has_states": bool(pre), "ex_states": pre, "states": states, "sub_block": rnn_block,
                                "reverse": False, "is_train": True})


class IfElse:
    """Row-wise if/else on a bool mask [N, 1]: `ie.input(x)` inside a branch is the rows of x that take it;
    `ie()` merges each branch's outputs back into row order."""

    OUT_IF_ELSE_BLOCKS, IN_IF_ELSE_TRUE_BLOCKS, IN_IF_ELSE_FALSE_BLOCKS = 0, 1, 2

    def __init__(self, cond, name=None):
        check_variable(cond, "cond", "fluid.layers.IfElse")
        self.helper = LayerHelper("ifelse", name=name)
        self.cond = cond
        self.input_table = {}
        self.status = IfElse.OUT_IF_ELSE_BLOCKS
        self.conditional_true_block = ConditionalBlock(inputs=[cond])
        self.conditional_false_block = ConditionalBlock(inputs=[cond])
        self.output_table = ([], [])

    def _parent_block(self):
        prog = self.helper.main_program
        return prog.block(prog.current_block().parent_idx)

    def input(self, x):
        if self.status == IfElse.OUT_IF_ELSE_BLOCKS:
            raise ValueError("input must in true/false blocks")
        if id(x) not in self.input_table:
            parent = self._parent_block()
            pair = tuple(parent.create_var(name=unique_name.generate_with_ignorable_key(
                "ifelse_input" + self.helper.name), dtype=x.dtype, shape=x.shape, lod_level=x.lod_level)
                for _ in range(2))
            parent.append_op(type="split_lod_tensor", inputs={"X": [x], "Mask": [self.cond]},
                             outputs={"OutTrue": [pair[0]], "OutFalse": [pair[1]]}, attrs={"level": 0})
            self.input_table[id(x)] = pair
        t, f = self.input_table[id(x)]
        return t if self.status == IfElse.IN_IF_ELSE_TRUE_BLOCKS else f

    @contextlib.contextmanager
    def _branch(self, is_true):
        if self.status != IfElse.OUT_IF_ELSE_BLOCKS:
            raise ValueError("You cannot invoke IfElse.block() inside a block")
        cb = self.conditional_true_block if is_true else self.conditional_false_block
        self.status = IfElse.IN_IF_ELSE_TRUE_BLOCKS if is_true else IfElse.IN_IF_ELSE_FALSE_BLOCKS
        try:
            with cb.block():
                yield
                if not self.output_table[1 if is_true else 0]:
                    raise ValueError("Must set output inside block")
        finally:
            self.status = IfElse.OUT_IF_ELSE_BLOCKS

    def true_block(self):
        return self._branch(True)

    def false_block(self):
        return self._branch(False)

    def output(self, *outs):
        if self.status == self.OUT_IF_ELSE_BLOCKS:
            raise ValueError("output can only be invoked in the sub-block")
        table = self.output_table[1 if self.status == self.IN_IF_ELSE_TRUE_BLOCKS else 0]
        parent = self._parent_block()
        for each in outs:
            check_variable(each, "each output", "fluid.layers.IfElse.output")
            outside = parent.create_var(name=unique_name.generate_with_ignorable_key(
                "_".join([self.helper.name, "output"])), dtype=each.dtype, shape=each.shape)
            table.append(outside)
            assign(input=each, output=outside)

    def __call__(self):
        if self.status != self.OUT_IF_ELSE_BLOCKS:
            raise ValueError("IfElse::__call__ must be out of sub-block")
        false_len, true_len = map(len, self.output_table)
        if false_len == 0 and true_len == 0:
            raise ValueError("Must invoke true_block/false_block before __call__")
        if false_len != true_len and false_len != 0 and true_len != 0:
            raise ValueError("The output side must be same")
        if false_len == 0 or true_len == 0:
            return self.output_table[0 if false_len != 0 else 1]
        return [merge_lod_tensor(in_true=t, in_false=f, mask=self.cond, x=self.cond, level=0)
                for f, t in zip(*self.output_table)]
