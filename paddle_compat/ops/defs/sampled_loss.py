"""Losses over a sampled or tree-coded subset of classes, in Paddle 1.8's op types and layouts: nce,
hierarchical_sigmoid (hsigmoid) and sample_logits (the first half of sampled_softmax_with_cross_entropy).

Weight rows are gathered with `F.embedding`, so with is_sparse=True the weight gradient comes out of autograd
row-sparse (Paddle's SelectedRows, as for embedding(is_sparse=True)) and a pserver gets only the touched rows.
Bias gradients stay dense, as Paddle's grad var types say.

Sampling: Paddle's samplers draw from C++ std::mt19937 streams, so the drawn classes cannot equal Paddle's; the
distributions (uniform, log-uniform, custom alias table) and the probabilities used in the loss are Paddle's.
As in Paddle, a nonzero `seed` makes a fresh sampler each run (the same classes every step); seed 0 draws
from torch's global generator. nce's `custom_neg_classes` attribute (Paddle's test hook) fixes the negatives.
"""

import math

from ...ir.lazy import torch, F
from .. import remote_rows
from ..registry import OutMeta, attr, defop
from ..shapes import first


def _gen(seed):
    if not seed:
        return None
    g = torch.Generator()
    g.manual_seed(int(seed))
    return g


class _Sampler:
    """Paddle's math::Sampler family over classes [0, classes): Sample(shape), Probability(values)."""

    def __init__(self, kind, classes, seed, probs=None, alias=None, alias_probs=None):
        self.kind, self.classes, self.gen = kind, classes, _gen(seed)
        self.probs, self.alias, self.alias_probs = probs, alias, alias_probs
        self.log_range = math.log(classes)

    def sample(self, shape):
        if self.kind == 0:
            return torch.randint(0, self.classes, shape, generator=self.gen)
        if self.kind == 1:
            u = torch.rand(shape, generator=self.gen, dtype=torch.float64)
            # Paddle: int64(exp(u * log(range + 1))) - 1, then modulo range (range = classes - 1)
            return (torch.exp(u * self.log_range).long() - 1) % max(self.classes - 1, 1)
        index = torch.randint(0, self.classes, shape, generator=self.gen)
        p = torch.rand(shape, generator=self.gen, dtype=torch.float64)
        alias = self.alias.long().cpu()[index]
        take = (p > self.alias_probs.double().cpu()[index]) & (alias >= 0)   # alias -1: keep the index
        return torch.where(take, alias, index)

    def probability(self, v):
        if self.kind == 0:
            return torch.full(v.shape, 1.0 / self.classes, dtype=torch.float64, device=v.device)
        if self.kind == 1:
            vd = v.double()
            return torch.log((vd + 2.0) / (vd + 1.0)) / self.log_range
        return self.probs.double().to(v.device)[v]


def _nce_shape(ins, attrs):
    x, lab = first(ins, "Input"), first(ins, "Label")
    s = lab.shape[1] + int(attrs.get("num_neg_samples", 10))
    return {"Cost": OutMeta((x.shape[0], 1), x.dtype), "SampleLogits": OutMeta((x.shape[0], s), x.dtype),
            "SampleLabels": OutMeta((x.shape[0], s), "int64")}


@defop("nce", inputs=("Input", "Label", "Weight", "Bias", "SampleWeight", "CustomDistProbs", "CustomDistAlias",
                      "CustomDistAliasProbs"),
       outputs=("Cost", "SampleLogits", "SampleLabels"), infer_shape=_nce_shape,
       no_grad=("Label", "SampleWeight", "CustomDistProbs", "CustomDistAlias", "CustomDistAliasProbs"),
       sparse_grad_slot="Weight", host="data")
