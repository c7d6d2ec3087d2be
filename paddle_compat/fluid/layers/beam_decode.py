"""Beam search decoding layers (Paddle 1.8's beam_search, beam_search_decode) and the LoD editing layers
lod_reset / lod_append. Ops in paddle_compat/ops/defs/beam_search.py."""

from ...ir import Variable, convert_dtype, dtype_name
from .helpers import append_defined, check_variable

__all__ = ["beam_search", "beam_search_decode", "lod_reset", "lod_append"]


def _check_dtype(x, arg, layer, allowed):
    check_variable(x, arg, layer)
    if dtype_name(convert_dtype(x.dtype)) not in allowed:
        raise TypeError("%s: '%s' (%s) must be of dtype %s, got %s"
                        % (layer, arg, x.name, " or ".join(allowed), dtype_name(convert_dtype(x.dtype))))


def beam_search(pre_ids, pre_scores, ids, scores, beam_size, end_id, level=0, is_accumulated=True, name=None,
                return_parent_idx=False):
    """One step of beam search over 2-level LoD candidates: (selected_ids, selected_scores[, parent_idx])."""
    _check_dtype(pre_ids, "pre_ids", "beam_search", ("int64",))
    _check_dtype(pre_scores, "pre_scores", "beam_search", ("float32", "float64"))
    if ids is not None:
        check_variable(ids, "ids", "beam_search")
    _check_dtype(scores, "scores", "beam_search", ("float32", "float64"))
    outs = append_defined("beam_search", {"pre_ids": pre_ids, "pre_scores": pre_scores, "ids": ids,
                                          "scores": scores},
                          {"level": int(level), "beam_size": int(beam_size), "end_id": int(end_id),
                           "is_accumulated": bool(is_accumulated)}, name=name, stop_gradient=True)
    res = (outs["selected_ids"][0], outs["selected_scores"][0])
    return res + (outs["parent_idx"][0],) if return_parent_idx else res


def beam_search_decode(ids, scores, beam_size, end_id, name=None):
    """The sentences of a finished beam search, from the arrays of each step's selected ids and scores:
    (ids, scores), 2-level LoD (level 0: sentences per source, level 1: words per sentence)."""
    _check_dtype(ids, "ids", "beam_search_decode", ("int64",))
    _check_dtype(scores, "scores", "beam_search_decode", ("float32",))
    outs = append_defined("beam_search_decode", {"Ids": ids, "Scores": scores},
                          {"beam_size": int(beam_size), "end_id": int(end_id)}, name=name, stop_gradient=True)
    return outs["SentenceIds"][0], outs["SentenceScores"][0]


def _check_lod_x(x, layer):
    _check_dtype(x, "x", layer, ("float32", "float64", "int32", "int64"))


def lod_reset(x, y=None, target_lod=None):
    """x with a new LoD: y's LoD (or, when y has none, y's data as level-0 offsets), else target_lod."""
    _check_lod_x(x, "lod_reset")
    if y is not None:
        check_variable(y, "y", "lod_reset")
        return append_defined("lod_reset", {"X": x, "Y": y})["Out"][0]
    if target_lod is None:
        raise ValueError("lod_reset: y and target_lod should not be both none.")
    return append_defined("lod_reset", {"X": x}, {"target_lod": [int(v) for v in target_lod]})["Out"][0]


def lod_append(x, level):
    """x with one more LoD level below its own: `level` offsets (a list, or a Variable holding them)."""
    if x is None:
        raise ValueError("lod_append: Input(x) can't be None.")
    if not isinstance(level, (list, tuple, Variable)):
        raise ValueError("lod_append: Input(level) must be list, tuple or Variable.")
    _check_lod_x(x, "lod_append")
    if isinstance(level, Variable):
        return append_defined("lod_reset", {"X": x, "Y": level}, {"append": True})["Out"][0]
    return append_defined("lod_reset", {"X": x}, {"append": True, "target_lod": [int(v) for v in level]})["Out"][0]
