"""Paddle 1.8's decoding API built on While: Decoder, BasicDecoder with TrainingHelper /
GreedyEmbeddingHelper / SampleEmbeddingHelper, BeamSearchDecoder, and dynamic_decode.

dynamic_decode runs `decoder.step` in a `while` op until every sequence has finished (or max_step_num), with
Paddle's bookkeeping: per-step outputs in LoDTensorArrays stacked at the end, `finished` and the sequence
lengths carried across steps, and (is_test=False) the inputs and states of each step kept in arrays so that
gradient reaches every step. The beam search keeps Paddle's arithmetic (log-softmax scores masked to the end
token once a beam has finished, top-k over beam * vocab, gather_tree to read the paths back), so its ids and
scores are Paddle's.
"""

import collections

import numpy as np

from ...ir import VarType, convert_dtype, unique_name
from ..layer_helper import LayerHelper
from . import nn, ops, tensor
from .control_flow import While, array_read, array_write
from .math_more import reduce_all
from .random_misc import gather_tree, sampling_id
from .control_flow import tensor_array_to_tensor
from .shape_more import gather_nd

__all__ = ["Decoder", "BeamSearchDecoder", "dynamic_decode", "DecodeHelper", "TrainingHelper",
           "GreedyEmbeddingHelper", "SampleEmbeddingHelper", "BasicDecoder"]


# ---- nested structures (lists, tuples, namedtuples of Variables) ---------------------------------------

def _is_seq(x):
    return isinstance(x, (list, tuple))


def _flatten(s):
    return [v for item in s for v in _flatten(item)] if _is_seq(s) else [s]


def _pack_as(structure, flat):
    it = iter(flat)

    def pack(s):
        if not _is_seq(s):
            return next(it)
        items = [pack(x) for x in s]
        return type(s)(*items) if hasattr(s, "_fields") else type(s)(items)
    return pack(structure)


def _map(fn, *structs):
    flats = [_flatten(s) for s in structs]
    for f in flats[1:]:
        if len(f) != len(flats[0]):
            raise ValueError("dynamic_decode: structures differ (%d and %d values): %r and %r"
                             % (len(flats[0]), len(f), structs[0], structs[1]))
    return _pack_as(structs[0], [fn(*vals) for vals in zip(*flats)])


def _is_bool(v):
    return convert_dtype(v.dtype) == VarType.BOOL


# ---- Decoder ----------------------------------------------------------------------------------------

class Decoder:
    """initialize(inits) -> (inputs, states, finished); step(time, inputs, states) -> (outputs, next_states,
    next_inputs, finished); finalize(outputs, final_states, sequence_lengths) (optional)."""

    def initialize(self, inits):
        raise NotImplementedError

    def step(self, time, inputs, states, **kwargs):
        raise NotImplementedError

    def finalize(self, outputs, final_states, sequence_lengths):
        raise NotImplementedError


def _array_in_parent(dtype):
    """A LoDTensorArray created in the block enclosing the current one (outputs written inside a loop)."""
    prog = LayerHelper("array").main_program
    parent = prog.block(prog.current_block().parent_idx)
    return parent.create_var(name=unique_name.generate("array.out"), type=VarType.LOD_TENSOR_ARRAY, dtype=dtype)


def _keep_finished(state, new_state, finished):
    """new_state where not finished, state where finished (bool states through float)."""
    is_bool = _is_bool(state)
    if is_bool:
        state, new_state = tensor.cast(state, "float32"), tensor.cast(new_state, "float32")
    mask = tensor.cast(finished, state.dtype)
    mask.stop_gradient = True
    out = ops.elementwise_mul(state, mask, axis=0) - ops.elementwise_mul(new_state, (mask - 1), axis=0)
    return tensor.cast(out, "bool") if is_bool else out


def _batch_time(x):
    return nn.transpose(x, [1, 0] + list(range(2, len(x.shape))))