def nce(op, ctx):
    classes, num_neg = int(attr(op, "num_total_classes")), int(attr(op, "num_neg_samples", 10))
    kind, seed, sparse = int(attr(op, "sampler", 0)), attr(op, "seed", 0), bool(attr(op, "is_sparse", False))
    custom_neg = [int(c) for c in (attr(op, "custom_neg_classes", []) or [])]
    if custom_neg and len(custom_neg) != num_neg:
        raise ValueError("nce: custom_neg_classes has %d classes but num_neg_samples is %d"
                         % (len(custom_neg), num_neg))

    remote = remote_rows.is_remote(op)

    def k(x, label, w, b, sw, probs, alias, alias_probs):
        if kind == 2 and probs is None:
            raise ValueError("nce: sampler 'custom_dist' needs CustomDistProbs/CustomDistAlias/"
                             "CustomDistAliasProbs (give custom_dist to layers.nce)")
        n = x.shape[0]
        label = label.reshape(n, -1).long()
        if label.numel() and (int(label.min()) < 0 or int(label.max()) >= classes):
            raise ValueError("nce: a label fed to %s is outside [0, %d) (num_total_classes)"
                             % (op.input("Label")[0], classes))
        sampler = _Sampler(kind, classes, seed, probs, alias, alias_probs)
        if custom_neg:
            neg = torch.tensor(custom_neg, dtype=torch.long).expand(n, num_neg)
        else:
            neg = sampler.sample((n, num_neg))
        labels = torch.cat([label, neg.to(label.device)], 1)                          # [N, T + S]
        if remote:
            # the weight rows live on servers (Paddle's remote prefetch, ops/remote_rows.py): those of the
            # sampled classes are fetched into a zero Weight of the local one's shape
            uniq = torch.unique(labels.reshape(-1))
            height = max(w.shape[0], int(uniq.max()) + 1 if uniq.numel() else 0)
            full = torch.zeros((height,) + tuple(w.shape[1:]), dtype=w.dtype, device=w.device)
            full[uniq.to(w.device)] = remote_rows.fetch(op, uniq, w)
            w = full
        rows = F.embedding(labels, w, sparse=sparse)                                   # [N, T + S, D]
        z = (rows * x.unsqueeze(1)).sum(-1)
        if b is not None:
            z = z + F.embedding(labels, b.reshape(-1, 1)).squeeze(-1)   # Bias [C, 1], or [C] (Paddle takes both)
        o = torch.sigmoid(z)
        q = (sampler.probability(labels) * num_neg).to(o.dtype)                        # b of Paddle's formula
        true = torch.arange(labels.shape[1], device=x.device) < label.shape[1]
        cost = torch.where(true, -torch.log(o / (o + q)), -torch.log(q / (o + q))).sum(1, keepdim=True)
        if sw is not None:
            # Paddle reads one weight per row from the start of SampleWeight, whatever its size beyond
            cost = cost * sw.reshape(-1)[:n].reshape(n, 1)
        return cost, o.detach(), labels
    return k


def _hs_shape(ins, attrs):
    x, table = first(ins, "X"), first(ins, "PathTable")
    if table is not None:
        length = table.shape[1]
    else:
        length = max(int(attrs["num_classes"]) - 1, 1).bit_length()
    return {"Out": OutMeta((x.shape[0], 1), x.dtype), "PreOut": OutMeta((x.shape[0], length), x.dtype)}


def _tree_code(label, num_classes, table, code):
    """([N, L] node index, [N, L] branch bit, [N, L] on-path mask) of each row's path.

    Default tree (Paddle's SimpleCode): class c has code c + num_classes; step j goes to node
    (code >> (j + 1)) - 1 with bit (code >> j) & 1, for bit_length(code) - 1 steps. Custom tree: the rows of
    PathTable/PathCode, a path ending at its first negative entry."""
    if table is not None:
        mask = torch.cumprod((table >= 0).long(), 1).bool()
        return table.long().clamp(min=0), code.long(), mask
    c = label.reshape(-1).long() + num_classes
    length = max(num_classes - 1, 1).bit_length()
    j = torch.arange(length, device=c.device)
    idx = (c.unsqueeze(1) >> (j + 1)) - 1
    bit = (c.unsqueeze(1) >> j) & 1
    # step j is on the path while j < bit_length(c) - 1, i.e. while c >> (j + 1) is still a node (idx >= 0);
    # integer-exact everywhere (floor(log2(c)) came out one short for powers of two on CUDA)
    return idx.clamp(min=0), bit, idx >= 0


# Out = sum over the path of softplus(z) - bit * z, with z = x . W[node] + Bias[node] clipped to [-40, 40].
# Paddle's kernel also adds softplus(0) = log 2 for each padded step past a path's end (its code notes the
# TODO); that constant is kept so Out equals Paddle's, and it carries no gradient. Paddle's gradient ignores
# the clip (it uses sigmoid(clipped z) - bit), so the clip here passes gradient straight through. W_Out, as in
# Paddle's program, names W itself; the kernel does not write it (registry.aliased_outputs keeps W a leaf).
@defop("hierarchical_sigmoid", inputs=("X", "W", "Label", "PathTable", "PathCode", "Bias"),
       outputs=("Out", "PreOut"), infer_shape=_hs_shape, no_grad=("Label", "PathTable", "PathCode"),
       sparse_grad_slot="W", host="data")
