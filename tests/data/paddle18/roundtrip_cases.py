"""Three models trained a few steps with Adam and saved in every Paddle 1.8 file format, then loaded back
from each format to predict and to continue training. Run the same way by Paddle 1.8.5 and by this package
(`fluid` is passed in), so the files move between them in both directions:

- make_roundtrip.py (Paddle 1.8.5, outside CI) trains, saves to tests/data/paddle18/roundtrip/<model>/ and
  records what Paddle reads back from its own files; tests/unit/test_roundtrip_paddle18.py reads them here.
- tests/dist/test_paddle18_roundtrip.py saves here and has Paddle 1.8.5 read the files
  (tests/dist/scripts/paddle18_roundtrip.py).

Formats: `persistables/` (save_persistables, one file per variable), `combined/params` (save_params with
filename=), `combined/persistables` (save_persistables with filename=), `inference/` (save_inference_model),
`state.pdparams` / `state.pdopt` (fluid.save). Python 3.7 compatible.
"""

import os

import numpy as np

MODELS = ["mlp", "conv", "ctr"]
TRAIN_STEPS = 3           # steps before saving (so the files hold Adam moments and beta pows)
MORE_STEPS = 3            # steps after loading
PREDICT_FORMATS = ["persistables", "combined_params", "combined_persistables", "inference", "state"]
TRAIN_FORMATS = ["persistables", "combined_persistables", "state"]     # the ones holding optimizer state


def _mlp(fluid):
    L = fluid.layers
    x = L.data(name="x", shape=[6], dtype="float32")
    y = L.data(name="y", shape=[1], dtype="int64")
    h = L.fc(input=x, size=8, act="relu")
    h = L.fc(input=h, size=5, act="tanh")
    return ["x", "y"], ["x"], L.fc(input=h, size=3, act="softmax"), y


def _conv(fluid):
    L = fluid.layers
    img = L.data(name="img", shape=[2, 6, 6], dtype="float32")
    y = L.data(name="y", shape=[1], dtype="int64")
    c = L.conv2d(img, num_filters=3, filter_size=3, padding=1)
    c = L.batch_norm(c, act="relu")
    c = L.pool2d(c, pool_size=2, pool_stride=2, pool_type="max")
    return ["img", "y"], ["img"], L.fc(input=c, size=3, act="softmax"), y


def _ctr(fluid):
    # a LoD slot of ids (sparse embedding + sum pooling) and a dense slot
    L = fluid.layers
    ids = L.data(name="ids", shape=[1], dtype="int64", lod_level=1)
    dense = L.data(name="dense", shape=[3], dtype="float32")
    y = L.data(name="y", shape=[1], dtype="int64")
    emb = L.embedding(ids, size=[20, 4], is_sparse=True)
    pooled = L.sequence_pool(emb, "sum")
    h = L.fc(input=L.concat([pooled, dense], axis=1), size=5, act="relu")
    return ["ids", "dense", "y"], ["ids", "dense"], L.fc(input=h, size=2, act="softmax"), y


BUILDERS = {"mlp": _mlp, "conv": _conv, "ctr": _ctr}
CLASSES = {"mlp": 3, "conv": 3, "ctr": 2}


class Model(object):
    def __init__(self, fluid, name):
        self.fluid, self.name = fluid, name
        self.main, self.startup = fluid.Program(), fluid.Program()
        self.main.random_seed = self.startup.random_seed = 7
        with fluid.program_guard(self.main, self.startup), fluid.unique_name.guard():
            self.train_feeds, self.feeds, self.pred, label = BUILDERS[name](fluid)
            self.test = self.main.clone(for_test=True)      # before the loss: predicting needs no label
            self.loss = fluid.layers.mean(fluid.layers.cross_entropy(input=self.pred, label=label))
            fluid.optimizer.Adam(learning_rate=0.02).minimize(self.loss)
        self.exe = fluid.Executor(fluid.CPUPlace())


