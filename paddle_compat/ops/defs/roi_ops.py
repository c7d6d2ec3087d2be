"""Region-of-interest poolings of Paddle 1.8 (roi_pool, roi_align, psroi_pool, prroi_pool) and deformable
convolution (deformable_conv, deformable_conv_v1). RoIs are [R, 4] (x1, y1, x2, y2) in image coordinates,
scaled by spatial_scale; their LoD says which image each belongs to. All RoIs and bins run together: each
bin reads a fixed-size window of positions (the largest bin's), masked where a smaller bin ends."""

from ...ir.lazy import torch
from ..registry import OutMeta, attr, defop
from ..shapes import first


def _roi_shape(out_c, *extra):
    def infer(ins, attrs):
        x, rois = first(ins, "X"), first(ins, "ROIs")
        if len(x.shape) != 4:
            raise ValueError("RoI pooling: input X=%s must be 4-D NCHW, got %s" % (x.name, list(x.shape)))
        if len(rois.shape) != 2 or rois.shape[1] not in (4, -1):
            raise ValueError("RoI pooling: ROIs=%s must be [num_rois, 4], got %s" % (rois.name, list(rois.shape)))
        c = out_c(x, attrs)
        shape = (rois.shape[0], c, int(attrs["pooled_height"]), int(attrs["pooled_width"]))
        out = {"Out": OutMeta(shape, x.dtype)}
        for slot in extra:
            out[slot] = OutMeta(shape, "int64")
        return out
    return infer


def _batch_index(op, x, rois, lod, lod_slot="ROIs"):
    """Image index of each RoI, from the RoIs' LoD."""
    if not lod:
        raise ValueError("%s: %s=%s carries no LoD (feed a LoDTensor saying which image each RoI belongs to)"
                         % (op.type, lod_slot, op.input("ROIs")[0]))
    off = lod[-1]
    counts = off[1:] - off[:-1]
    if int(off[-1]) != rois.shape[0] or counts.numel() != x.shape[0]:
        raise ValueError("%s: the LoD of ROIs=%s (%s) does not fit %d RoIs over a batch of %d images"
                         % (op.type, op.input("ROIs")[0], off.tolist(), rois.shape[0], x.shape[0]))
    return torch.repeat_interleave(torch.arange(x.shape[0], device=x.device), counts)


def _round(t):
    """C's round(): halves away from zero (torch.round rounds halves to even)."""
    return torch.sign(t) * torch.floor(t.abs() + 0.5)


def _flat(x):
    """[N, C, H, W] -> [N*H*W, C] rows addressed by b*H*W + h*W + w."""
    n, c, h, w = x.shape
    return x.permute(0, 2, 3, 1).reshape(n * h * w, c)


def _window(start, end, limit):
    """Integer bins [start, end) (any shape S) -> (positions S+[K], valid mask S+[K]) with K the widest bin."""
    size = (end - start).clamp(min=0)
    k = max(int(size.max()) if size.numel() else 0, 1)
    steps = torch.arange(k, device=start.device)
    pos = start.unsqueeze(-1) + steps
    valid = steps < size.unsqueeze(-1)
    return pos.clamp(0, max(limit - 1, 0)), valid


def _int_bins(start, extent, pooled, limit):
    """roi_pool/psroi_pool bins along one axis: [R, pooled] integer starts/ends clamped to [0, limit]."""
    p = torch.arange(pooled, device=start.device, dtype=extent.dtype)
    size = extent.unsqueeze(1) / pooled
    lo = torch.floor(p * size + start.unsqueeze(1))
    hi = torch.ceil((p + 1) * size + start.unsqueeze(1))
    return lo.clamp(0, limit).long(), hi.clamp(0, limit).long()


def _gather_bins(x, bidx, hs, he, ws, we):
    """Values of every bin's window: ([R, ph, pw, Kh, Kw, C], valid mask [R, ph, pw, Kh, Kw], flat h*W+w)."""
    n, c, height, width = x.shape
    hpos, hval = _window(hs, he, height)           # [R, ph, Kh]
    wpos, wval = _window(ws, we, width)            # [R, pw, Kw]
    hp = hpos[:, :, None, :, None]
    wp = wpos[:, None, :, None, :]
    spatial = hp * width + wp                       # [R, ph, pw, Kh, Kw]
    rows = bidx.view(-1, 1, 1, 1, 1) * (height * width) + spatial
    vals = _flat(x)[rows.reshape(-1)].reshape(tuple(rows.shape) + (c,))
    valid = hval[:, :, None, :, None] & wval[:, None, :, None, :]
    return vals, valid, spatial


