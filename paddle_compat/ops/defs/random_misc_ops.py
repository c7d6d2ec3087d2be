"""Random ops of Paddle 1.8 beyond uniform/gaussian_random (randint, randperm, seed, sampling_id,
*_batch_size_like) and small metric/decoding ops (mean_iou, gather_tree, edit_distance)."""

from ...ir.lazy import torch, torch_dtype
from ..registry import OutMeta, attr, defop
from ..shapes import first


def _gen(seed, device):
    if not seed:
        return None
    g = torch.Generator(device=device)
    g.manual_seed(int(seed))
    return g


def _attr_shape(ins, attrs):
    return {"Out": OutMeta(attrs["shape"], attrs["dtype"])}


@defop("randint", inputs=(), infer_shape=_attr_shape, differentiable=False)
def randint(op, ctx):
    shape, lo, hi = [int(d) for d in attr(op, "shape")], int(attr(op, "low", 0)), int(attr(op, "high"))
    dt, seed = torch_dtype(attr(op, "dtype", "int64")), attr(op, "seed", 0)
    return lambda: torch.randint(lo, hi, shape, dtype=dt, device=ctx.device, generator=_gen(seed, ctx.device))


@defop("randperm", inputs=(), infer_shape=lambda ins, attrs: {"Out": OutMeta((attrs["n"],), attrs["dtype"])},
       differentiable=False)
def randperm(op, ctx):
    n, dt, seed = int(attr(op, "n")), torch_dtype(attr(op, "dtype", "int64")), attr(op, "seed", 0)
    return lambda: torch.randperm(n, generator=_gen(seed, "cpu")).to(device=ctx.device, dtype=dt)


# The seed a dropout reads from its Seed input: the attribute, or (0) a fresh one each run, drawn from torch's
# generator so that torch.manual_seed makes runs repeatable. Paddle keeps it on the CPU.
@defop("seed", inputs=(), infer_shape=lambda ins, attrs: {"Out": OutMeta((1,), "int32")}, differentiable=False)
def seed(op, ctx):
    fixed = int(attr(op, "seed", 0) or 0)
    if fixed:
        return lambda: torch.tensor([fixed], dtype=torch.int32)
    return lambda: torch.randint(1, 2 ** 31 - 1, (1,), dtype=torch.int32)


# Paddle's kernel writes int64 ids whatever the layer's dtype argument says; the variable is int64 here.
@defop("sampling_id", infer_shape=lambda ins, attrs: {"Out": OutMeta((first(ins, "X").shape[0],), "int64")},
       differentiable=False)
def sampling_id(op, ctx):
    # Paddle draws r ~ U[min, max) per row and returns the first index whose running sum of X exceeds r.
    lo, hi, seed = float(attr(op, "min", 0.0)), float(attr(op, "max", 1.0)), attr(op, "seed", 0)

    def k(x):
        r = torch.empty(x.shape[0], dtype=x.dtype, device=x.device).uniform_(lo, hi,
                                                                              generator=_gen(seed, x.device))
        cum = torch.cumsum(x, 1)
        idx = (cum <= r.unsqueeze(1)).sum(1).clamp(max=x.shape[1] - 1)
        return idx.to(torch.int64)
    return k


def _bsl_shape(ins, attrs):
    x = first(ins, "Input")
    shape = list(attrs["shape"])
    shape[attrs.get("output_dim_idx", 0)] = x.shape[attrs.get("input_dim_idx", 0)]
    return {"Out": OutMeta(shape, attrs["dtype"])}


def _bsl(fill):
    def factory(op, ctx):
        shape = [int(d) for d in attr(op, "shape")]
        idim, odim, seed = attr(op, "input_dim_idx", 0), attr(op, "output_dim_idx", 0), attr(op, "seed", 0)
        dt = torch_dtype(attr(op, "dtype", 5))

        def k(x):
            s = list(shape)
            s[odim] = x.shape[idim]
            out = torch.empty(s, dtype=dt, device=x.device)
            return fill(op, out, _gen(seed, x.device))
        return k
    return factory


defop("uniform_random_batch_size_like", inputs=("Input",), infer_shape=_bsl_shape, differentiable=False)(
    _bsl(lambda op, out, g: out.uniform_(float(attr(op, "min", -1.0)), float(attr(op, "max", 1.0)), generator=g)))
defop("gaussian_random_batch_size_like", inputs=("Input",), infer_shape=_bsl_shape, differentiable=False)(
    _bsl(lambda op, out, g: out.normal_(float(attr(op, "mean", 0.0)), float(attr(op, "std", 1.0)), generator=g)))


