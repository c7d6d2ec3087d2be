"""Detection ops of Paddle 1.8's fluid.layers.detection: sigmoid_focal_loss and roi_perspective_transform (the
RetinaNet ops are in retinanet_ops.py). Compile-time shapes follow Paddle 1.8.5's (checked by building the layers
there)."""

from ...ir.lazy import torch
from ..registry import OutMeta, attr, defop
from ..shapes import first
from .roi_ops import _batch_index

_FLT_MIN = 1.175494e-38     # Paddle clamps p at FLT_MIN before its log


def _focal_shape(ins, attrs):
    x = first(ins, "X")
    return {"Out": OutMeta(x.shape, x.dtype, x.lod_level)}


# X [N, C] logits of C foreground classes; Label [N, 1] in 0 (background) .. C, -1 ignored; FgNum [1] the
# foreground count (at least 1). Per element (class d of row n, label g):
#   g == d + 1:        -alpha / fg * (1 - p)^gamma * log(max(p, FLT_MIN))
#   g != -1, d + 1:    -(1 - alpha) / fg * p^gamma * log(1 - p)   (log(1 - p) in its overflow-safe form)
# with p = sigmoid(x). The gradient is autograd's of the same expression.
@defop("sigmoid_focal_loss", inputs=("X", "Label", "FgNum"), infer_shape=_focal_shape, no_grad=("Label", "FgNum"))
def sigmoid_focal_loss(op, ctx):
    gamma, alpha = float(attr(op, "gamma", 2.0)), float(attr(op, "alpha", 0.25))

    def k(x, label, fg_num):
        n, c = x.shape
        g = label.reshape(-1, 1).long()
        if g.shape[0] != n:
            raise ValueError("sigmoid_focal_loss: Label=%s has %d rows but X=%s has %d"
                             % (op.input("Label")[0], g.shape[0], op.input("X")[0], n))
        fg = fg_num.reshape(-1)[0].to(x.dtype).clamp(min=1)
        d = torch.arange(1, c + 1, device=x.device).unsqueeze(0)
        pos = (g == d).to(x.dtype)
        neg = ((g != -1) & (g != d)).to(x.dtype)
        p = torch.sigmoid(x)
        term_pos = (1 - p) ** gamma * torch.log(p.clamp(min=_FLT_MIN))
        relu_x = x * (x >= 0).to(x.dtype)
        term_neg = p ** gamma * (-relu_x - torch.log1p(torch.exp(x - 2 * relu_x)))
        return -pos * term_pos * (alpha / fg) - neg * term_neg * ((1 - alpha) / fg)
    return k


def _rpt_shape(ins, attrs):
    x, rois = first(ins, "X"), first(ins, "ROIs")
    th, tw = int(attrs["transformed_height"]), int(attrs["transformed_width"])
    n = rois.shape[0]
    return {"Out": OutMeta((n, x.shape[1], th, tw), x.dtype, rois.lod_level),
            "Mask": OutMeta((n, 1, th, tw), "int32"), "TransformMatrix": OutMeta((n, 9), x.dtype),
            "Out2InIdx": OutMeta((n, x.shape[1], th, tw), "int32"),
            "Out2InWeights": OutMeta((n, x.shape[1], th, tw), x.dtype)}


_TOL = 1e-4     # Paddle's tolerance for "equal" coordinates (GT_E / LT_E / GT)


def _ge(a, b):
    return (a > b) | ((a - b).abs() < _TOL)


def _le(a, b):
    return (a < b) | ((a - b).abs() < _TOL)


def _c_round(t):
    return torch.sign(t) * torch.floor(t.abs() + 0.5)


def _rpt_matrix(rx, ry, th, tw):
    """Paddle's perspective matrix [R, 9] mapping output (w, h, 1) to the quad (rx, ry) [R, 4], float32 with
    the float64 steps where Paddle's C++ promotes (the 1e-5 and the / 2.0)."""
    x0, x1, x2, x3 = rx.unbind(1)
    y0, y1, y2, y3 = ry.unbind(1)
    side = lambda xa, ya, xb, yb: torch.sqrt((xa - xb) * (xa - xb) + (ya - yb) * (ya - yb))  # noqa: E731
    est_h = ((side(x1, y1, x2, y2) + side(x3, y3, x0, y0)).double() / 2.0).float()
    est_w = ((side(x0, y0, x1, y1) + side(x2, y2, x3, y3)).double() / 2.0).float()
    nh = max(2, th)
    nw = (_c_round(est_w * float(nh - 1) / est_h) + 1).clamp(max=tw).clamp(min=2)          # [R], whole numbers
    nwf, nhf = nw - 1, torch.full_like(nw, float(nh - 1))
    dx1, dx2, dx3 = x1 - x2, x3 - x2, x0 - x1 + x2 - x3
    dy1, dy2, dy3 = y1 - y2, y3 - y2, y0 - y1 + y2 - y3
    den = (dx1 * dy2 - dx2 * dy1).double() + 1e-5
    m6 = ((dx3 * dy2 - dx2 * dy3).double() / den / nwf.double()).float()
    m7 = ((dx1 * dy3 - dx3 * dy1).double() / den / float(nh - 1)).float()
    m3 = (y1 - y0 + m6 * nwf * y1) / nwf
    m4 = (y3 - y0 + m7 * nhf * y3) / nhf
    m0 = (x1 - x0 + m6 * nwf * x1) / nwf
    m1 = (x3 - x0 + m7 * nhf * x3) / nhf
    return torch.stack([m0, m1, x0, m3, m4, y0, m6, m7, torch.ones_like(m6)], 1)


