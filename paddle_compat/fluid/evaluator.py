"""fluid.evaluator (deprecated in Paddle 1.8 in favour of fluid.metrics): evaluators that keep persistable
counters inside the main program. ChunkEvaluator sums chunk_eval's counts, EditDistance the edit distances,
sequence counts and wrong sequences; `reset(exe)` zeroes the counters (run it before the first batch: the
counters have no initializer, as in Paddle), `eval(exe)` turns them into the pass's metrics."""

import warnings

import numpy as np

from . import layers
from ..ir import Program, Variable, program_guard, unique_name
from .layer_helper import LayerHelper

__all__ = ["ChunkEvaluator", "EditDistance", "DetectionMAP"]


def _copy_into(block, var):
    """The same persistable variable declared in another program's block (so that program reads the scope's)."""
    return block.create_var(name=var.name, shape=var.shape, dtype=var.dtype, type=var.type,
                            lod_level=var.lod_level, persistable=True)


class Evaluator(object):
    """Base: `states` are the persistable counters reset() zeroes, `metrics` the per-batch results."""

    def __init__(self, name, **kwargs):
        warnings.warn("%s is deprecated; use fluid.metrics.%s" % (type(self).__name__, type(self).__name__),
                      Warning)
        self.states = []
        self.metrics = []
        self.helper = LayerHelper(name, **kwargs)
        if self.helper.main_program.current_block().idx != 0:
            raise ValueError("%s: evaluators can only be built in the root block" % type(self).__name__)

    def reset(self, executor, reset_program=None):
        reset_program = reset_program or Program()
        with program_guard(main_program=reset_program):
            for var in self.states:
                if not isinstance(var, Variable):
                    raise TypeError("%s: state %r is not a Variable" % (type(self).__name__, var))
                v = _copy_into(reset_program.current_block(), var)
                layers.fill_constant(shape=v.shape, value=0.0, dtype=v.dtype, out=v)
        executor.run(reset_program)

    def eval(self, executor, eval_program=None):
        raise NotImplementedError()

    def _create_state(self, suffix, dtype, shape):
        state = self.helper.create_variable(name="_".join([unique_name.generate(self.helper.name), suffix]),
                                            persistable=True, dtype=dtype, shape=shape)
        self.states.append(state)
        return state


class ChunkEvaluator(Evaluator):
    """Accumulates chunk_eval's inferred, labelled and correct chunk counts; metrics: precision, recall, F1 of
    the batch; eval(): those of everything since reset()."""

    def __init__(self, input, label, chunk_scheme, num_chunk_types, excluded_chunk_types=None):
        super(ChunkEvaluator, self).__init__("chunk_eval")
        self.num_infer_chunks = self._create_state("num_infer_chunks", "int64", [1])
        self.num_label_chunks = self._create_state("num_label_chunks", "int64", [1])
        self.num_correct_chunks = self._create_state("num_correct_chunks", "int64", [1])
        res = layers.chunk_eval(input=input, label=label, chunk_scheme=chunk_scheme,
                                num_chunk_types=num_chunk_types, excluded_chunk_types=excluded_chunk_types)
        for state, batch in zip(self.states, res[3:]):
            layers.sums(input=[state, batch], out=state)
        self.metrics.extend(res[:3])

    def eval(self, executor, eval_program=None):
        eval_program = eval_program or Program()
        block = eval_program.current_block()
        infer, label, correct = (int(np.array(v).ravel()[0]) for v in executor.run(
            eval_program, fetch_list=[_copy_into(block, s) for s in self.states]))
        precision = float(correct) / infer if infer else 0.0
        recall = float(correct) / label if label else 0.0
        f1 = 2 * precision * recall / (precision + recall) if correct else 0.0
        return tuple(np.array([v], dtype="float32") for v in (precision, recall, f1))


class EditDistance(Evaluator):
    """Accumulates the edit distances, the sequence count and the sequences with a non-zero distance; metrics:
    the batch's total distance and wrong-sequence count; eval(): (average distance, instance error rate)."""

    def __init__(self, input, label, ignored_tokens=None, **kwargs):
        super(EditDistance, self).__init__("edit_distance", **kwargs)
        self.total_distance = self._create_state("total_distance", "float32", [1])
        self.seq_num = self._create_state("seq_num", "int64", [1])
        self.instance_error = self._create_state("instance_error", "int64", [1])
        distances, seq_num = layers.edit_distance(input=input, label=label, ignored_tokens=ignored_tokens)
        zero = layers.fill_constant(shape=[1], value=0.0, dtype="float32")
        right = layers.reduce_sum(layers.cast(x=layers.equal(distances, zero), dtype="int64"))
        wrong = layers.elementwise_sub(x=seq_num, y=right)
        total = layers.reduce_sum(distances)
        for state, batch in ((self.total_distance, total), (self.seq_num, seq_num), (self.instance_error, wrong)):
            layers.sums(input=[state, batch], out=state)
        self.metrics.extend([total, wrong])

    def eval(self, executor, eval_program=None):
        eval_program = eval_program or Program()
        block = eval_program.current_block()
        with program_guard(main_program=eval_program):
            total = _copy_into(block, self.total_distance)
            seqs = layers.cast(x=_copy_into(block, self.seq_num), dtype="float32")
            wrong = layers.cast(x=_copy_into(block, self.instance_error), dtype="float32")
            avg = layers.elementwise_div(x=total, y=seqs)
            err = layers.elementwise_div(x=wrong, y=seqs)
            res = executor.run(eval_program, fetch_list=[avg, err])
        return np.array(res[0]), np.array(res[1])


class DetectionMAP(Evaluator):
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("fluid.evaluator.DetectionMAP (deprecated in Paddle 1.8) is not offered: use "
                                  "fluid.metrics.DetectionMAP")
