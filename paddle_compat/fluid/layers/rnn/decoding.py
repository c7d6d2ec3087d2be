"""Decoding: Decoder, BeamSearchDecoder, dynamic_decode and its helpers, beam_search and beam_search_decode (Paddle's
fluid.layers.rnn)."""

import collections

import numpy as np

from ....ir import VarType, convert_dtype, unique_name
from ...layer_helper import LayerHelper
from ..control_flow.compare import equal, increment, less_equal
from ..control_flow.flow import While, array_read, array_write
from ..nn.activation import log
from ..nn.common import expand, gather, reshape, softmax, squeeze, stack, topk, transpose, unsqueeze
from ..nn.math import (elementwise_add, elementwise_floordiv, elementwise_mod, elementwise_mul, logical_and,
                       logical_not, logical_or, reduce_all)
from ..nn.random import sampling_id
from ..nn.sequence import gather_tree
from ..nn.shape_ops import gather_nd, pad, shape
from ..tensor import (argmax, assign, cast, fill_constant, fill_constant_batch_size_like, range as range_,
                      tensor_array_to_tensor, zeros_like)
from ..utils import check_dtype, append_defined, check_variable

__all__ = ["beam_search", "beam_search_decode", "Decoder", "dynamic_decode", "DecodeHelper", "TrainingHelper",
           "GreedyEmbeddingHelper", "SampleEmbeddingHelper", "BasicDecoder", "BeamSearchDecoder"]


def beam_search(pre_ids, pre_scores, ids, scores, beam_size, end_id, level=0, is_accumulated=True, name=None,
                return_parent_idx=False):
    """One step of beam search over 2-level LoD candidates: (selected_ids, selected_scores[, parent_idx])."""
    check_dtype(pre_ids, "pre_ids", "beam_search", ("int64",))
    check_dtype(pre_scores, "pre_scores", "beam_search", ("float32", "float64"))
    if ids is not None:
        check_variable(ids, "ids", "beam_search")
    check_dtype(scores, "scores", "beam_search", ("float32", "float64"))
    outs = append_defined("beam_search", {"pre_ids": pre_ids, "pre_scores": pre_scores, "ids": ids,
                                          "scores": scores},
                          {"level": int(level), "beam_size": int(beam_size), "end_id": int(end_id),
                           "is_accumulated": bool(is_accumulated)}, name=name, stop_gradient=True)
    res = (outs["selected_ids"][0], outs["selected_scores"][0])
    return res + (outs["parent_idx"][0],) if return_parent_idx else res


def beam_search_decode(ids, scores, beam_size, end_id, name=None):
    """The sentences of a finished beam search, from the arrays of each step's selected ids and scores:
    (ids, scores), 2-level LoD (level 0: sentences per source, level 1: words per sentence)."""
    check_dtype(ids, "ids", "beam_search_decode", ("int64",))
    check_dtype(scores, "scores", "beam_search_decode", ("float32",))
    outs = append_defined("beam_search_decode", {"Ids": ids, "Scores": scores},
                          {"beam_size": int(beam_size), "end_id": int(end_id)}, name=name, stop_gradient=True)
    return outs["SentenceIds"][0], outs["SentenceScores"][0]


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
        state, new_state = cast(state, "float32"), cast(new_state, "float32")
    mask = cast(finished, state.dtype)
    mask.stop_gradient = True
    out = elementwise_mul(state, mask, axis=0) - elementwise_mul(new_state, (mask - 1), axis=0)
    return cast(out, "bool") if is_bool else out


def _batch_time(x):
    return transpose(x, [1, 0] + list(range(2, len(x.shape))))