def _in_quad(x, y, rx, ry):
    """Paddle's in_quad for points (x, y) [R, P] and quads [R, 4]: on an edge (within 1e-4), or an odd number
    of edge crossings to the right."""
    on = torch.zeros_like(x, dtype=torch.bool)
    crossings = torch.zeros_like(x, dtype=torch.int64)
    for i in range(4):
        xs, ys = rx[:, i:i + 1], ry[:, i:i + 1]
        xe, ye = rx[:, (i + 1) % 4:(i + 1) % 4 + 1], ry[:, (i + 1) % 4:(i + 1) % 4 + 1]
        flat = (ys - ye).abs() < _TOL
        ix = (y - ys) * (xe - xs) / torch.where(flat, torch.ones_like(ye), ye - ys) + xs
        lo_y, hi_y = torch.minimum(ys, ye), torch.maximum(ys, ye)
        on_flat = ((y - ys).abs() < _TOL) & ((y - ye).abs() < _TOL) & _ge(x, torch.minimum(xs, xe)) & \
            _le(x, torch.maximum(xs, xe))
        near = (ix - x).abs() < _TOL
        on_slope = near & _ge(y, lo_y) & _le(y, hi_y)
        on = on | torch.where(flat, on_flat, on_slope)
        spans = ~flat & ~(_le(y, lo_y) | ((y - hi_y) > _TOL))
        on = on | (spans & near)
        crossings = crossings + (spans & ((ix - x) > _TOL)).to(torch.int64)
    return on | (crossings % 2 == 1)


# Out[r, c, h, w]: bilinear sample of image r's X at the matrix's source point of (w, h), 0 (and Mask 0) where
# that point is outside the quad or the map. Out2InIdx/Out2InWeights stay 0, as Paddle's CPU kernel leaves them.
# X's gradient is autograd's through the bilinear gather (the same weights as Paddle's CPU grad kernel).
@defop("roi_perspective_transform", inputs=("X", "ROIs"),
       outputs=("Out", "Mask", "TransformMatrix", "Out2InIdx", "Out2InWeights"), lod_in=("ROIs",),
       infer_shape=_rpt_shape, no_grad=("ROIs",))
def roi_perspective_transform(op, ctx):
    th, tw = int(attr(op, "transformed_height")), int(attr(op, "transformed_width"))
    scale = float(attr(op, "spatial_scale", 1.0))

    def k(x, rois, lod):
        bidx = _batch_index(op, x, rois, lod)
        n, c, height, width = x.shape
        r = rois.detach().to(torch.float32).reshape(-1, 8) * torch.tensor(scale, dtype=torch.float32)
        rx, ry = r[:, 0::2], r[:, 1::2]
        m = _rpt_matrix(rx, ry, th, tw)                                              # [R, 9]
        hh, ww = torch.meshgrid(torch.arange(th, dtype=torch.float32, device=x.device),
                                torch.arange(tw, dtype=torch.float32, device=x.device), indexing="ij")
        hh, ww = hh.reshape(1, -1), ww.reshape(1, -1)                               # [1, P]
        col = lambda i: m[:, i:i + 1]  # noqa: E731
        u = col(0) * ww + col(1) * hh + col(2)
        v = col(3) * ww + col(4) * hh + col(5)
        z = col(6) * ww + col(7) * hh + col(8)
        in_w, in_h = u / z, v / z                                                   # [R, P]
        outside = _ge(torch.tensor(-0.5), in_w) | _ge(in_w, torch.tensor(float(width) - 0.5)) | \
            _ge(torch.tensor(-0.5), in_h) | _ge(in_h, torch.tensor(float(height) - 0.5))
        keep = _in_quad(in_w, in_h, rx, ry) & ~outside
        in_w = torch.where(_ge(torch.tensor(0.0), in_w), torch.zeros_like(in_w), in_w)
        in_h = torch.where(_ge(torch.tensor(0.0), in_h), torch.zeros_like(in_h), in_h)
        wf, hf = torch.floor(in_w), torch.floor(in_h)
        w_edge, h_edge = wf >= width - 1, hf >= height - 1
        wf = torch.where(w_edge, torch.full_like(wf, width - 1), wf)
        hf = torch.where(h_edge, torch.full_like(hf, height - 1), hf)
        in_w = torch.where(w_edge, wf, in_w)
        in_h = torch.where(h_edge, hf, in_h)
        wc = torch.where(w_edge, wf, wf + 1)
        hc = torch.where(h_edge, hf, hf + 1)
        lw, lh = in_w - wf, in_h - hf
        uw, uh = 1 - lw, 1 - lh
        safe = lambda t, hi: t.clamp(0, hi).long()  # noqa: E731 (taps of dropped points are masked below)
        base = (bidx.view(-1, 1, 1) * c + torch.arange(c, device=x.device).view(1, -1, 1)) * (height * width)
        flat = x.reshape(-1)
        acc = 0
        for yy, xx, wgt in ((hf, wf, uw * uh), (hc, wf, uw * lh), (hc, wc, lw * lh), (hf, wc, lw * uh)):
            pix = (safe(yy, height - 1) * width + safe(xx, width - 1)).unsqueeze(1)  # [R, 1, P]
            acc = acc + flat[base + pix] * (wgt * keep.to(wgt.dtype)).unsqueeze(1).to(x.dtype)
        rn = r.shape[0]
        out = acc.reshape(rn, c, th, tw)
        mask = keep.to(torch.int32).reshape(rn, 1, th, tw)
        zeros_i = torch.zeros(rn, c, th, tw, dtype=torch.int32, device=x.device)
        return out, mask, m.to(x.dtype), zeros_i, torch.zeros_like(out).detach()
    return k