def dynamic_decode(decoder, inits=None, max_step_num=None, output_time_major=False, impute_finished=False,
                   is_test=False, return_length=False, **kwargs):
    """Repeats decoder.step until all sequences finish (or after max_step_num + 1 steps). Returns
    (final_outputs, final_states[, sequence_lengths]); outputs are batch-major unless output_time_major."""
    if not isinstance(decoder, Decoder):
        raise TypeError("dynamic_decode: decoder must be a Decoder, got %r" % (decoder,))
    init_inputs, init_states, init_finished = decoder.initialize(inits)
    global_inputs, global_states, global_finished = init_inputs, init_states, init_finished
    global_finished.stop_gradient = True
    step_idx = tensor.fill_constant(shape=[1], dtype="int64", value=0)
    cond = ops.logical_not(reduce_all(init_finished))
    if max_step_num is not None:
        max_step_num = tensor.fill_constant(shape=[1], dtype="int64", value=max_step_num)
    loop = While(cond, is_test=is_test)
    sequence_lengths = tensor.cast(tensor.zeros_like(init_finished), "int64")
    sequence_lengths.stop_gradient = True
    if is_test:
        inputs, states = _map(lambda x: x, init_inputs), _map(lambda x: x, init_states)
    else:
        inputs_arrays = _map(lambda x: array_write(x, step_idx), init_inputs)
        states_arrays = _map(lambda x: array_write(x, step_idx), init_states)
    with loop.block():
        if not is_test:
            inputs = _map(lambda a: array_read(a, step_idx), inputs_arrays)
            states = _map(lambda a: array_read(a, step_idx), states_arrays)
        outputs, next_states, next_inputs, next_finished = decoder.step(step_idx, inputs, states, **kwargs)
        next_finished = ops.logical_or(next_finished, global_finished)
        next_lengths = ops.elementwise_add(sequence_lengths,
                                           tensor.cast(ops.logical_not(global_finished), sequence_lengths.dtype))
        if impute_finished:
            next_states = _map(lambda s, n: _keep_finished(s, n, global_finished), states, next_states)
        outputs_arrays = _map(lambda x: _array_in_parent(x.dtype), outputs)
        _map(lambda x, a: array_write(x, i=step_idx, array=a), outputs, outputs_arrays)
        tensor.increment(x=step_idx, value=1.0, in_place=True)
        if is_test:
            _map(tensor.assign, next_inputs, global_inputs)
            _map(tensor.assign, next_states, global_states)
        else:
            _map(lambda x, a: array_write(x, i=step_idx, array=a), next_inputs, inputs_arrays)
            _map(lambda x, a: array_write(x, i=step_idx, array=a), next_states, states_arrays)
        tensor.assign(next_finished, global_finished)
        tensor.assign(next_lengths, sequence_lengths)
        if max_step_num is not None:
            ops.logical_and(ops.logical_not(reduce_all(global_finished)), ops.less_equal(step_idx, max_step_num),
                            out=cond)
        else:
            ops.logical_not(reduce_all(global_finished), out=cond)
    final_outputs = _map(lambda a: tensor_array_to_tensor(a, axis=0, use_stack=True)[0], outputs_arrays)
    final_states = global_states if is_test else _map(lambda a: array_read(a, step_idx), states_arrays)
    try:
        final_outputs, final_states = decoder.finalize(final_outputs, final_states, sequence_lengths)
    except NotImplementedError:
        pass
    if not output_time_major:
        final_outputs = _map(_batch_time, final_outputs)
    return (final_outputs, final_states, sequence_lengths) if return_length else (final_outputs, final_states)


# ---- helpers and BasicDecoder -------------------------------------------------------------------------

class DecodeHelper:
    """initialize() -> (inputs, finished); sample(time, outputs, states) -> ids;
    next_inputs(time, outputs, states, sample_ids) -> (finished, next_inputs, next_states)."""

    def initialize(self):
        pass

    def sample(self, time, outputs, states):
        pass

    def next_inputs(self, time, outputs, states, sample_ids):
        pass


class TrainingHelper(DecodeHelper):
    """Teacher forcing: step t reads inputs[:, t] (inputs[t] with time_major); a sequence finishes after its
    sequence_length steps."""

    def __init__(self, inputs, sequence_length, time_major=False):
        self.inputs = inputs
        self.sequence_length = sequence_length
        self.time_major = time_major
        # one padding step at the end, so that reading step t + 1 after the last step stays in range; kept
        # time-major for reading one step with gather
        self.inputs_tm = _map(lambda x: (lambda p: p if time_major else _batch_time(p))(
            tensor.pad(x, paddings=([0, 1] + [0, 0] * (len(x.shape) - 1)) if time_major
                   else ([0, 0, 0, 1] + [0, 0] * (len(x.shape) - 2)))), inputs)

    def initialize(self):
        init_finished = ops.equal(self.sequence_length,
                                  tensor.fill_constant(shape=[1], dtype=self.sequence_length.dtype, value=0))
        init_inputs = _map(lambda x: x[0] if self.time_major else x[:, 0], self.inputs)
        return init_inputs, init_finished

    def sample(self, time, outputs, states):
        return tensor.argmax(outputs, axis=-1)

    def next_inputs(self, time, outputs, states, sample_ids):
        time = tensor.cast(time, "int32") if convert_dtype(time.dtype) != VarType.INT32 else time
        if self.sequence_length.dtype != time.dtype:
            self.sequence_length = tensor.cast(self.sequence_length, time.dtype)
        next_time = time + 1
        finished = ops.less_equal(self.sequence_length, next_time)
        next_inputs = _map(lambda x: nn.squeeze(nn.gather(x, next_time), axes=[0]), self.inputs_tm)
        return finished, next_inputs, states