def hierarchical_sigmoid(op, ctx):
    num_classes, sparse = int(attr(op, "num_classes", 2)), bool(attr(op, "is_sparse", False))

    def k(x, w, label, table, code, b):
        n = x.shape[0]
        if table is None and label.numel() and (int(label.min()) < 0 or int(label.max()) >= num_classes):
            raise ValueError("hsigmoid: a label fed to %s is outside [0, %d) (num_classes)"
                             % (op.input("Label")[0], num_classes))
        if table is not None and tuple(table.shape) != tuple(code.shape):
            raise ValueError("hsigmoid: path_table %s and path_code %s differ in shape"
                             % (list(table.shape), list(code.shape)))
        idx, bit, mask = _tree_code(label, num_classes, table, code)
        top = int((idx * mask).max()) if idx.numel() else 0
        if table is not None and top >= w.shape[0]:
            raise ValueError("hsigmoid: path_table %s names node %d but W has %d rows"
                             % (op.input("PathTable")[0], top, w.shape[0]))
        pos = mask.reshape(-1).nonzero().squeeze(1)          # only on-path steps touch W (sparse rows too)
        nodes = idx.reshape(-1).index_select(0, pos)
        rows = F.embedding(nodes, w, sparse=sparse)
        zs = (rows * x.index_select(0, pos // idx.shape[1])).sum(1)
        if b is not None:
            zs = zs + F.embedding(nodes, b).squeeze(1)
        zs = zs + (zs.clamp(-40.0, 40.0) - zs).detach()
        z = torch.zeros(idx.numel(), dtype=x.dtype, device=x.device).index_put((pos,), zs).reshape(idx.shape)
        soft = torch.log1p(torch.exp(z))
        out = (soft - bit.to(z.dtype) * z * mask).sum(1, keepdim=True)
        return out, soft.detach()
    return k


def _sl_shape(ins, attrs):
    x, lab = first(ins, "Logits"), first(ins, "Labels")
    s = lab.shape[1] + int(attrs["num_samples"])
    n = x.shape[0]
    return {"Samples": OutMeta((n, s), "int64"), "Probabilities": OutMeta((n, s), x.dtype),
            "SampledLogits": OutMeta((n, s), x.dtype), "SampledLabels": OutMeta((n, lab.shape[1]), "int64"),
            "LogitsDim": OutMeta(x.shape, x.dtype), "LabelsDim": OutMeta(lab.shape, "int64")}


def _unique_log_uniform(classes, num_true_labels, num_samples, seed):
    """Paddle's SampleWithProb (uniq): num_samples distinct log-uniform classes shared by the batch, and the
    number of draws it took (Paddle adjusts every probability by it: 1 - (1 - p) ** tries)."""
    sampler = _Sampler(1, classes, seed)
    seen, order, tries = set(), [], 0
    while len(order) < num_samples:
        draw = sampler.sample((max(2 * (num_samples - len(order)), 8),)).tolist()
        for v in draw:
            tries += 1
            if v not in seen:
                seen.add(v)
                order.append(v)
                if len(order) == num_samples:
                    break
    return sampler, torch.tensor(order, dtype=torch.long), tries


@defop("sample_logits", inputs=("Logits", "Labels", "CustomizedSamples", "CustomizedProbabilities"),
       outputs=("Samples", "Probabilities", "SampledLogits", "SampledLabels", "LogitsDim", "LabelsDim"),
       infer_shape=_sl_shape, no_grad=("Labels", "CustomizedSamples", "CustomizedProbabilities"), host="data")
def sample_logits(op, ctx):
    custom = bool(attr(op, "use_customized_samples", False))
    remove_hits, num_samples = bool(attr(op, "remove_accidental_hits", True)), int(attr(op, "num_samples"))
    seed = attr(op, "seed", 0)

    def k(logits, labels, c_samples, c_probs):
        n, classes = logits.shape
        labels = labels.reshape(n, -1).long()
        t = labels.shape[1]
        if custom:
            if c_samples is None or c_probs is None:
                raise ValueError("sampled_softmax_with_cross_entropy: use_customized_samples needs "
                                 "customized_samples and customized_probabilities")
            samples, probs = c_samples.long(), c_probs
            if samples.shape[1] != t + num_samples:
                raise ValueError("sampled_softmax_with_cross_entropy: customized_samples %s has %d columns, "
                                 "need num_true + num_samples = %d" % (op.input("CustomizedSamples")[0],
                                                                      samples.shape[1], t + num_samples))
        else:
            if num_samples >= classes:
                raise ValueError("sample_logits: num_samples=%d must be less than the %d classes"
                                 % (num_samples, classes))
            sampler, neg, tries = _unique_log_uniform(classes, t, num_samples, seed)
            samples = torch.cat([labels, neg.to(labels.device).expand(n, num_samples)], 1)
            p = sampler.probability(samples)
            probs = (-torch.expm1(tries * torch.log1p(-p))).to(logits.dtype)
        sampled = logits.gather(1, samples) - torch.log(probs)
        if remove_hits:
            hit = (samples[:, t:].unsqueeze(2) == labels.unsqueeze(1)).any(2)
            sampled = torch.cat([sampled[:, :t], sampled[:, t:] - hit.to(sampled.dtype) * 1e20], 1)
        lab = torch.arange(t, device=logits.device).expand(n, t)
        # LogitsDim/LabelsDim only carry shapes (Paddle's grad op reads their dims)
        return (samples, probs, sampled, lab, logits.new_zeros(logits.shape),
                torch.zeros(labels.shape, dtype=torch.long, device=labels.device))
    return k