def dynamic_decode(decoder, inits=None, max_step_num=None, output_time_major=False, impute_finished=False,
                   is_test=False, return_length=False, **kwargs):
    """Repeats decoder.step until all sequences finish (or after max_step_num + 1 steps). Returns
    (final_outputs, final_states[, sequence_lengths]); outputs are batch-major unless output_time_major."""
    if not isinstance(decoder, Decoder):
        raise TypeError("dynamic_decode: decoder must be a Decoder, got %r" % (decoder,))
    init_inputs, init_states, init_finished = decoder.initialize(inits)
    global_inputs, global_states, global_finished = init_inputs, init_states, init_finished
    global_finished.stop_gradient = True
    step_idx = fill_constant(shape=[1], dtype="int64", value=0)
    cond = logical_not(reduce_all(init_finished))
    if max_step_num is not None:
        max_step_num = fill_constant(shape=[1], dtype="int64", value=max_step_num)
    loop = While(cond, is_test=is_test)
    sequence_lengths = cast(zeros_like(init_finished), "int64")
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
        next_finished = logical_or(next_finished, global_finished)
        next_lengths = elementwise_add(sequence_lengths,
                                           cast(logical_not(global_finished), sequence_lengths.dtype))
        if impute_finished:
            next_states = _map(lambda s, n: _keep_finished(s, n, global_finished), states, next_states)
        outputs_arrays = _map(lambda x: _array_in_parent(x.dtype), outputs)
        _map(lambda x, a: array_write(x, i=step_idx, array=a), outputs, outputs_arrays)
        increment(x=step_idx, value=1.0, in_place=True)
        if is_test:
            _map(assign, next_inputs, global_inputs)
            _map(assign, next_states, global_states)
        else:
            _map(lambda x, a: array_write(x, i=step_idx, array=a), next_inputs, inputs_arrays)
            _map(lambda x, a: array_write(x, i=step_idx, array=a), next_states, states_arrays)
        assign(next_finished, global_finished)
        assign(next_lengths, sequence_lengths)
        if max_step_num is not None:
            logical_and(logical_not(reduce_all(global_finished)), less_equal(step_idx, max_step_num),
                            out=cond)
        else:
            logical_not(reduce_all(global_finished), out=cond)
    final_outputs = _map(lambda a: tensor_array_to_tensor(a, axis=0, use_stack=True)[0], outputs_arrays)
    final_states = global_states if is_test else _map(lambda a: array_read(a, step_idx), states_arrays)
    try:
        final_outputs, final_states = decoder.finalize(final_outputs, final_states, sequence_lengths)
    except NotImplementedError:
        pass
    if not output_time_major:
        final_outputs = _map(_batch_time, final_outputs)
    return (final_outputs, final_states, sequence_lengths) if return_length else (final_outputs, final_states)


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
            pad(x, paddings=([0, 1] + [0, 0] * (len(x.shape) - 1)) if time_major
                   else ([0, 0, 0, 1] + [0, 0] * (len(x.shape) - 2)))), inputs)

    def initialize(self):
        init_finished = equal(self.sequence_length,
                                  fill_constant(shape=[1], dtype=self.sequence_length.dtype, value=0))
        init_inputs = _map(lambda x: x[0] if self.time_major else x[:, 0], self.inputs)
        return init_inputs, init_finished

    def sample(self, time, outputs, states):
        return argmax(outputs, axis=-1)

    def next_inputs(self, time, outputs, states, sample_ids):
        time = cast(time, "int32") if convert_dtype(time.dtype) != VarType.INT32 else time
        if self.sequence_length.dtype != time.dtype:
            self.sequence_length = cast(self.sequence_length, time.dtype)
        next_time = time + 1
        finished = less_equal(self.sequence_length, next_time)
        next_inputs = _map(lambda x: squeeze(gather(x, next_time), axes=[0]), self.inputs_tm)
        return finished, next_inputs, states


class GreedyEmbeddingHelper(DecodeHelper):
    """Feeds back embedding_fn(argmax(outputs)); a sequence finishes when it emits end_token."""

    def __init__(self, embedding_fn, start_tokens, end_token):
        self.embedding_fn = embedding_fn
        self.start_tokens = start_tokens
        self.end_token = fill_constant(shape=[1], dtype="int64", value=end_token)

    def initialize(self):
        init_finished = fill_constant_batch_size_like(input=self.start_tokens, shape=[-1], dtype="bool",
                                                             value=False)
        return self.embedding_fn(self.start_tokens), init_finished

    def sample(self, time, outputs, states):
        return argmax(outputs, axis=-1)

    def next_inputs(self, time, outputs, states, sample_ids):
        return equal(sample_ids, self.end_token), self.embedding_fn(sample_ids), states