class GreedyEmbeddingHelper(DecodeHelper):
    """Feeds back embedding_fn(argmax(outputs)); a sequence finishes when it emits end_token."""

    def __init__(self, embedding_fn, start_tokens, end_token):
        self.embedding_fn = embedding_fn
        self.start_tokens = start_tokens
        self.end_token = tensor.fill_constant(shape=[1], dtype="int64", value=end_token)

    def initialize(self):
        init_finished = tensor.fill_constant_batch_size_like(input=self.start_tokens, shape=[-1], dtype="bool",
                                                             value=False)
        return self.embedding_fn(self.start_tokens), init_finished

    def sample(self, time, outputs, states):
        return tensor.argmax(outputs, axis=-1)

    def next_inputs(self, time, outputs, states, sample_ids):
        return ops.equal(sample_ids, self.end_token), self.embedding_fn(sample_ids), states


class SampleEmbeddingHelper(GreedyEmbeddingHelper):
    """As GreedyEmbeddingHelper, but the next id is drawn from softmax(outputs / softmax_temperature)."""

    def __init__(self, embedding_fn, start_tokens, end_token, softmax_temperature=None, seed=None):
        super().__init__(embedding_fn, start_tokens, end_token)
        self.softmax_temperature = tensor.fill_constant(shape=[1], dtype="float32", value=softmax_temperature) \
            if softmax_temperature is not None else None
        self.seed = seed

    def sample(self, time, outputs, states):
        logits = (outputs / self.softmax_temperature) if self.softmax_temperature is not None else outputs
        probs = nn.softmax(logits)
        probs.stop_gradient = True
        return sampling_id(probs, seed=self.seed or 0, dtype=self.start_tokens.dtype)


class BasicDecoder(Decoder):
    """cell + helper (+ output_fn on the cell outputs); outputs are (cell_outputs, sample_ids)."""

    OutputWrapper = collections.namedtuple("OutputWrapper", ("cell_outputs", "sample_ids"))

    def __init__(self, cell, helper, output_fn=None):
        self.cell, self.helper, self.output_fn = cell, helper, output_fn

    def initialize(self, initial_cell_states):
        init_inputs, init_finished = self.helper.initialize()
        return init_inputs, initial_cell_states, init_finished

    def step(self, time, inputs, states, **kwargs):
        cell_outputs, cell_states = self.cell(inputs, states, **kwargs)
        if self.output_fn is not None:
            cell_outputs = self.output_fn(cell_outputs)
        sample_ids = self.helper.sample(time=time, outputs=cell_outputs, states=cell_states)
        sample_ids.stop_gradient = True
        finished, next_inputs, next_states = self.helper.next_inputs(time=time, outputs=cell_outputs,
                                                                     states=cell_states, sample_ids=sample_ids)
        return self.OutputWrapper(cell_outputs, sample_ids), next_states, next_inputs, finished


# ---- beam search --------------------------------------------------------------------------------------

