"""cudnn_lstm (fluid.layers.lstm): a multi-layer, optionally bidirectional LSTM over a padded time-major
input [T, N, I], with the flat weight W in cuDNN's canonical layout, as Paddle 1.8 hands W to cuDNN:
first the matrices of every pseudo-layer (layer 0 forward, layer 0 backward, layer 1 forward, ...), each
four input matrices [H, I_l] then four recurrent ones [H, H] in gate order i, f, c, o; then the biases of
every pseudo-layer in the same order (four input biases then four recurrent biases, both added). Paddle
1.8.5 runs this op only on GPU; here torch's LSTM runs it anywhere (its gate order i, f, g, o is cuDNN's)."""

from ...ir.lazy import torch
from ..registry import OutMeta, attr, defop
from ..shapes import first


def split_flat_weight(w, input_size, hidden, layers, bidirec):
    """The flat W -> torch's per-layer list [w_ih, w_hh, b_ih, b_hh] * (layers * directions)."""
    dirs = 2 if bidirec else 1
    mats, off = [], 0
    for layer in range(layers):
        in_l = input_size if layer == 0 else hidden * dirs
        for _ in range(dirs):
            w_ih = w[off:off + 4 * hidden * in_l].reshape(4 * hidden, in_l)
            off += 4 * hidden * in_l
            w_hh = w[off:off + 4 * hidden * hidden].reshape(4 * hidden, hidden)
            off += 4 * hidden * hidden
            mats.append((w_ih, w_hh))
    params = []
    for w_ih, w_hh in mats:
        b_ih = w[off:off + 4 * hidden]
        b_hh = w[off + 4 * hidden:off + 8 * hidden]
        off += 8 * hidden
        params += [w_ih, w_hh, b_ih, b_hh]
    return params, off


def _shape(ins, attrs):
    x = first(ins, "Input")
    h = attrs.get("hidden_size")
    dirs = 2 if attrs.get("is_bidirec") else 1
    n = attrs.get("num_layers", 1) * dirs
    return {"Out": OutMeta(tuple(x.shape[:-1]) + (h * dirs,), x.dtype),
            "last_h": OutMeta((n, x.shape[1], h), x.dtype), "last_c": OutMeta((n, x.shape[1], h), x.dtype)}


# Cache (cuDNN's dropout state, a RAW variable Paddle's layer records) is not read: nothing initialises it.
@defop("cudnn_lstm", inputs=("Input", "InitH", "InitC", "W"), outputs=("Out", "last_h", "last_c"),
       infer_shape=_shape)
def cudnn_lstm(op, ctx):
    hidden, layers = attr(op, "hidden_size"), attr(op, "num_layers", 1)
    bidirec, is_test = attr(op, "is_bidirec", False), attr(op, "is_test", False)
    dropout = float(attr(op, "dropout_prob", 0.0))
    dirs = 2 if bidirec else 1

    def k(x, h0, c0, w):
        if x.dim() != 3:
            raise ValueError("lstm: Input=%s must be [seq_len, batch, input_size], got %s"
                             % (op.input("Input")[0], list(x.shape)))
        params, used = split_flat_weight(w.reshape(-1), x.shape[2], hidden, layers, bidirec)
        if used != w.numel():
            raise ValueError("lstm: W=%s has %d values; input_size %d, hidden_size %d, num_layers %d, is_bidirec "
                             "%s need %d" % (op.input("W")[0], w.numel(), x.shape[2], hidden, layers, bidirec, used))
        want = (layers * dirs, x.shape[1], hidden)
        for name, v in (("InitH", h0), ("InitC", c0)):
            if tuple(v.shape) != want:
                raise ValueError("lstm: %s=%s is %s, need %s" % (name, op.input(name)[0], list(v.shape), list(want)))
        # train=True whenever not is_test: cuDNN refuses a backward through an LSTM run in eval mode (the
        # dropout of 0 draws nothing either way)
        out, h, c = torch.lstm(x, (h0, c0), params, True, layers, dropout, not is_test, bidirec, False)
        return out, h, c

    return k