@defop("roi_pool", inputs=("X", "ROIs", "RoisLod"), outputs=("Out", "Argmax"), lod_in=("ROIs",),
       infer_shape=_roi_shape(lambda x, a: x.shape[1], "Argmax"), no_grad=("ROIs", "RoisLod"))
def roi_pool(op, ctx):
    ph, pw = int(attr(op, "pooled_height", 1)), int(attr(op, "pooled_width", 1))
    scale = float(attr(op, "spatial_scale", 1.0))

    def k(x, rois, rois_lod, lod):
        if rois_lod is not None:        # RoisLod: the offsets as a tensor, in place of a LoD
            lod = (rois_lod.reshape(-1).long(),)
        bidx = _batch_index(op, x, rois, lod)
        r = _round(rois.detach() * scale)
        # Paddle: bins of an integer RoI [start, end] (inclusive), at least 1 wide.
        rh = (r[:, 3] - r[:, 1] + 1).clamp(min=1)
        rw = (r[:, 2] - r[:, 0] + 1).clamp(min=1)
        hs, he = _int_bins(r[:, 1], rh, ph, x.shape[2])
        ws, we = _int_bins(r[:, 0], rw, pw, x.shape[3])
        vals, valid, spatial = _gather_bins(x, bidx, hs, he, ws, we)
        rr, a, b, kh, kw, c = vals.shape
        vals = vals.masked_fill(~valid.unsqueeze(-1), float("-inf")).reshape(rr, a, b, kh * kw, c)
        out, arg = vals.max(3)                      # [R, ph, pw, C]
        empty = ~valid.reshape(rr, a, b, kh * kw).any(3)
        out = out.masked_fill(empty.unsqueeze(-1), 0.0)
        argmax = torch.gather(spatial.reshape(rr, a, b, kh * kw), 3, arg).masked_fill(empty.unsqueeze(-1), -1)
        return out.permute(0, 3, 1, 2).contiguous(), argmax.permute(0, 3, 1, 2).contiguous()
    return k


def _psroi_c(x, attrs):
    oc, ph, pw = int(attrs["output_channels"]), int(attrs["pooled_height"]), int(attrs["pooled_width"])
    if x.shape[1] >= 0 and x.shape[1] != oc * ph * pw:
        raise ValueError("psroi_pool: input X=%s has %d channels, need output_channels * pooled_height * "
                         "pooled_width = %d" % (x.name, x.shape[1], oc * ph * pw))
    return oc


@defop("psroi_pool", inputs=("X", "ROIs"), lod_in=("ROIs",), infer_shape=_roi_shape(_psroi_c), no_grad=("ROIs",))
def psroi_pool(op, ctx):
    ph, pw = int(attr(op, "pooled_height", 1)), int(attr(op, "pooled_width", 1))
    oc = int(attr(op, "output_channels", 1))
    scale = float(attr(op, "spatial_scale", 1.0))

    def k(x, rois, lod):
        bidx = _batch_index(op, x, rois, lod)
        r = rois.detach()
        # Paddle rounds the RoI in image coordinates, then scales; the end is inclusive (+1).
        x0, y0 = _round(r[:, 0]) * scale, _round(r[:, 1]) * scale
        x1, y1 = (_round(r[:, 2]) + 1) * scale, (_round(r[:, 3]) + 1) * scale
        hs, he = _int_bins(y0, (y1 - y0).clamp(min=0.1), ph, x.shape[2])
        ws, we = _int_bins(x0, (x1 - x0).clamp(min=0.1), pw, x.shape[3])
        vals, valid, _ = _gather_bins(x, bidx, hs, he, ws, we)     # [R, ph, pw, Kh, Kw, C]
        rr, a, b, kh, kw, c = vals.shape
        # output channel c at bin (i, j) reads input channel (c * ph + i) * pw + j
        vals = vals.reshape(rr, a, b, kh, kw, oc, ph, pw)
        ii = torch.arange(ph, device=x.device)
        jj = torch.arange(pw, device=x.device)
        vals = vals[:, ii[:, None], jj[None, :], :, :, :, ii[:, None], jj[None, :]]   # [ph, pw, R, Kh, Kw, oc]
        vals = vals.permute(2, 0, 1, 3, 4, 5)
        m = valid.unsqueeze(-1).to(x.dtype)
        area = m.sum((3, 4))
        out = (vals * m).sum((3, 4)) / area.clamp(min=1)
        return out.permute(0, 3, 1, 2).contiguous()
    return k


