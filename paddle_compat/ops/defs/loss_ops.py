"""Loss ops: cross_entropy (and cross_entropy2, which Paddle 1.8's layers.cross_entropy writes for hard
labels: programs Paddle wrote carry it and its grad op), softmax_with_cross_entropy,
sigmoid_cross_entropy_with_logits, log_loss, huber, smooth_l1_loss, bpr_loss, rank_loss, margin_rank_loss,
teacher_student_sigmoid_loss, kldiv_loss, center_loss; and the ops fluid.layers keeps beside them: cvm
(continuous_value_model), fsp (fsp_matrix), add_position_encoding, bilinear_tensor_product."""

from ...ir.lazy import F, torch
from ..registry import attr, defop, OutMeta
from ..shapes import first, same_as
from .activation_ops import softmax_shift


# Paddle's TolerableValue: -log(0) becomes this instead of inf.
_KMAX = 1e20


def _loss_shape(x):
    """One loss per row: the last dim becomes 1."""
    return tuple(x.shape[:-1]) + (1,)


def _ce_shape(x, label, soft=False):
    """Paddle's cross entropy ops give Y the label's dims with the last set to 1: a hard label one rank
    below X (an [N, T] label of an [N, T, C] input) therefore gives an [N, T] loss, not [N, T, 1]."""
    if not soft and label is not None and len(label.shape) == len(x.shape) - 1:
        return tuple(label.shape)
    return _loss_shape(x)


def _label_rank_below(x, label):
    return label.dim() == x.dim() - 1


@defop("cross_entropy", inputs=("X", "Label"), outputs=("Y",),
       infer_shape=lambda ins, attrs: {"Y": OutMeta(_ce_shape(first(ins, "X"), first(ins, "Label"),
                                                              attrs.get("soft_label", False)),
                                                    first(ins, "X").dtype, first(ins, "X").lod_level)})
def cross_entropy(op, ctx):
    soft = attr(op, "soft_label", False)
    ignore = attr(op, "ignore_index", -100)

    def hard(x, label):
        lab = label_index(x, label)
        if x.requires_grad and torch.is_grad_enabled():
            loss = _hard_ce_function().apply(x, lab, ignore)
        else:
            picked, _, ignored = pick_label(x, lab, ignore)
            loss = hard_ce(picked, ignored)
        return loss.squeeze(-1) if _label_rank_below(x, label) else loss

    def softl(x, label):
        return -(label * torch.log(x).clamp(min=-_KMAX)).sum(-1, keepdim=True)

    return softl if soft else hard


def label_index(x, label):
    """A hard label as gather's int64 index along x's last axis ([N, 1] for an [N, C] x)."""
    if label.dim() != x.dim():
        lab = label.unsqueeze(-1)
    elif label.shape[-1] != 1:
        lab = label.reshape(label.shape[:-1] + (1,))
    else:
        lab = label          # (the usual [N, 1] label: a reshape to its own shape would cost a dispatch)
    return lab if lab.dtype == torch.int64 else lab.long()


def pick_label(x, lab, ignore):
    """(x at each row's label, the index gathered, the rows whose label is ignore_index or None when there are
    none). An ignored row gathers column 0 (its loss is then zeroed); any other label out of range fails.
    On the CPU an ignore_index outside [0, C) is looked for only when the plain gather fails (gather checks
    every index there and raises): a batch without ignored labels then costs no comparison and no masks."""
    if x.is_cpu and not 0 <= ignore < x.shape[-1]:
        try:
            return torch.gather(x, -1, lab), lab, None
        except RuntimeError:
            pass            # an ignored (or out-of-range) label: the masked path below (fails again on the latter)
    ignored = lab == ignore
    idx = lab.masked_fill(ignored, 0)
    return torch.gather(x, -1, idx), idx, ignored


def hard_ce(picked, ignored, positive=False):
    """positive: picked is known to hold no zero (a clipped softmax's output), so log() never gives -inf and the
    clamp has nothing to do."""
    # Paddle: -TolerableValue(log(p)): log(0) = -inf becomes -1e20 (a loss of 1e20, not inf)
    loss = torch.log(picked).neg_() if positive else torch.log(picked).clamp_(min=-_KMAX).neg_()
    return loss if ignored is None else loss.masked_fill_(ignored, 0.0)