def batch(fluid, name, step):
    """The feed of training step `step` (0-based); step -1 is the batch predictions are made on."""
    rng = np.random.RandomState(100 + step)       # the legacy generator: same numbers under any numpy
    n = 4
    feed = {"y": np.floor(rng.rand(n, 1) * CLASSES[name]).astype("int64")}
    if name == "mlp":
        feed["x"] = rng.rand(n, 6).astype("float32") - 0.5
    elif name == "conv":
        feed["img"] = rng.rand(n, 2, 6, 6).astype("float32") - 0.5
    else:
        lens = [int(v) for v in np.floor(rng.rand(n) * 3) + 1]
        ids = np.floor(rng.rand(sum(lens), 1) * 20).astype("int64")
        feed["ids"] = fluid.create_lod_tensor(ids, [lens], fluid.CPUPlace())
        feed["dense"] = rng.rand(n, 3).astype("float32")
    return feed


def _losses(m, first, count):
    out = []
    for s in range(first, first + count):
        f = batch(m.fluid, m.name, s)
        out.append(float(np.array(m.exe.run(m.main, feed={k: f[k] for k in m.train_feeds},
                                            fetch_list=[m.loss])[0]).ravel()[0]))
    return out


def _predict(m, program, feeds, fetches):
    f = batch(m.fluid, m.name, -1)
    return [np.array(a) for a in m.exe.run(program, feed={k: f[k] for k in feeds}, fetch_list=fetches)]


def train_and_save(fluid, name, out):
    """Train TRAIN_STEPS steps, save every format under `out`; returns the losses, the prediction made
    right after training, and the losses of MORE_STEPS more steps without saving (straight on)."""
    m = Model(fluid, name)
    io = fluid.io
    with fluid.scope_guard(fluid.Scope()):
        m.exe.run(m.startup)
        losses = _losses(m, 0, TRAIN_STEPS)
        pred = _predict(m, m.test, m.feeds, [m.pred])[0]
        io.save_persistables(m.exe, os.path.join(out, "persistables"), m.main)
        io.save_params(m.exe, os.path.join(out, "combined"), m.main, filename="params")
        io.save_persistables(m.exe, os.path.join(out, "combined"), m.main, filename="persistables")
        io.save_inference_model(os.path.join(out, "inference"), m.feeds, [m.pred], m.exe, main_program=m.main)
        fluid.save(m.main, os.path.join(out, "state"))
        straight = _losses(m, TRAIN_STEPS, MORE_STEPS)
    return {"train_losses": losses, "pred": pred, "straight_losses": straight}


def _load(m, fmt, d):
    io, exe = m.fluid.io, m.exe
    if fmt == "persistables":
        io.load_persistables(exe, os.path.join(d, "persistables"), m.main)
    elif fmt == "combined_params":
        io.load_params(exe, os.path.join(d, "combined"), m.main, filename="params")
    elif fmt == "combined_persistables":
        io.load_persistables(exe, os.path.join(d, "combined"), m.main, filename="persistables")
    elif fmt == "state":
        m.fluid.load(m.main, os.path.join(d, "state"), exe)
    else:
        raise ValueError(fmt)


def read_back(fluid, name, d):
    """Load each format from `d` into a fresh scope: pred_<format> (the prediction) and loss_<format> (the
    losses of MORE_STEPS training steps continuing from the loaded state), as a dict of arrays."""
    out = {}
    m = Model(fluid, name)
    for fmt in PREDICT_FORMATS:
        with fluid.scope_guard(fluid.Scope()):
            if fmt == "inference":
                prog, feeds, fetches = fluid.io.load_inference_model(os.path.join(d, "inference"), m.exe)
                out["pred_" + fmt] = _predict(m, prog, feeds, fetches)[0]
            else:
                m.exe.run(m.startup)
                _load(m, fmt, d)
                out["pred_" + fmt] = _predict(m, m.test, m.feeds, [m.pred])[0]
                if fmt in TRAIN_FORMATS:
                    out["loss_" + fmt] = np.array(_losses(m, TRAIN_STEPS, MORE_STEPS))
    return out