def _bilinear_taps(y, x, height, width):
    """Paddle's RoIAlign interpolation taps: 4 x ([...] flat index h*W+w, weight), 0 weight outside."""
    outside = (y < -1.0) | (y > height) | (x < -1.0) | (x > width)
    y = y.clamp(min=0)
    x = x.clamp(min=0)
    y0 = torch.floor(y)
    x0 = torch.floor(x)
    top_y = y0 >= height - 1
    top_x = x0 >= width - 1
    y0 = torch.where(top_y, torch.full_like(y0, height - 1), y0)
    x0 = torch.where(top_x, torch.full_like(x0, width - 1), x0)
    y = torch.where(top_y, y0, y)
    x = torch.where(top_x, x0, x)
    y1 = torch.where(top_y, y0, y0 + 1)
    x1 = torch.where(top_x, x0, x0 + 1)
    ly, lx = y - y0, x - x0
    hy, hx = 1 - ly, 1 - lx
    keep = (~outside).to(y.dtype)
    taps = []
    for yy, xx, wgt in ((y0, x0, hy * hx), (y0, x1, hy * lx), (y1, x0, ly * hx), (y1, x1, ly * lx)):
        taps.append(((yy * width + xx).long(), wgt * keep))
    return taps


@defop("roi_align", inputs=("X", "ROIs", "RoisLod"), lod_in=("ROIs",),
       infer_shape=_roi_shape(lambda x, a: x.shape[1]), no_grad=("ROIs", "RoisLod"))
def roi_align(op, ctx):
    ph, pw = int(attr(op, "pooled_height", 1)), int(attr(op, "pooled_width", 1))
    scale = float(attr(op, "spatial_scale", 1.0))
    ratio = int(attr(op, "sampling_ratio", -1))

    def k(x, rois, rois_lod, lod):
        if rois_lod is not None:        # RoisLod: the offsets as a tensor, in place of a LoD
            lod = (rois_lod.reshape(-1).long(),)
        bidx = _batch_index(op, x, rois, lod)
        n, c, height, width = x.shape
        r = rois.detach().to(x.dtype) * scale
        rh = (r[:, 3] - r[:, 1]).clamp(min=1.0)
        rw = (r[:, 2] - r[:, 0]).clamp(min=1.0)
        bh, bw = rh / ph, rw / pw
        if ratio > 0:
            gh = torch.full_like(rh, ratio)
            gw = torch.full_like(rw, ratio)
        else:
            gh, gw = torch.ceil(rh / ph), torch.ceil(rw / pw)
        kh = max(int(gh.max()) if gh.numel() else 1, 1)
        kw = max(int(gw.max()) if gw.numel() else 1, 1)
        iy = torch.arange(kh, device=x.device, dtype=x.dtype)
        ix = torch.arange(kw, device=x.device, dtype=x.dtype)
        py = torch.arange(ph, device=x.device, dtype=x.dtype)
        px = torch.arange(pw, device=x.device, dtype=x.dtype)
        # sample (i, j) of bin (p, q): [R, ph, Kh] rows, [R, pw, Kw] columns
        ys = r[:, 1, None, None] + py[None, :, None] * bh[:, None, None] \
            + (iy[None, None, :] + 0.5) * (bh / gh)[:, None, None]
        xs = r[:, 0, None, None] + px[None, :, None] * bw[:, None, None] \
            + (ix[None, None, :] + 0.5) * (bw / gw)[:, None, None]
        vy = (iy[None, :] < gh[:, None]).to(x.dtype)          # [R, Kh]
        vx = (ix[None, :] < gw[:, None]).to(x.dtype)
        yy = ys[:, :, None, :, None].expand(-1, ph, pw, kh, kw)
        xx = xs[:, None, :, None, :].expand(-1, ph, pw, kh, kw)
        m = vy[:, None, None, :, None] * vx[:, None, None, None, :]
        flat = _flat(x)
        base = (bidx * (height * width)).view(-1, 1, 1, 1, 1)
        acc = 0
        for idx, wgt in _bilinear_taps(yy, xx, height, width):
            acc = acc + flat[(base + idx).reshape(-1)].reshape(tuple(idx.shape) + (c,)) * (wgt * m).unsqueeze(-1)
        out = acc.sum((3, 4)) / (gh * gw).view(-1, 1, 1, 1)
        return out.permute(0, 3, 1, 2).contiguous()
    return k