def hard_ce_grad(dy, picked, idx, ignored, x_shape):
    """Paddle's cross_entropy_grad for hard labels: -dy / x[label] at the label (0 where ignored), 0 elsewhere."""
    d = torch.div(dy, picked).neg_()
    if ignored is not None:
        d = d.masked_fill_(ignored, 0.0)
    return picked.new_zeros(x_shape).scatter_(-1, idx, d)


_HARD_CE = []


def _hard_ce_function():
    """-log(x[label]) with Paddle's gradient (hard_ce_grad) in one autograd node: a gather, log, clamp, neg
    and mask recorded separately cost three times the kernels."""
    if not _HARD_CE:
        class HardCrossEntropy(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, lab, ignore):
                picked, idx, ignored = pick_label(x, lab, ignore)
                ctx.save_for_backward(picked, idx, ignored)
                ctx.x_shape = x.shape
                return hard_ce(picked, ignored)

            @staticmethod
            def backward(ctx, dy):
                picked, idx, ignored = ctx.saved_tensors
                return hard_ce_grad(dy, picked, idx, ignored, ctx.x_shape), None, None
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


def _rows1(slot, out):
    def infer(ins, attrs):
        x = first(ins, slot)
        return {out: OutMeta((x.shape[0], 1), x.dtype)}
    return infer


def _smooth_l1_shape(ins, attrs):
    x = first(ins, "X")
    return {"Diff": OutMeta(x.shape, x.dtype), "Out": OutMeta((x.shape[0], 1), x.dtype)}


@defop("smooth_l1_loss", inputs=("X", "Y", "InsideWeight", "OutsideWeight"), outputs=("Diff", "Out"),
       infer_shape=_smooth_l1_shape, no_grad=("InsideWeight", "OutsideWeight"))
def smooth_l1_loss(op, ctx):
    s2 = float(attr(op, "sigma", 1.0)) ** 2

    def k(x, y, iw, ow):
        diff = x - y
        if iw is not None:
            diff = diff * iw
        a = diff.abs()
        val = torch.where(a < 1.0 / s2, 0.5 * s2 * diff * diff, a - 0.5 / s2)
        if ow is not None:
            val = val * ow
        return diff, val.reshape(val.shape[0], -1).sum(1, keepdim=True)
    return k


@defop("bpr_loss", inputs=("X", "Label"), outputs=("Y",), infer_shape=_rows1("X", "Y"), no_grad=("Label",))
def bpr_loss(op, ctx):
    def k(x, label):
        n, c = x.shape
        pos = x.gather(1, label.reshape(n, 1).long())
        sp = F.softplus(x - pos)                 # -log(sigmoid(x_label - x_j))
        mask = torch.ones_like(x).scatter(1, label.reshape(n, 1).long(), 0.0)
        return (sp * mask).sum(1, keepdim=True) / (c - 1)
    return k


@defop("rank_loss", inputs=("Label", "Left", "Right"), infer_shape=same_as("Left"), no_grad=("Label",))
def rank_loss(op, ctx):
    return lambda label, left, right: torch.log1p(torch.exp(left - right)) - label * (left - right)


def _mrl_shape(ins, attrs):
    x = first(ins, "Left")
    return {"Out": OutMeta(x.shape, x.dtype), "Activated": OutMeta(x.shape, x.dtype)}


@defop("margin_rank_loss", inputs=("Label", "Left", "Right"), outputs=("Out", "Activated"),
       infer_shape=_mrl_shape, no_grad=("Label",))
def margin_rank_loss(op, ctx):
    m = float(attr(op, "margin", 0.1))

    def k(label, left, right):
        out = torch.relu(-label * (left - right) + m)
        return out, (out > 0).to(out.dtype)
    return k


@defop("teacher_student_sigmoid_loss", inputs=("X", "Label"), outputs=("Y",), infer_shape=_rows1("X", "Y"),
       no_grad=("Label",))