class BeamSearchDecoder(Decoder):
    """Beam search over `cell` (inputs and states [batch * beam, ...] inside the cell, [batch, beam, ...]
    outside). Outputs (scores, predicted_ids, parent_ids) per step; finalize reads the paths back with
    gather_tree, so dynamic_decode returns predicted ids [batch, time, beam] and the final beam states."""

    OutputWrapper = collections.namedtuple("OutputWrapper", ("scores", "predicted_ids", "parent_ids"))
    StateWrapper = collections.namedtuple("StateWrapper", ("cell_states", "log_probs", "finished", "lengths"))
    kinf = 1e9

    def __init__(self, cell, start_token, end_token, beam_size, embedding_fn=None, output_fn=None):
        self.cell, self.embedding_fn, self.output_fn = cell, embedding_fn, output_fn
        self.start_token, self.end_token, self.beam_size = start_token, end_token, beam_size

    @staticmethod
    def tile_beam_merge_with_batch(x, beam_size):
        """[batch, ...] -> [batch * beam_size, ...], each row repeated beam_size times in a row."""
        x = nn.expand(nn.unsqueeze(x, [1]), [1, beam_size] + [1] * (len(x.shape) - 1))
        return nn.reshape(x, shape=[-1] + list(x.shape[2:]))

    def _split_batch_beams(self, x):
        return nn.reshape(x, shape=[-1, self.beam_size] + list(x.shape[1:]))

    def _merge_batch_beams(self, x):
        return nn.reshape(x, shape=[-1] + list(x.shape[2:]))

    def _expand_to_beam_size(self, x):
        return nn.expand(nn.unsqueeze(x, [1]), [1, self.beam_size] + [1] * (len(x.shape) - 1))

    def _gather(self, x, indices, batch_size):
        """x[b, indices[b, k]] for every batch b and beam k."""
        batch_size = tensor.cast(batch_size, indices.dtype) if batch_size.dtype != indices.dtype else batch_size
        batch_size.stop_gradient = True
        batch_pos = nn.expand(nn.unsqueeze(tensor.range(0, batch_size, 1, dtype=indices.dtype), [1]),
                              [1, self.beam_size])
        coords = nn.stack([batch_pos, indices], axis=2)
        coords.stop_gradient = True
        return gather_nd(x, coords)

    def initialize(self, initial_cell_states):
        state = _flatten(initial_cell_states)[0]
        self.batch_size = tensor.shape(state)[0]
        self.end_token_tensor = tensor.fill_constant(shape=[1], dtype="int64", value=self.end_token)
        init_cell_states = _map(self._expand_to_beam_size, initial_cell_states)
        init_inputs = tensor.fill_constant_batch_size_like(input=state, shape=[-1, self.beam_size], dtype="int64",
                                                           value=self.start_token)
        # only beam 0 is live at first: the others start at -inf so that top-k picks distinct first words
        first = tensor.assign(np.array([[0.0] + [-self.kinf] * (self.beam_size - 1)], dtype="float32"))
        log_probs = ops.elementwise_add(
            tensor.fill_constant_batch_size_like(input=state, shape=[-1, self.beam_size], dtype="float32",
                                                 value=0.0), first)
        init_finished = tensor.fill_constant_batch_size_like(input=state, shape=[-1, self.beam_size], dtype="bool",
                                                             value=False)
        init_lengths = tensor.zeros_like(init_inputs)
        if self.embedding_fn:
            init_inputs = self.embedding_fn(init_inputs)
        return init_inputs, self.StateWrapper(init_cell_states, log_probs, init_finished, init_lengths), init_finished

    def _mask_probs(self, probs, finished):
        """A finished beam may only emit end_token, at no cost."""
        finished = tensor.cast(finished, dtype=probs.dtype)
        return ops.elementwise_mul(nn.expand(nn.unsqueeze(finished, [2]), [1, 1, self.vocab_size]),
                                   self.noend_mask_tensor, axis=-1) - \
            ops.elementwise_mul(probs, (finished - 1), axis=0)

    def _beam_search_step(self, time, logits, next_cell_states, beam_state):
        self.vocab_size = logits.shape[-1]
        vocab = tensor.fill_constant(shape=[1], dtype="int64", value=self.vocab_size)
        noend = [-self.kinf] * self.vocab_size
        noend[self.end_token] = 0
        self.noend_mask_tensor = tensor.assign(np.array(noend, "float32"))
        step_log_probs = self._mask_probs(ops.log(nn.softmax(logits)), beam_state.finished)
        log_probs = ops.elementwise_add(x=step_log_probs, y=beam_state.log_probs, axis=0)
        scores = nn.reshape(log_probs, [-1, self.beam_size * self.vocab_size])
        topk_scores, topk_indices = nn.topk(input=scores, k=self.beam_size)
        beam_indices = ops.elementwise_floordiv(topk_indices, vocab)
        token_indices = ops.elementwise_mod(topk_indices, vocab)
        next_log_probs = self._gather(scores, topk_indices, self.batch_size)
        next_cell_states = _map(lambda x: self._gather(x, beam_indices, self.batch_size), next_cell_states)
        next_finished = self._gather(beam_state.finished, beam_indices, self.batch_size)
        next_lengths = self._gather(beam_state.lengths, beam_indices, self.batch_size)
        next_lengths = next_lengths + tensor.cast(ops.logical_not(next_finished), beam_state.lengths.dtype)
        next_finished = ops.logical_or(next_finished, ops.equal(token_indices, self.end_token_tensor))
        return (self.OutputWrapper(topk_scores, token_indices, beam_indices),
                self.StateWrapper(next_cell_states, next_log_probs, next_finished, next_lengths))

    def step(self, time, inputs, states, **kwargs):
        inputs = _map(self._merge_batch_beams, inputs)
        cell_states = _map(self._merge_batch_beams, states.cell_states)
        cell_outputs, next_cell_states = self.cell(inputs, cell_states, **kwargs)
        cell_outputs = _map(self._split_batch_beams, cell_outputs)
        next_cell_states = _map(self._split_batch_beams, next_cell_states)
        if self.output_fn is not None:
            cell_outputs = self.output_fn(cell_outputs)
        out, state = self._beam_search_step(time=time, logits=cell_outputs, next_cell_states=next_cell_states,
                                            beam_state=states)
        sample_ids = out.predicted_ids
        sample_ids.stop_gradient = True
        next_inputs = self.embedding_fn(sample_ids) if self.embedding_fn else sample_ids
        return out, state, next_inputs, state.finished

    def finalize(self, outputs, final_states, sequence_lengths):
        return gather_tree(outputs.predicted_ids, outputs.parent_ids), final_states
