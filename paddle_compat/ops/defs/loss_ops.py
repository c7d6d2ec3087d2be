"""Loss ops: cross_entropy, softmax_with_cross_entropy, sigmoid_cross_entropy_with_logits, log_loss, huber."""

from ...ir.lazy import F, torch
from ..registry import OutMeta, attr, defop
from ..shapes import first, same_as
from .activation_ops import softmax_shift

# Paddle's TolerableValue: -log(0) becomes this instead of inf.
_KMAX = 1e20


def _loss_shape(x):
    """One loss per row: the last dim becomes 1."""
    return tuple(x.shape[:-1]) + (1,)


@defop("cross_entropy", inputs=("X", "Label"), outputs=("Y",),
       infer_shape=lambda ins, attrs: {"Y": OutMeta(_loss_shape(first(ins, "X")), first(ins, "X").dtype,
                                                    first(ins, "X").lod_level)})
def cross_entropy(op, ctx):
    soft = attr(op, "soft_label", False)
    ignore = attr(op, "ignore_index", -100)

    def hard(x, label):
        lab = label.reshape(label.shape[:-1] + (1,)) if label.dim() == x.dim() else label.unsqueeze(-1)
        if lab.dtype != torch.int64:
            lab = lab.long()
        ignored = lab == ignore
        # an ignored row gathers column 0 (its loss is then zeroed); any other label out of range still fails
        idx = lab.masked_fill(ignored, 0)
        if x.requires_grad and torch.is_grad_enabled():
            return _hard_ce_function().apply(x, idx, ignored)
        return _hard_ce(torch.gather(x, -1, idx), ignored)

    def softl(x, label):
        return -(label * torch.log(x).clamp(min=-_KMAX)).sum(-1, keepdim=True)

    return softl if soft else hard


def _hard_ce(picked, ignored):
    # Paddle: -TolerableValue(log(p)): log(0) = -inf becomes -1e20 (a loss of 1e20, not inf)
    return torch.log(picked).clamp_(min=-_KMAX).neg_().masked_fill_(ignored, 0.0)


_HARD_CE = []


def _hard_ce_function():
    """-log(x[label]) with Paddle's gradient, -dy / x[label] at the label (0 where ignored) and 0 elsewhere,
    in one autograd node: a gather, log, clamp, neg and mask recorded separately cost three times the
    kernels."""
    if not _HARD_CE:
        class HardCrossEntropy(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, idx, ignored):
                picked = torch.gather(x, -1, idx)
                ctx.save_for_backward(picked, idx, ignored)
                ctx.x_shape = x.shape
                return _hard_ce(picked, ignored)

            @staticmethod
            def backward(ctx, dy):
                picked, idx, ignored = ctx.saved_tensors
                d = torch.div(dy, picked).neg_().masked_fill_(ignored, 0.0)
                return picked.new_zeros(ctx.x_shape).scatter_(-1, idx, d), None, None
        _HARD_CE.append(HardCrossEntropy)
    return _HARD_CE[0]


def _swce_shape(ins, attrs):
    x = first(ins, "Logits")
    return {"Softmax": OutMeta(x.shape, x.dtype), "Loss": OutMeta(_loss_shape(x), x.dtype)}


@defop("softmax_with_cross_entropy", inputs=("Logits", "Label"), outputs=("Softmax", "Loss"),
       infer_shape=_swce_shape)
def softmax_with_cross_entropy(op, ctx):
    soft = attr(op, "soft_label", False)
    ignore = attr(op, "ignore_index", -100)
    axis = attr(op, "axis", -1)

    def k(logits, label):
        logp = torch.log_softmax(softmax_shift(logits, axis), axis)
        if soft:
            loss = -(label * logp).sum(axis, keepdim=True)
        else:
            lab = label.long()
            if lab.dim() == logits.dim():
                lab_idx = lab
            else:
                lab_idx = lab.unsqueeze(axis)
            valid = lab_idx != ignore
            loss = -torch.gather(logp, axis, torch.where(valid, lab_idx, torch.zeros_like(lab_idx)))
            loss = torch.where(valid, loss, torch.zeros_like(loss))
        return torch.exp(logp), loss

    return k


@defop("sigmoid_cross_entropy_with_logits", inputs=("X", "Label"), infer_shape=same_as("X"))
def sigmoid_ce(op, ctx):
    ignore = attr(op, "ignore_index", -100)
    normalize = attr(op, "normalize", False)

    def k(x, label):
        loss = F.binary_cross_entropy_with_logits(x, label.to(x.dtype), reduction="none")
        valid = label != ignore
        loss = torch.where(valid, loss, torch.zeros_like(loss))
        if normalize:
            loss = loss / valid.sum().clamp(min=1).to(loss.dtype)
        return loss

    return k


@defop("log_loss", inputs=("Predicted", "Labels"), outputs=("Loss",),
       infer_shape=same_as("Predicted", out="Loss", keep_lod=False))
def log_loss(op, ctx):
    eps = float(attr(op, "epsilon", 1e-4))
    return lambda p, y: -y * torch.log(p + eps) - (1 - y) * torch.log(1 - p + eps)


def _huber_shape(ins, attrs):
    x = first(ins, "X")
    return {"Residual": OutMeta(x.shape, x.dtype), "Out": OutMeta(x.shape, x.dtype)}


# The builder keeps its own outputs (Residual is made first and stop_gradient); the shapes are these.
@defop("huber_loss", inputs=("X", "Y"), outputs=("Out", "Residual"), infer_shape=_huber_shape)
def huber_loss(op, ctx):
    d = float(attr(op, "delta"))

    def k(x, y):
        r = y - x
        a = r.abs()
        return torch.where(a <= d, 0.5 * r * r, d * (a - 0.5 * d)), r.detach()

    return k
