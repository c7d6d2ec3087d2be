"""Sequence labelling layers (ops in paddle_compat/ops/defs/ctc_chunk_ops.py): chunk_eval, warpctc,
ctc_greedy_decoder. Paddle 1.8's signatures and op types."""

from ..layer_helper import LayerHelper
from .helpers import append_defined, check_variable

__all__ = ["chunk_eval", "warpctc", "ctc_greedy_decoder"]


def chunk_eval(input, label, chunk_scheme, num_chunk_types, excluded_chunk_types=None, seq_length=None):
    """(precision, recall, f1_score, num_infer_chunks, num_label_chunks, num_correct_chunks) of the chunks
    tagged in input against those in label (int64 tag ids; LoD, or padded with seq_length)."""
    check_variable(input, "input", "chunk_eval")
    check_variable(label, "label", "chunk_eval")
    if chunk_scheme not in ("IOB", "IOE", "IOBES", "plain"):
        raise ValueError("chunk_eval: chunk_scheme must be 'IOB', 'IOE', 'IOBES' or 'plain', got %r" % chunk_scheme)
    outs = append_defined("chunk_eval", {"Inference": input, "Label": label, "SeqLength": seq_length},
                          attrs={"num_chunk_types": int(num_chunk_types), "chunk_scheme": chunk_scheme,
                                 "excluded_chunk_types": list(excluded_chunk_types or [])},
                          helper=LayerHelper("chunk_eval"), stop_gradient=True)
    return tuple(outs[s][0] for s in ("Precision", "Recall", "F1-Score", "NumInferChunks", "NumLabelChunks",
                                      "NumCorrectChunks"))


def warpctc(input, label, blank=0, norm_by_times=False, input_length=None, label_length=None):
    """CTC loss [N, 1] of each label sequence given unnormalised logits (LoD [T, C + 1], or padded
    [T_max, N, C + 1] with input_length/label_length)."""
    check_variable(input, "input", "warpctc")
    check_variable(label, "label", "warpctc")
    if (input_length is None) != (label_length is None):
        raise ValueError("warpctc: give both input_length and label_length, or neither")
    outs = append_defined("warpctc", {"Logits": input, "Label": label, "LogitsLength": input_length,
                                      "LabelLength": label_length},
                          attrs={"blank": int(blank), "norm_by_times": bool(norm_by_times)},
                          helper=LayerHelper("warpctc"))
    return outs["Loss"][0]


def ctc_greedy_decoder(input, blank, input_length=None, padding_value=0, name=None):
    """Best path decoding: the top class per step, repeats merged, blanks dropped. LoD input gives a LoD
    [Lp, 1] int64 result; padded input [N, T, C] with input_length gives (output [N, T], output_length)."""
    from .nn import topk
    from .nn import squeeze
    check_variable(input, "input", "ctc_greedy_decoder")
    helper = LayerHelper("ctc_greedy_decoder", name=name)
    _, top = topk(input, k=1)
    if input_length is None:
        return append_defined("ctc_align", {"Input": top}, attrs={"merge_repeated": True, "blank": int(blank)},
                              helper=helper, stop_gradient=True)["Output"][0]
    outs = append_defined("ctc_align", {"Input": squeeze(top, [2]), "InputLength": input_length},
                          attrs={"merge_repeated": True, "blank": int(blank), "padding_value": int(padding_value)},
                          helper=helper, stop_gradient=True)
    return outs["Output"][0], outs["OutputLength"][0]
