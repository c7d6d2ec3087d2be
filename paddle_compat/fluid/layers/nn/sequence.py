"""Sequence labelling and LoD layers of Paddle's fluid.layers.nn: CRF, chunk evaluation, CTC decoding, row_conv,
im2sequence, lod_reset, position encoding, gather_tree."""

from ....ir import Variable
from ...layer_helper import LayerHelper
from ..utils import append_defined, check_dtype, check_variable, single
from .common import squeeze, topk

__all__ = ["lod_reset", "lod_append", "linear_chain_crf", "crf_decoding", "chunk_eval", "ctc_greedy_decoder",
           "add_position_encoding", "gather_tree", "row_conv", "im2sequence"]


def _check_lod_x(x, layer):
    check_dtype(x, "x", layer, ("float32", "float64", "int32", "int64"))


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


def _check_input(layer, input, length):
    """LoD sequences [T, D], or padded [N, L, D] with length. (A LoD-less input without length builds, as in
    Paddle; running it fails, naming the variable.)"""
    check_variable(input, "input", layer)
    if length is not None:
        check_variable(length, "length", layer)
        if len(input.shape) != 3:
            raise ValueError("%s: with length, 'input' (%s) must be padded [N, L, D], got %s"
                             % (layer, input.name, list(input.shape)))


def linear_chain_crf(input, label, param_attr=None, length=None):
    """Negative log-likelihood [N, 1] of each sequence's labels (LoD input, or padded [N, L, D] with length [N]);
    creates Transition [D + 2, D]."""
    _check_input("linear_chain_crf", input, length)
    check_variable(label, "label", "linear_chain_crf")
    helper = LayerHelper("linear_chain_crf", param_attr=param_attr)
    size = input.shape[-1]
    transition = helper.create_parameter(attr=helper.param_attr, shape=[size + 2, size], dtype=input.dtype)
    outs = append_defined("linear_chain_crf", {"Emission": input, "Transition": transition, "Label": label,
                                               "Length": length}, helper=helper)
    return outs["LogLikelihood"][0]


def crf_decoding(input, param_attr, label=None, length=None):
    """Viterbi path [T, 1] (int64; [N, L] for padded input with length, 0 past each length) under the
    Transition parameter named by param_attr; with label, 1 where the path agrees with it and 0 elsewhere."""
    _check_input("crf_decoding", input, length)
    helper = LayerHelper("crf_decoding", param_attr=param_attr)
    name = getattr(param_attr, "name", None)
    if name is None:
        raise ValueError("crf_decoding: param_attr must name the Transition parameter of linear_chain_crf "
                         "(fluid.ParamAttr(name=...))")
    transition = helper.get_parameter(name)
    return append_defined("crf_decoding", {"Emission": input, "Transition": transition, "Label": label,
                                           "Length": length}, helper=helper, stop_gradient=True)["ViterbiPath"][0]


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


def ctc_greedy_decoder(input, blank, input_length=None, padding_value=0, name=None):
    """Best path decoding: the top class per step, repeats merged, blanks dropped. LoD input gives a LoD
    [Lp, 1] int64 result; padded input [N, T, C] with input_length gives (output [N, T], output_length)."""
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


def add_position_encoding(input, alpha, beta, name=None):
    return single(append_defined("add_position_encoding", {"X": input}, {"alpha": alpha, "beta": beta},
                                 name=name))


def gather_tree(ids, parents):
    return single(append_defined("gather_tree", {"Ids": ids, "Parents": parents}))


def row_conv(input, future_context_size, param_attr=None, act=None):
    """Lookahead convolution over each sequence with a [future_context_size + 1, width] filter."""
    check_dtype(input, "input", "row_conv", ("float32",))
    helper = LayerHelper("row_conv", param_attr=param_attr, act=act)
    w = helper.create_parameter(attr=helper.param_attr, shape=[future_context_size + 1, input.shape[-1]],
                                dtype=input.dtype)
    out = append_defined("row_conv", {"X": input, "Filter": w}, helper=helper)["Out"][0]
    return helper.append_activation(out)


def im2sequence(input, filter_size=1, stride=1, padding=0, input_image_size=None, out_stride=1, name=None):
    """[N, C, H, W] -> one sequence per image of its filter_size patches, [N * oh * ow, C * kh * kw]."""
    check_dtype(input, "input", "im2sequence", ("float32",))
    filter_size = [filter_size] * 2 if isinstance(filter_size, int) else list(filter_size)
    stride = [stride] * 2 if isinstance(stride, int) else list(stride)
    padding = [padding] * 2 if isinstance(padding, int) else list(padding)
    if len(padding) == 2:
        padding = padding + padding
    inputs, attrs = {"X": input}, {"kernels": filter_size, "strides": stride, "paddings": padding}
    if input_image_size is not None:
        check_variable(input_image_size, "input_image_size", "im2sequence")
        inputs["Y"] = input_image_size
        attrs["out_stride"] = [out_stride] * 2 if isinstance(out_stride, int) else list(out_stride)
    return append_defined("im2sequence", inputs, attrs, name=name)["Out"][0]