def _mean_iou_shape(ins, attrs):
    n = attrs["num_classes"]
    return {"OutMeanIou": OutMeta((1,), "float32"), "OutWrong": OutMeta((n,), "int32"),
            "OutCorrect": OutMeta((n,), "int32")}


@defop("mean_iou", inputs=("Predictions", "Labels", "InWrongs*", "InCorrects*", "InMeanIou*"),
       outputs=("OutMeanIou", "OutWrong", "OutCorrect"), infer_shape=_mean_iou_shape, differentiable=False)
def mean_iou(op, ctx):
    n = attr(op, "num_classes")

    def k(pred, label, in_wrongs, in_corrects, in_means):
        p, lab = pred.reshape(-1).long(), label.reshape(-1).long()
        same = p == lab
        correct = torch.bincount(p[same], minlength=n)[:n]
        wrong = torch.bincount(p[~same], minlength=n)[:n] + torch.bincount(lab[~same], minlength=n)[:n]
        for w in in_wrongs:
            wrong = wrong + w.long()
        for c in in_corrects:
            correct = correct + c.long()
        denom = wrong + correct
        valid = (denom > 0).sum()
        iou = torch.where(denom > 0, correct.float() / denom.clamp(min=1).float(), torch.zeros(n, device=p.device))
        mean = iou.sum() / valid.clamp(min=1).float()
        for m in in_means:
            mean = mean + m.reshape(()).float()
        return mean.reshape(1), wrong.to(torch.int32), correct.to(torch.int32)
    return k


@defop("gather_tree", inputs=("Ids", "Parents"),
       infer_shape=lambda ins, attrs: {"Out": OutMeta(first(ins, "Ids").shape, first(ins, "Ids").dtype)},
       differentiable=False)
def gather_tree(op, ctx):
    def k(ids, parents):
        # ids/parents: [max_time, batch, beam]; walk the parents back from the last step.
        t = ids.shape[0]
        out = torch.empty_like(ids)
        beam = torch.arange(ids.shape[2], device=ids.device).expand(ids.shape[1], -1)
        for step in range(t - 1, -1, -1):
            out[step] = ids[step].gather(1, beam)
            beam = parents[step].gather(1, beam).long()
        return out
    return k


def _edit_distance_shape(ins, attrs):
    h = first(ins, "Hyps")
    n = first(ins, "HypsLength").shape[0] if first(ins, "HypsLength") is not None else -1
    if first(ins, "HypsLength") is None and h.lod_level == 0:
        n = h.shape[0]
    return {"Out": OutMeta((n, 1), "float32"), "SequenceNum": OutMeta((1,), "int64")}


def _levenshtein(a, b):
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, y in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y))
        prev = cur
    return prev[-1]


@defop("edit_distance", inputs=("Hyps", "Refs", "HypsLength", "RefsLength"), outputs=("Out", "SequenceNum"),
       lod_in=("Hyps", "Refs"), infer_shape=_edit_distance_shape, differentiable=False)
def edit_distance(op, ctx):
    normalized = attr(op, "normalized", True)

    def k(hyps, refs, hl, rl, hyps_lod, refs_lod):
        if hl is not None:   # padded [batch, max_len] with lengths
            h_seqs = [hyps[i, :int(n)].reshape(-1).tolist() for i, n in enumerate(hl.reshape(-1).tolist())]
            r_seqs = [refs[i, :int(n)].reshape(-1).tolist() for i, n in enumerate(rl.reshape(-1).tolist())]
        else:
            if hyps_lod is None or refs_lod is None:
                raise ValueError("edit_distance: Hyps and Refs need LoD (or give input_length/label_length)")
            ho, ro = hyps_lod[-1].tolist(), refs_lod[-1].tolist()
            hf, rf = hyps.reshape(-1).tolist(), refs.reshape(-1).tolist()
            h_seqs = [hf[a:b] for a, b in zip(ho, ho[1:])]
            r_seqs = [rf[a:b] for a, b in zip(ro, ro[1:])]
        if len(h_seqs) != len(r_seqs):
            raise ValueError("edit_distance: %d hypotheses but %d references" % (len(h_seqs), len(r_seqs)))
        out = []
        for h, r in zip(h_seqs, r_seqs):
            d = float(_levenshtein(h, r))
            if normalized:
                if not r:
                    raise ValueError("edit_distance: a reference is empty, cannot normalize")
                d /= len(r)
            out.append(d)
        dev = hyps.device
        return (torch.tensor(out, dtype=torch.float32, device=dev).reshape(-1, 1),
                torch.tensor([len(out)], dtype=torch.int64, device=dev))
    return k