class SampleEmbeddingHelper(GreedyEmbeddingHelper):
    """As GreedyEmbeddingHelper, but the next id is drawn from softmax(outputs / softmax_temperature)."""

    def __init__(self, embedding_fn, start_tokens, end_token, softmax_temperature=None, seed=None):
        super().__init__(embedding_fn, start_tokens, end_token)
        self.softmax_temperature = fill_constant(shape=[1], dtype="float32", value=softmax_temperature) \
            if softmax_temperature is not None else None
        self.seed = seed

    def sample(self, time, outputs, states):
        logits = (outputs / self.softmax_temperature) if self.softmax_temperature is not None else outputs
        probs = softmax(logits)
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
        """[batch, ...] -> [batch * beam_size, ...], each row repeated beam_size times in a row. As Paddle,
        batch and beam are moved last and merged there (reshape copies the other dims with 0), so inner
        dims unknown when the program is built (-1, e.g. a time axis) are fine."""
        x = expand(unsqueeze(x, [1]), [1, beam_size] + [1] * (len(x.shape) - 1))
        rank = len(x.shape)
        x = transpose(x, list(range(2, rank)) + [0, 1])           # [..., batch, beam]
        x = reshape(x, shape=[0] * (rank - 2) + [-1])              # [..., batch * beam]
        return transpose(x, [rank - 2] + list(range(rank - 2)))   # [batch * beam, ...]

    def _split_batch_beams(self, x):
        return reshape(x, shape=[-1, self.beam_size] + list(x.shape[1:]))

    def _merge_batch_beams(self, x):
        return reshape(x, shape=[-1] + list(x.shape[2:]))

    def _expand_to_beam_size(self, x):
        return expand(unsqueeze(x, [1]), [1, self.beam_size] + [1] * (len(x.shape) - 1))

    def _gather(self, x, indices, batch_size):
        """x[b, indices[b, k]] for every batch b and beam k."""
        batch_size = cast(batch_size, indices.dtype) if batch_size.dtype != indices.dtype else batch_size
        batch_size.stop_gradient = True
        batch_pos = expand(unsqueeze(range_(0, batch_size, 1, dtype=indices.dtype), [1]),
                              [1, self.beam_size])
        coords = stack([batch_pos, indices], axis=2)
        coords.stop_gradient = True
        return gather_nd(x, coords)

    def initialize(self, initial_cell_states):
        state = _flatten(initial_cell_states)[0]
        self.batch_size = shape(state)[0]
        self.end_token_tensor = fill_constant(shape=[1], dtype="int64", value=self.end_token)
        init_cell_states = _map(self._expand_to_beam_size, initial_cell_states)
        init_inputs = fill_constant_batch_size_like(input=state, shape=[-1, self.beam_size], dtype="int64",
                                                           value=self.start_token)
        # only beam 0 is live at first: the others start at -inf so that top-k picks distinct first words
        first = assign(np.array([[0.0] + [-self.kinf] * (self.beam_size - 1)], dtype="float32"))
        log_probs = elementwise_add(
            fill_constant_batch_size_like(input=state, shape=[-1, self.beam_size], dtype="float32",
                                                 value=0.0), first)
        init_finished = fill_constant_batch_size_like(input=state, shape=[-1, self.beam_size], dtype="bool",
                                                             value=False)
        init_lengths = zeros_like(init_inputs)
        if self.embedding_fn:
            init_inputs = self.embedding_fn(init_inputs)
        return init_inputs, self.StateWrapper(init_cell_states, log_probs, init_finished, init_lengths), init_finished

    def _mask_probs(self, probs, finished):
        """A finished beam may only emit end_token, at no cost."""
        finished = cast(finished, dtype=probs.dtype)
        return elementwise_mul(expand(unsqueeze(finished, [2]), [1, 1, self.vocab_size]),
                                   self.noend_mask_tensor, axis=-1) - \
            elementwise_mul(probs, (finished - 1), axis=0)

    def _beam_search_step(self, time, logits, next_cell_states, beam_state):
        self.vocab_size = logits.shape[-1]
        vocab = fill_constant(shape=[1], dtype="int64", value=self.vocab_size)
        noend = [-self.kinf] * self.vocab_size
        noend[self.end_token] = 0
        self.noend_mask_tensor = assign(np.array(noend, "float32"))
        step_log_probs = self._mask_probs(log(softmax(logits)), beam_state.finished)
        log_probs = elementwise_add(x=step_log_probs, y=beam_state.log_probs, axis=0)
        scores = reshape(log_probs, [-1, self.beam_size * self.vocab_size])
        topk_scores, topk_indices = topk(input=scores, k=self.beam_size)
        beam_indices = elementwise_floordiv(topk_indices, vocab)
        token_indices = elementwise_mod(topk_indices, vocab)
        next_log_probs = self._gather(scores, topk_indices, self.batch_size)
        next_cell_states = _map(lambda x: self._gather(x, beam_indices, self.batch_size), next_cell_states)
        next_finished = self._gather(beam_state.finished, beam_indices, self.batch_size)
        next_lengths = self._gather(beam_state.lengths, beam_indices, self.batch_size)
        next_lengths = next_lengths + cast(logical_not(next_finished), beam_state.lengths.dtype)
        next_finished = logical_or(next_finished, equal(token_indices, self.end_token_tensor))
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
