"""dynamic_lstm text classification train step: ours vs the same model hand-written with torch.nn.LSTM on
packed sequences, in one process, alternating, one thread; and Paddle 1.8.5 on the same batches in a
subprocess when /work/p18/bin/python (or $PADDLE18_PYTHON) exists.

Model: embedding(10000, 128) -> fc(4*128) -> dynamic_lstm(hidden 128, no peepholes) -> sequence_pool(max)
-> fc(2, softmax) -> cross_entropy -> mean, SGD; batch 32, sequence lengths 10-100. The torch model is the
same function (nn.LSTM's input projection is the fc; its weights are ours with the gates reordered), checked
by equal first losses before timing. Target: ours <= 1.2x torch, and faster than Paddle 1.8.5.

    python benchmarks/dynamic_lstm_text.py [--rounds 7] [--steps 10]
"""

import argparse
import os
import sys
import tempfile

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import paddle_compat as fluid  # noqa: E402
from bench_util import Paddle18Process, median, timed  # noqa: E402

torch.set_num_threads(1)
VOCAB, EMB, HID, CLASSES, BATCH, LR = 10000, 128, 128, 2, 32, 0.05


def init_weights(rng):
    u = lambda *s: rng.uniform(-0.1, 0.1, s).astype(np.float32)   # noqa: E731
    return {"emb": u(VOCAB, EMB), "fc1_w": u(EMB, 4 * HID), "fc1_b": u(4 * HID), "lstm_w": u(HID, 4 * HID),
            "lstm_b": u(1, 4 * HID), "fc2_w": u(HID, CLASSES), "fc2_b": u(CLASSES)}


def make_batches(rng, n):
    out = []
    for _ in range(n):
        lens = rng.randint(10, 101, BATCH)
        out.append((rng.randint(0, VOCAB, (int(lens.sum()), 1)).astype(np.int64), lens.astype(np.int64),
                    rng.randint(0, CLASSES, (BATCH, 1)).astype(np.int64)))
    return out


# The Fluid program, written once for ours and for Paddle 1.8.5 (the subprocess imports this file's text).
FLUID_MODEL = '''
def build(fluid, W):
    init = lambda k: fluid.ParamAttr(initializer=fluid.initializer.NumpyArrayInitializer(W[k]))
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        words = fluid.layers.data(name="words", shape=[1], dtype="int64", lod_level=1)
        label = fluid.layers.data(name="label", shape=[1], dtype="int64")
        emb = fluid.layers.embedding(words, size=[W["emb"].shape[0], W["emb"].shape[1]], param_attr=init("emb"))
        hid = W["lstm_w"].shape[0]
        proj = fluid.layers.fc(emb, size=4 * hid, param_attr=init("fc1_w"), bias_attr=init("fc1_b"))
        h, _ = fluid.layers.dynamic_lstm(proj, size=4 * hid, use_peepholes=False, param_attr=init("lstm_w"),
                                         bias_attr=init("lstm_b"))
        pooled = fluid.layers.sequence_pool(h, "max")
        pred = fluid.layers.fc(pooled, size=W["fc2_w"].shape[1], act="softmax", param_attr=init("fc2_w"),
                               bias_attr=init("fc2_b"))
        loss = fluid.layers.mean(fluid.layers.cross_entropy(pred, label))
        fluid.optimizer.SGD(learning_rate=LR).minimize(loss)
    return main, start, loss


def stepper(fluid, W):
    main, start, loss = build(fluid, W)
    place = fluid.CPUPlace()
    exe = fluid.Executor(place)
    scope = fluid.Scope()
    exe.run(start, scope=scope)

    def step(ids, lens, y):
        t = fluid.create_lod_tensor(ids, [lens.tolist()], place)
        return exe.run(main, feed={"words": t, "label": y}, fetch_list=[loss], scope=scope)[0]
    return step
'''
exec(FLUID_MODEL)   # defines build() and stepper() here