def teacher_student_sigmoid_loss(op, ctx):
    lo, hi = float(attr(op, "soft_max_lower_bound", -15.0)), float(attr(op, "soft_max_up_bound", 15.0))

    def k(x, label):
        # Label < -1: no click, no teacher; -1 <= label < 0: click, no teacher; 0 <= label < 1: no click,
        # teacher score = label; label >= 1: click, teacher score = label - 1 (Paddle's encoding).
        base = torch.relu(x) + torch.log1p(torch.exp(-x.abs()))       # sigmoid cross-entropy without -x*z
        click = ((label >= -1) & (label < 0)) | (label >= 1)
        ce_click = base - x * click.to(x.dtype)
        q = torch.where(label >= 1, label - 1, label)
        has_teacher = label >= 0
        ce_teacher = torch.where(has_teacher, base - x * q, torch.zeros_like(x))
        val = ce_click + ce_teacher
        # Paddle's gradient is zero where x lies outside [lower, upper] bound (its forward is not bounded).
        sig = torch.sigmoid(x)
        g = (sig - click.to(x.dtype)) + torch.where(has_teacher, sig - q, torch.zeros_like(x))
        g = torch.where((x >= lo) & (x <= hi), g, torch.zeros_like(g))
        return val.detach() + g.detach() * (x - x.detach())
    return k


def _kldiv_shape(ins, attrs):
    x = first(ins, "X")
    red = attrs.get("reduction", "mean")
    return {"Loss": OutMeta(x.shape if red == "none" else (1,), x.dtype)}


@defop("kldiv_loss", inputs=("X", "Target"), outputs=("Loss",), infer_shape=_kldiv_shape, no_grad=("Target",))
def kldiv_loss(op, ctx):
    red = attr(op, "reduction", "mean")

    def k(x, t):
        loss = torch.where(t > 0, t * (torch.log(torch.where(t > 0, t, torch.ones_like(t))) - x),
                           torch.zeros_like(x))
        if red == "none":
            return loss
        if red == "sum":
            return loss.sum().reshape(1)
        if red == "batchmean":
            return (loss.sum() / x.shape[0]).reshape(1)
        return loss.mean().reshape(1)
    return k


def _center_shape(ins, attrs):
    x, c = first(ins, "X"), first(ins, "Centers")
    return {"SampleCenterDiff": OutMeta(x.shape, x.dtype), "Loss": OutMeta((x.shape[0], 1), x.dtype),
            "CentersOut": OutMeta(c.shape, c.dtype)}


@defop("center_loss", inputs=("X", "Label", "Centers", "CenterUpdateRate"),
       outputs=("SampleCenterDiff", "Loss", "CentersOut"), infer_shape=_center_shape,
       no_grad=("Label", "Centers", "CenterUpdateRate"))
def center_loss(op, ctx):
    update = attr(op, "need_update", True)

    def k(x, label, centers, rate):
        lab = label.reshape(-1).long()
        diff = x - centers.detach()[lab]
        loss = 0.5 * (diff * diff).sum(1, keepdim=True)
        new_c = centers.detach()
        if update:
            # Paddle: each center moves by rate * sum(x - c) / (1 + count) over the batch's samples of it.
            d = diff.detach()
            acc = torch.zeros_like(new_c).index_add(0, lab, -d)
            cnt = torch.zeros(new_c.shape[0], dtype=d.dtype, device=d.device).index_add(
                0, lab, torch.ones_like(lab, dtype=d.dtype))
            new_c = new_c - rate.reshape(()).to(d.dtype) * acc / (1.0 + cnt).unsqueeze(1)
        return diff, loss, new_c
    return k


def _cvm_shape(ins, attrs):
    x = first(ins, "X")
    d = x.shape[1] if attrs.get("use_cvm", True) or x.shape[1] < 0 else x.shape[1] - 2
    return {"Y": OutMeta((x.shape[0], d), x.dtype, x.lod_level)}