def _prroi_axis(start, end, pooled, limit):
    """Precise RoI pooling along one axis: (positions [R, P, K], weights [R, P, K], bin extent [R, P]).

    The bin [ws, we) is integrated over the piecewise-linear interpolation of the samples: cell [i, i+1]
    covers [a, b] = [max(ws, i), min(we, i+1)] - i and gives sample i the weight (b - b^2/2) - (a - a^2/2),
    sample i+1 the weight b^2/2 - a^2/2. Differentiable in the RoI (floor/ceil only pick the cells)."""
    size = (end - start).clamp(min=0) / pooled                      # [R]
    p = torch.arange(pooled, device=start.device, dtype=start.dtype)
    ws = start[:, None] + size[:, None] * p                         # [R, P]
    we = ws + size[:, None]
    s = torch.floor(ws.detach())
    e = torch.ceil(we.detach())
    k = max(int((e - s).max()) if e.numel() else 0, 0)
    t = torch.arange(k + 1, device=start.device, dtype=start.dtype)
    cell = s[..., None] + t                                         # [R, P, K+1]: cell i starts at sample i
    in_bin = cell < e[..., None]
    # where, not maximum/minimum: at a bin edge on an integer the edge must keep its whole gradient
    a = torch.where(cell <= ws[..., None], ws[..., None] - cell, torch.zeros_like(cell))
    b = torch.where(cell + 1 >= we[..., None], we[..., None] - cell, torch.ones_like(cell))
    lo = torch.where(in_bin, (b - 0.5 * b * b) - (a - 0.5 * a * a), torch.zeros_like(a))
    hi = torch.where(in_bin, 0.5 * b * b - 0.5 * a * a, torch.zeros_like(a))
    wgt = lo + torch.cat([torch.zeros_like(hi[..., :1]), hi[..., :-1]], -1)   # sample j: lo of cell j, hi of j-1
    inside = (cell >= 0) & (cell < limit)                            # samples outside the map read 0
    wgt = wgt * inside.to(wgt.dtype)
    return cell.long().clamp(0, max(limit - 1, 0)), wgt, size


@defop("prroi_pool", inputs=("X", "ROIs", "BatchRoINums"), lod_in=("ROIs",),
       infer_shape=_roi_shape(lambda x, a: x.shape[1]), no_grad=("BatchRoINums",))
def prroi_pool(op, ctx):
    ph, pw = int(attr(op, "pooled_height", 1)), int(attr(op, "pooled_width", 1))
    scale = float(attr(op, "spatial_scale", 1.0))

    def k(x, rois, nums, lod):
        if nums is not None:        # BatchRoINums: RoIs per image, in place of a LoD
            nums = nums.reshape(-1).long()
            lod = (torch.cat([nums.new_zeros(1), torch.cumsum(nums, 0)]),)
        bidx = _batch_index(op, x, rois, lod)
        n, c, height, width = x.shape
        r = rois.to(x.dtype) * scale
        hpos, hw, bh = _prroi_axis(r[:, 1], r[:, 3], ph, height)    # [R, ph, Kh]
        wpos, ww, bw = _prroi_axis(r[:, 0], r[:, 2], pw, width)     # [R, pw, Kw]
        rows = (bidx.view(-1, 1, 1, 1, 1) * (height * width) + hpos[:, :, None, :, None] * width
                + wpos[:, None, :, None, :])
        vals = _flat(x)[rows.reshape(-1)].reshape(tuple(rows.shape) + (c,))     # [R, ph, pw, Kh, Kw, C]
        out = torch.einsum("rpqhwc,rph,rqw->rpqc", vals, hw, ww)
        area = (bh * bw)[:, None, None, None]
        safe = torch.where(area > 0, area, torch.ones_like(area))
        out = torch.where(area > 0, out / safe, torch.zeros_like(out))
        return out.permute(0, 3, 1, 2).contiguous()
    return k