def make_torch(W):
    """What a torch user would write: nn.Embedding, nn.LSTM on a PackedSequence, max over valid steps."""
    emb = torch.nn.Embedding(VOCAB, EMB)
    lstm = torch.nn.LSTM(EMB, HID)
    head = torch.nn.Linear(HID, CLASSES)
    # Paddle's gate columns are (candidate, input, forget, output); torch's rows are (input, forget, cell, out)
    order = np.concatenate([np.arange(HID, 2 * HID), np.arange(2 * HID, 3 * HID), np.arange(HID),
                            np.arange(3 * HID, 4 * HID)])
    with torch.no_grad():
        emb.weight.copy_(torch.from_numpy(W["emb"]))
        lstm.weight_ih_l0.copy_(torch.from_numpy(W["fc1_w"].T[order]))
        lstm.bias_ih_l0.copy_(torch.from_numpy(W["fc1_b"][order]))
        lstm.weight_hh_l0.copy_(torch.from_numpy(W["lstm_w"].T[order]))
        lstm.bias_hh_l0.copy_(torch.from_numpy(W["lstm_b"].reshape(-1)[order]))
        head.weight.copy_(torch.from_numpy(W["fc2_w"].T))
        head.bias.copy_(torch.from_numpy(W["fc2_b"]))
    params = list(emb.parameters()) + list(lstm.parameters()) + list(head.parameters())
    opt = torch.optim.SGD(params, lr=LR)

    def step(ids, lens, y):
        seqs = torch.split(emb(torch.from_numpy(ids).view(-1)), lens.tolist())
        packed = torch.nn.utils.rnn.pack_sequence(seqs, enforce_sorted=False)
        out, _ = lstm(packed)
        padded, _ = torch.nn.utils.rnn.pad_packed_sequence(out, padding_value=float("-inf"))
        pooled = padded.max(0)[0]
        prob = torch.softmax(head(pooled), 1)
        loss = -torch.log(prob.gather(1, torch.from_numpy(y))).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss.detach().numpy().reshape(1)
    return step


PADDLE18_MAIN = '''
import sys, time
import numpy as np
import paddle.fluid as fluid
LR = %(lr)r
d = np.load(sys.argv[1])
W = {k[2:]: d[k] for k in d.files if k.startswith("w_")}
nb = int(d["nbatch"])
batches = [(d["ids%%d" %% i], d["lens%%d" %% i], d["y%%d" %% i]) for i in range(nb)]
%(model)s
step = stepper(fluid, W)
print("FIRST %%r" %% float(np.array(step(*batches[0])).ravel()[0]), flush=True)
for line in sys.stdin:                 # one line per timed round: the number of steps
    steps = int(line)
    t0 = time.perf_counter()
    for i in range(steps):
        step(*batches[i %% nb])
    print("TIME %%r" %% (time.perf_counter() - t0), flush=True)
'''


def paddle18(python, W, batches, tmp):
    """Paddle 1.8.5 in a subprocess on the same weights and batches (alternating with ours and torch's: a
    shared machine's drift hits all three)."""
    arrays = {"w_" + k: v for k, v in W.items()}
    arrays["nbatch"] = np.array(len(batches))
    for i, (ids, lens, y) in enumerate(batches):
        arrays["ids%d" % i], arrays["lens%d" % i], arrays["y%d" % i] = ids, lens, y
    np.savez(os.path.join(tmp, "data.npz"), **arrays)
    script = os.path.join(tmp, "p18_lstm.py")
    with open(script, "w") as fh:
        fh.write(PADDLE18_MAIN % {"lr": LR, "model": FLUID_MODEL})
    return Paddle18Process(python, script, tmp, ["data.npz"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--paddle18", default=os.environ.get("PADDLE18_PYTHON", "/work/p18/bin/python"))
    args = ap.parse_args()
    rng = np.random.RandomState(0)
    W = init_weights(rng)
    batches = make_batches(rng, 8)
    ours, ref = stepper(fluid, W), make_torch(W)
    a, b = ours(*batches[0]), ref(*batches[0])
    assert abs(float(a[0]) - float(b[0])) < 1e-4 * max(1.0, abs(float(b[0]))), (a, b)
    ours, ref = stepper(fluid, W), make_torch(W)        # fresh weights for timing
    with tempfile.TemporaryDirectory() as tmp:
        p18 = paddle18(args.paddle18, W, batches, tmp) if os.path.exists(args.paddle18) else None
        try:
            if p18 is not None:
                assert abs(p18.first - float(a[0])) < 1e-4 * max(1.0, abs(p18.first)), ("first loss", p18.first, a)
                p18(5)
            timed(ours, batches, 5)
            timed(ref, batches, 5)
            t_ours, t_ref, t_p18 = [], [], []
            for _ in range(args.rounds):
                t_ours.append(timed(ours, batches, args.steps))
                t_ref.append(timed(ref, batches, args.steps))
                if p18 is not None:
                    t_p18.append(p18(args.steps))
        finally:
            if p18 is not None:
                p18.close()
    mo, mr = median(t_ours) / args.steps, median(t_ref) / args.steps
    ratio = median([o / r for o, r in zip(t_ours, t_ref)])
    line = "dynamic_lstm text, batch %d, len 10-100, hidden %d: ours %.1f ms  torch %.1f ms  ratio %.3f " \
           "(target <= 1.20)" % (BATCH, HID, mo * 1e3, mr * 1e3, ratio)
    ok = ratio <= 1.2
    if t_p18:
        mp = median(t_p18) / args.steps
        rp = median([o / p for o, p in zip(t_ours, t_p18)])
        line += "  paddle 1.8.5 %.1f ms  ours / paddle %.3f (target < 1)" % (mp * 1e3, rp)
        ok &= rp < 1.0
    print(line)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
