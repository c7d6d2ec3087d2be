"""Which gradients an autograd region gives a LoD, and whose.

Paddle 1.8.5 runs each grad op, whose InferShape may share a LoD into an input gradient (ShareLoD): from a
forward input (sequence_pool_grad: X's), or from an output gradient (relu_grad: Out@GRAD's), op by op; the
forward op's declaration says which (OpDef.grad_lod). A region computes its gradients with one autograd call,
so this replays the grad ops it covers on LoDs alone. A gradient no declaration reaches carries none: a
fetch with return_numpy=True raises on a LoD, so sharing one Paddle does not would break a script.
"""

from ...ops import find

GRAD = "@GRAD"


def region_lod_shares(block, region, has_lod):
    """((gradient name, name whose LoD it takes), ...) for the region's wanted gradients that carry a LoD;
    has_lod: the names holding a LoD before the region."""
    src = {}

    def lod_of(name):
        if name in src:
            return src[name]
        return name if name in has_lod else None

    for i in region.op_idx:
        op = block.ops[i]
        written = {}
        if op.type.endswith("_grad"):
            d = find(op.type[:-len("_grad")])
            for slot, source, when in (d.grad_lod if d is not None else ()):
                if when is not None and not any(lod_of(n) for n in op.inputs.get(when, [])):
                    continue
                outs, ins = op.outputs.get(slot + GRAD, []), op.inputs.get(source, [])
                for k, o in enumerate(outs):
                    s = ins[k] if len(ins) == len(outs) else ins[0] if len(ins) == 1 else _own(o, ins)
                    written[o] = lod_of(s) if s is not None else None
        elif op.type == "sum":
            # the sum of a gradient's parts keeps its first part's LoD (Paddle's sum kernel)
            first = op.inputs.get("X", [])
            for o in op.outputs.get("Out", []):
                written[o] = lod_of(first[0]) if first else None
        for o in op.output_arg_names:
            if written.get(o) is not None:
                src[o] = written[o]
            else:
                src.pop(o, None)
    return tuple((w, src[w]) for w in region.wanted if src.get(w) is not None)


def _own(grad, names):
    """The forward name among `names` whose gradient `grad` is (a grad op listing gradients of only some
    of a slot's inputs: while_grad)."""
    base = grad.split(GRAD)[0]
    return base if base in names else None