def _deform_shape(ins, attrs):
    x, w = first(ins, "Input"), first(ins, "Filter")
    kh, kw = w.shape[2], w.shape[3]
    s, p, d = attrs.get("strides", [1, 1]), attrs.get("paddings", [0, 0]), attrs.get("dilations", [1, 1])

    def size(i, kk, j):
        if i < 0:
            return -1
        return (i + 2 * p[j] - (d[j] * (kk - 1) + 1)) // s[j] + 1
    return {"Output": OutMeta((x.shape[0], w.shape[0], size(x.shape[2], kh, 0), size(x.shape[3], kw, 1)),
                              x.dtype)}


# Paddle 1.8.5's CPU kernel processes the batch in chunks of im2col_step and leaves the output 0 for a batch
# smaller than im2col_step (the layer's default is 64); this computes every sample whatever im2col_step says.
def _deform_kernel(op, modulated):
    s = [int(v) for v in attr(op, "strides", [1, 1])]
    p = [int(v) for v in attr(op, "paddings", [0, 0])]
    d = [int(v) for v in attr(op, "dilations", [1, 1])]
    groups = int(attr(op, "groups", 1) or 1)
    dgroups = int(attr(op, "deformable_groups", 1) or 1)

    def k(x, offset, mask, w):
        n, cin, height, width = x.shape
        cout, _, kh, kw = w.shape
        ho = (height + 2 * p[0] - (d[0] * (kh - 1) + 1)) // s[0] + 1
        wo = (width + 2 * p[1] - (d[1] * (kw - 1) + 1)) // s[1] + 1
        kk = kh * kw
        if tuple(offset.shape) != (n, 2 * dgroups * kk, ho, wo):
            raise ValueError("%s: Offset=%s is %s, need %s" % (op.type, op.input("Offset")[0], list(offset.shape),
                                                              [n, 2 * dgroups * kk, ho, wo]))
        off = offset.reshape(n, dgroups, kk, 2, ho, wo)
        dev, dt = x.device, x.dtype
        base_h = (torch.arange(ho, device=dev, dtype=dt) * s[0] - p[0]).view(1, 1, 1, ho, 1) \
            + (torch.arange(kh, device=dev, dtype=dt) * d[0]).repeat_interleave(kw).view(1, 1, kk, 1, 1)
        base_w = (torch.arange(wo, device=dev, dtype=dt) * s[1] - p[1]).view(1, 1, 1, 1, wo) \
            + (torch.arange(kw, device=dev, dtype=dt) * d[1]).repeat(kh).view(1, 1, kk, 1, 1)
        hh = base_h + off[:, :, :, 0]                       # [N, dg, K, Ho, Wo]
        ww = base_w + off[:, :, :, 1]
        # Paddle's deformable im2col: 0 outside (-1, H) x (-1, W); corners outside the map read 0.
        inside = ((hh > -1) & (ww > -1) & (hh < height) & (ww < width)).to(dt)
        h0 = torch.floor(hh.detach())
        w0 = torch.floor(ww.detach())
        lh, lw = hh - h0, ww - w0
        xg = x.reshape(n, dgroups, cin // dgroups, height * width)
        col = 0
        for dy, dx, wgt in ((0, 0, (1 - lh) * (1 - lw)), (0, 1, (1 - lh) * lw), (1, 0, lh * (1 - lw)),
                            (1, 1, lh * lw)):
            yy, xx = h0 + dy, w0 + dx
            ok = ((yy >= 0) & (yy < height) & (xx >= 0) & (xx < width)).to(dt)
            idx = (yy.clamp(0, height - 1) * width + xx.clamp(0, width - 1)).long()   # [N, dg, K, Ho, Wo]
            g = torch.gather(xg, 3, idx.reshape(n, dgroups, 1, -1).expand(-1, -1, cin // dgroups, -1))
            col = col + g * (wgt * ok * inside).reshape(n, dgroups, 1, -1)
        if modulated:
            col = col * mask.reshape(n, dgroups, 1, -1)
        col = col.reshape(n, cin, kk, ho * wo).reshape(n, groups, (cin // groups) * kk, ho * wo)
        wm = w.reshape(groups, cout // groups, (cin // groups) * kk)
        out = torch.einsum("gok,ngkl->ngol", wm, col)
        return out.reshape(n, cout, ho, wo)
    return k


@defop("deformable_conv", inputs=("Input", "Offset", "Mask", "Filter"), outputs=("Output",),
       infer_shape=_deform_shape)
def deformable_conv(op, ctx):
    return _deform_kernel(op, True)


@defop("deformable_conv_v1", inputs=("Input", "Offset", "Filter"), outputs=("Output",), infer_shape=_deform_shape)
def deformable_conv_v1(op, ctx):
    k = _deform_kernel(op, False)
    return lambda x, offset, w: k(x, offset, None, w)


def _deform_psroi_shape(ins, attrs):
    x, rois = first(ins, "Input"), first(ins, "ROIs")
    shape = (rois.shape[0], int(attrs["output_dim"]), int(attrs["pooled_height"]), int(attrs["pooled_width"]))
    return {"Output": OutMeta(shape, x.dtype), "TopCount": OutMeta(shape, x.dtype)}


# Deformable (position-sensitive) RoI pooling: bin (i, j) of output channel c averages sample_per_part^2
# bilinear samples of input channel (c * gh + gi) * gw + gj ((gi, gj) the bin's group cell), the bin shifted
# by Trans[r, 2 * class, part cell] * trans_std * RoI size (x) and the next channel (y). RoIs are rounded,
# scaled and shifted by -0.5 as in Paddle; samples beyond half a pixel outside the map are skipped.
@defop("deformable_psroi_pooling", inputs=("Input", "ROIs", "Trans"), outputs=("Output", "TopCount"),
       lod_in=("ROIs",), infer_shape=_deform_psroi_shape, no_grad=("ROIs",))
def deformable_psroi_pooling(op, ctx):
    no_trans = bool(attr(op, "no_trans", False))
    ph, pw = int(attr(op, "pooled_height", 1)), int(attr(op, "pooled_width", 1))
    part_h, part_w = [int(v) for v in attr(op, "part_size", [ph, pw])]
    a = {"no_trans": no_trans, "scale": float(attr(op, "spatial_scale", 1.0)), "pooled": (ph, pw),
         "out_dim": int(attr(op, "output_dim")), "group": tuple(int(v) for v in attr(op, "group_size", [1, 1])),
         "spp": int(attr(op, "sample_per_part", 1)), "trans_std": float(attr(op, "trans_std", 0.1))}

    def k(x, rois, trans, lod):
        out, cnt = _deform_psroi_pool(op, a, x, rois, trans, lod, (part_h, part_w))
        if part_h == part_w or no_trans:
            return out, cnt
        # Paddle 1.8.5's backward kernel reads Trans with part_size's height and width swapped, so its
        # gradients are those of the pooling at those (other) offsets; kept for parity.
        back, _ = _deform_psroi_pool(op, a, x, rois, trans, lod, (part_w, part_h))
        return out.detach() + (back - back.detach()), cnt
    return k


def _deform_psroi_pool(op, a, x, rois, trans, lod, part):
    """(Output, TopCount) of deformable_psroi_pooling (a: its attributes) reading Trans by part = (height,
    width) cells."""
    bidx = _batch_index(op, x, rois, lod)
    n, c, height, width = x.shape
    dev, dt = x.device, x.dtype
    out_dim, (gh, gw), (ph, pw) = a["out_dim"], a["group"], a["pooled"]
    if c != out_dim * gh * gw:
        raise ValueError("deformable_psroi_pooling: Input=%s has %d channels, need output_dim * group "
                         "size = %d" % (op.input("Input")[0], c, out_dim * gh * gw))
    r = rois.detach().to(dt)
    scale = a["scale"]
    x0 = _round(r[:, 0]) * scale - 0.5
    y0 = _round(r[:, 1]) * scale - 0.5
    rw = ((_round(r[:, 2]) + 1) * scale - 0.5 - x0).clamp(min=0.1)
    rh = ((_round(r[:, 3]) + 1) * scale - 0.5 - y0).clamp(min=0.1)
    tx, ty = _deform_part_shifts(a, trans, part, rois.shape[0], dt, dev)
    ws, hs, ok = _deform_sample_points(a, x0, y0, rw, rh, tx, ty, height, width, dev)
    pi, pj = torch.arange(ph, device=dev), torch.arange(pw, device=dev)
    gi = (pi * gh // ph).clamp(0, gh - 1)
    gj = (pj * gw // pw).clamp(0, gw - 1)
    chan = (torch.arange(out_dim, device=dev).view(-1, 1, 1) * gh + gi.view(1, -1, 1)) * gw + gj.view(1, 1, -1)
    val = _bilinear_in_planes(x, bidx, chan, ws, hs)                          # chan: [D, ph, pw]
    okf = ok.to(dt)
    cnt = okf.sum((4, 5))
    out = (val * okf).sum((4, 5)) / cnt.clamp(min=1)
    return out, cnt


def _deform_part_shifts(a, trans, part, nrois, dt, dev):
    """The bins' shifts (x, y), [R, out_dim, ph, pw], in RoI sizes: each bin reads its class's two Trans
    channels at its part cell; zeros (still tied to Trans, for its gradient) with no_trans."""
    out_dim, (ph, pw) = a["out_dim"], a["pooled"]
    if a["no_trans"]:
        tx = torch.zeros(nrois, out_dim, ph, pw, dtype=dt, device=dev) + 0 * trans.sum()
        return tx, tx
    part_h, part_w = part
    ncls = trans.shape[1] // 2
    cls = torch.arange(out_dim, device=dev) // (out_dim // ncls)
    hi = torch.floor(torch.arange(ph, device=dev).to(dt) / ph * part_h).long()
    wj = torch.floor(torch.arange(pw, device=dev).to(dt) / pw * part_w).long()
    tr = trans[:, :, hi][:, :, :, wj]                                          # [R, 2 * ncls, ph, pw]
    return tr[:, 2 * cls] * a["trans_std"], tr[:, 2 * cls + 1] * a["trans_std"]


def _deform_sample_points(a, x0, y0, rw, rh, tx, ty, height, width, dev):
    """The spp x spp sample points of every bin, [R, D, ph, pw, spp, spp] each (x, y clamped into the map),
    and which of them lie at most half a pixel outside it (the ones counted)."""
    (ph, pw), spp = a["pooled"], a["spp"]
    dt = x0.dtype
    bw, bh = rw / pw, rh / ph
    wstart = torch.arange(pw, device=dev).to(dt).view(1, 1, 1, pw) * bw.view(-1, 1, 1, 1) + x0.view(-1, 1, 1, 1) \
        + tx * rw.view(-1, 1, 1, 1)
    hstart = torch.arange(ph, device=dev).to(dt).view(1, 1, ph, 1) * bh.view(-1, 1, 1, 1) + y0.view(-1, 1, 1, 1) \
        + ty * rh.view(-1, 1, 1, 1)
    s = torch.arange(spp, device=dev, dtype=dt)
    ws = wstart[..., None, None] + s.view(1, 1, 1, 1, 1, spp) * (bw / spp).view(-1, 1, 1, 1, 1, 1)
    hs = hstart[..., None, None] + s.view(1, 1, 1, 1, spp, 1) * (bh / spp).view(-1, 1, 1, 1, 1, 1)
    ws, hs = torch.broadcast_tensors(ws, hs)
    ok = (ws >= -0.5) & (ws <= width - 0.5) & (hs >= -0.5) & (hs <= height - 0.5)
    return ws.clamp(0, width - 1), hs.clamp(0, height - 1), ok


def _bilinear_in_planes(x, bidx, chan, ws, hs):
    """Bilinear values at the points (ws, hs) of each RoI's image, bin (d, i, j) reading channel chan[d, i, j]."""
    n, c, height, width = x.shape
    xf = x.reshape(n, c, height * width)
    plane = (bidx.view(-1, 1, 1, 1) * c + chan.unsqueeze(0)).reshape(-1)              # [R*D*ph*pw]
    xs = xf.reshape(n * c, height * width)[plane].reshape(tuple(ws.shape[:4]) + (height * width,))
    x1, y1 = torch.floor(ws.detach()), torch.floor(hs.detach())
    x2, y2 = torch.ceil(ws.detach()), torch.ceil(hs.detach())
    dx, dy = ws - x1, hs - y1
    flat = xs.reshape(xs.shape[0], -1, height * width)                      # [R, D*ph*pw, HW]

    def at(yy, xx):
        idx = (yy * width + xx).long().reshape(xs.shape[0], flat.shape[1], -1)
        return torch.gather(flat, 2, idx).reshape(ws.shape)
    return ((1 - dx) * (1 - dy) * at(y1, x1) + (1 - dx) * dy * at(y2, x1) + dx * (1 - dy) * at(y1, x2)
            + dx * dy * at(y2, x2))