@defop("cvm", inputs=("X", "CVM"), outputs=("Y",), infer_shape=_cvm_shape, no_grad=("CVM",))
def cvm(op, ctx):
    use_cvm = attr(op, "use_cvm", True)

    class _CVMGrad(torch.autograd.Function):
        # Paddle's cvm_grad writes the CVM values (show, click) into X@GRAD's first two columns instead of
        # a chain-rule gradient; the rest of X@GRAD is Y@GRAD.
        @staticmethod
        def forward(fctx, x, c):
            fctx.save_for_backward(c)
            if use_cvm:
                y = x.clone()
                y[:, 0] = torch.log(x[:, 0] + 1)
                y[:, 1] = torch.log(x[:, 1] + 1) - y[:, 0]
                return y
            return x[:, 2:].clone()

        @staticmethod
        def backward(fctx, gy):
            c, = fctx.saved_tensors
            gx = gy.clone() if use_cvm else torch.cat([torch.zeros_like(gy[:, :2]), gy], 1)
            gx[:, :2] = c[:, :2]
            return gx, None

    return lambda x, c: _CVMGrad.apply(x, c)


def _fsp_shape(ins, attrs):
    x, y = first(ins, "X"), first(ins, "Y")
    return {"Out": OutMeta((x.shape[0], x.shape[1], y.shape[1]), x.dtype)}


@defop("fsp", inputs=("X", "Y"), infer_shape=_fsp_shape)
def fsp(op, ctx):
    def k(x, y):
        n, c1, h, w = x.shape
        return torch.bmm(x.reshape(n, c1, h * w), y.reshape(n, y.shape[1], h * w).transpose(1, 2)) / (h * w)
    return k


@defop("add_position_encoding", infer_shape=same_as("X"))
def add_position_encoding(op, ctx):
    alpha, beta = float(attr(op, "alpha", 1.0)), float(attr(op, "beta", 1.0))

    def k(x):
        n, length, d = x.shape
        half = d // 2
        pos = torch.arange(length, dtype=x.dtype, device=x.device).unsqueeze(1)
        kk = torch.arange(half, dtype=x.dtype, device=x.device).unsqueeze(0)
        denom = max(half - 1, 1)
        val = pos / torch.pow(10000.0, kk / denom)     # (a Python base: no tensor uploaded per step)
        enc = torch.cat([torch.sin(val), torch.cos(val)], 1)
        return x * alpha + enc.unsqueeze(0) * beta
    return k


def _btp_shape(ins, attrs):
    x, w = first(ins, "X"), first(ins, "Weight")
    return {"Out": OutMeta((x.shape[0], w.shape[0]), x.dtype)}


@defop("bilinear_tensor_product", inputs=("X", "Y", "Weight", "Bias"), infer_shape=_btp_shape)
def bilinear_tensor_product(op, ctx):
    def k(x, y, w, b):
        out = torch.einsum("ni,kij,nj->nk", x, w, y)
        return out + b if b is not None else out
    return k


def _ce2_shape(ins, attrs):
    out = _shape(ins, attrs)
    x = first(ins, "X")
    out["Y"] = OutMeta(_ce_shape(x, first(ins, "Label")), x.dtype, x.lod_level)
    return out


def _shape(ins, attrs):
    x = first(ins, "X")
    row = tuple(x.shape[:-1]) + (1,)
    # XShape: the input's shape and a 0 (Paddle's shape-only output; nothing computes it here)
    return {"Y": OutMeta(row, x.dtype, x.lod_level), "MatchX": OutMeta(row, x.dtype, x.lod_level),
            "XShape": OutMeta(tuple(x.shape) + (0,), x.dtype)}


@defop("cross_entropy2", inputs=("X", "Label"), outputs=("Y", "MatchX"), infer_shape=_ce2_shape, no_grad=("Label",))
def cross_entropy2(op, ctx):
    ignore = attr(op, "ignore_index", -100)

    def k(x, label):
        lab = label_index(x, label)
        picked, _, ignored = pick_label(x.detach(), lab, ignore)
        match = picked if ignored is None else picked.masked_fill(ignored, 0.0)
        if x.requires_grad and torch.is_grad_enabled():
            loss = _hard_ce_function().apply(x, lab, ignore)
        else:
            loss = hard_ce(picked, ignored)
        return (loss.squeeze(-1) if _label_rank_below(x, label) else loss), match

    return k
