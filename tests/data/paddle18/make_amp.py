"""Records fluid.contrib.mixed_precision.decorate from real PaddlePaddle 1.8.5 (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_amp.py

Writes amp.json beside this script:
- "programs": the main program of an MLP and of a conv net after decorate(...).minimize(loss), with the
  default lists and with custom lists: per block, each op's type, role, inputs and outputs, and the dtype
  of every variable of block 0 (where the casts go, which variables become float16);
- "fp16_cpu": what happens when Paddle 1.8.5's CPU build runs the float16 MLP (its error, if any);
- "runs": dynamic loss scaling on the CPU (float32 compute: the white ops moved to the black list, since
  Paddle 1.8.5's CPU build has no float16 `mul`), with gradients that overflow at chosen steps (a huge
  scaling that grows into overflow, NaN/Inf fed at chosen steps): per step the loss, the scaled loss, the
  loss scaling, the good/bad step counters after the step and the parameters after the step.
tests/unit/test_amp_paddle18.py builds the very same programs with paddle_compat (the functions below take
the fluid module). Python 3.7 compatible.
"""

import json
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.RandomState(22)
N = 8
X = rng.uniform(-1, 1, (N, 4)).astype("float32")
Y = rng.uniform(-1, 1, (N, 1)).astype("float32")
W1 = rng.uniform(-0.8, 0.8, (4, 3)).astype("float32")
B1 = rng.uniform(-0.1, 0.1, (3,)).astype("float32")
W2 = rng.uniform(-0.8, 0.8, (3, 1)).astype("float32")
B2 = np.array([0.05], dtype="float32")
PARAMS = ["w1", "b1", "w2", "b2"]
STEPS = 24
# what is fed at each step: "ok" (X, Y), "nan" (Y with one NaN), "inf" (X with one +Inf). (The NaN goes into y:
# one in x would pass Paddle's CPU tanh, which is Eigen's and answers +-1 for NaN, while torch's gives NaN.)
FEEDS = ["ok"] * 5 + ["nan", "nan", "nan", "ok"] + ["inf"] + ["ok"] * 6 + ["nan"] * 4 + ["ok"] * 4


def feed(kind):
    x, y = X.copy(), Y.copy()
    if kind == "nan":
        y[1, 0] = np.nan
    elif kind == "inf":
        x[3, 0] = np.inf
    return {"x": x, "y": y}


# name -> (decorate keyword arguments, optimizer, loss factor); the white ops are moved to the black list
RUNS = {
    # the loss is scaled by 4, so a scaling of 2**126 overflows float32 in the backward pass (2**125 does not);
    # it grows after 2 good steps, halves on a bad step that follows a bad one
    "sawtooth_sgd": (dict(init_loss_scaling=2.0 ** 126, incr_every_n_steps=2, decr_every_n_nan_or_inf=1,
                          incr_ratio=2.0, decr_ratio=0.5), "sgd", 4.0),
    # the same with Momentum: a bad step's zeroed gradients still go through the optimizer
    "sawtooth_momentum": (dict(init_loss_scaling=2.0 ** 126, incr_every_n_steps=2, decr_every_n_nan_or_inf=1,
                               incr_ratio=2.0, decr_ratio=0.5), "momentum", 4.0),
    # the defaults but incr/decr counts small: shrinks only after 2 bad steps in a row
    "counters": (dict(init_loss_scaling=1024.0, incr_every_n_steps=3, decr_every_n_nan_or_inf=2), "sgd", 1.0),
    # the scaling never drops below 1
    "floor_at_one": (dict(init_loss_scaling=1.5, incr_every_n_steps=50, decr_every_n_nan_or_inf=1,
                          decr_ratio=0.5), "sgd", 1.0),
    # growth that would overflow the scaling itself is not applied (the counters still reset)
    "incr_overflow": (dict(init_loss_scaling=2.0 ** 126, incr_every_n_steps=1, decr_every_n_nan_or_inf=3,
                           incr_ratio=8.0), "sgd", 1e-30),
    # static scaling: nothing is checked, a NaN step reaches the optimizer
    "static": (dict(init_loss_scaling=256.0, use_dynamic_loss_scaling=False), "sgd", 1.0),
}


def build_regression(fluid, loss_factor=1.0):
    init = fluid.initializer.NumpyArrayInitializer
    x = fluid.layers.data("x", shape=[N, 4], dtype="float32", append_batch_size=False)
    y = fluid.layers.data("y", shape=[N, 1], dtype="float32", append_batch_size=False)
    h = fluid.layers.fc(x, 3, act="tanh", param_attr=fluid.ParamAttr("w1", initializer=init(W1)),
                        bias_attr=fluid.ParamAttr("b1", initializer=init(B1)))
    pred = fluid.layers.fc(h, 1, param_attr=fluid.ParamAttr("w2", initializer=init(W2)),
                           bias_attr=fluid.ParamAttr("b2", initializer=init(B2)))
    loss = fluid.layers.mean(fluid.layers.square(pred - y))
    if loss_factor != 1.0:
        loss = fluid.layers.scale(loss, scale=loss_factor)
    return loss


def make_optimizer(fluid, kind):
    return fluid.optimizer.SGD(0.1) if kind == "sgd" else fluid.optimizer.Momentum(0.1, 0.9)


def build_run(fluid, mp, name):
    """(main, startup, loss, decorated optimizer) of run `name`."""
    kw, opt_kind, factor = RUNS[name]
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        loss = build_regression(fluid, factor)
        lists = mp.AutoMixedPrecisionLists(custom_black_list={"mul", "matmul", "conv2d"})
        opt = mp.decorate(make_optimizer(fluid, opt_kind), amp_lists=lists, **kw)
        opt.minimize(loss)
    return main, startup, loss, opt


def train_run(fluid, mp, name, exe, scope):
    main, startup, loss, opt = build_run(fluid, mp, name)
    fetch = [loss, opt.get_scaled_loss(), opt.get_loss_scaling()]
    dynamic = RUNS[name][0].get("use_dynamic_loss_scaling", True)
    if dynamic:
        fetch += [opt._num_good_steps, opt._num_bad_steps]
    rec = {k: [] for k in ("loss", "scaled_loss", "loss_scaling", "good", "bad", "params")}
    exe.run(startup, scope=scope)
    for kind in FEEDS[:STEPS]:
        res = exe.run(main, feed=feed(kind), fetch_list=fetch, scope=scope)
        vals = [float(np.array(r).ravel()[0]) for r in res]
        rec["loss"].append(vals[0])
        rec["scaled_loss"].append(vals[1])
        rec["loss_scaling"].append(vals[2])
        if dynamic:
            rec["good"].append(int(vals[3]))
            rec["bad"].append(int(vals[4]))
        rec["params"].append({p: np.array(scope.find_var(p).get_tensor()).tolist() for p in PARAMS})
    return rec


def build_mlp(fluid):
    x = fluid.layers.data("img", shape=[16], dtype="float32")
    label = fluid.layers.data("label", shape=[1], dtype="int64")
    h = fluid.layers.fc(x, 32, act="relu")
    h = fluid.layers.fc(h, 32, act="relu")
    logits = fluid.layers.fc(h, 10)
    return fluid.layers.mean(fluid.layers.softmax_with_cross_entropy(logits, label))


def build_conv(fluid):
    x = fluid.layers.data("img", shape=[3, 8, 8], dtype="float32")
    label = fluid.layers.data("label", shape=[1], dtype="int64")
    c = fluid.layers.conv2d(x, 4, 3, padding=1, bias_attr=False)
    b = fluid.layers.batch_norm(c, act="relu")
    p = fluid.layers.pool2d(b, 2, pool_stride=2)
    d = fluid.layers.dropout(p, 0.25)
    pred = fluid.layers.fc(d, 10, act="softmax")
    return fluid.layers.mean(fluid.layers.cross_entropy(pred, label))


# name -> (network, AutoMixedPrecisionLists keyword arguments, optimizer)
PROGRAMS = {
    "mlp": (build_mlp, {}, "momentum"),
    "mlp_custom": (build_mlp, dict(custom_white_list={"tanh", "softmax_with_cross_entropy"},
                                   custom_black_list={"relu"}), "sgd"),
    "conv": (build_conv, {}, "momentum"),
    "conv_custom": (build_conv, dict(custom_black_list={"conv2d"}, custom_white_list={"pool2d"}), "momentum"),
}


def build_program(fluid, mp, name, **decorate_kw):
    net, list_kw, opt_kind = PROGRAMS[name]
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        loss = net(fluid)
        opt = mp.decorate(make_optimizer(fluid, opt_kind), amp_lists=mp.AutoMixedPrecisionLists(**list_kw),
                          init_loss_scaling=128.0, incr_every_n_steps=3, **decorate_kw)
        opt.minimize(loss)
    return main, startup, loss, opt


def describe(main):
    blocks = []
    for b in main.blocks:
        blocks.append({"parent": b.parent_idx, "ops": [
            {"type": op.type, "role": int(op.attr("op_role")),
             "inputs": {k: op.input(k) for k in op.input_names},
             "outputs": {k: op.output(k) for k in op.output_names}} for op in b.ops]})
    dtypes = {n: str(v.dtype).split(".")[-1] for n, v in main.global_block().vars.items()
              if v.type == fluid_core().VarDesc.VarType.LOD_TENSOR}
    return {"blocks": blocks, "dtypes": dtypes}


def fluid_core():
    import paddle.fluid.core as core
    return core


def main():
    import paddle.fluid as fluid
    from paddle.fluid.contrib import mixed_precision as mp
    out = {"programs": {}, "runs": {}}
    for name in PROGRAMS:
        out["programs"][name] = describe(build_program(fluid, mp, name)[0])
    exe = fluid.Executor(fluid.CPUPlace())
    # Paddle 1.8.5's CPU build with the float16 rewrite in place
    main_p, startup, loss, _ = build_program(fluid, mp, "mlp")
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    try:
        r = exe.run(main_p, feed={"img": rng.uniform(-1, 1, (4, 16)).astype("float32"),
                                  "label": np.arange(4).reshape(4, 1).astype("int64")},
                    fetch_list=[loss], scope=scope)
        out["fp16_cpu"] = {"ran": True, "loss": float(np.array(r[0]).ravel()[0])}
    except Exception as e:      # noqa: BLE001 - the recorded answer is the error itself
        msg = str(e)
        first = [ln for ln in msg.splitlines() if "Error:" in ln or "kernel" in ln]
        out["fp16_cpu"] = {"ran": False, "error": (first[0] if first else msg[-300:]).strip()[:300]}
    for name in RUNS:
        out["runs"][name] = train_run(fluid, mp, name, exe, fluid.Scope())
    with open(os.path.join(HERE, "amp.json"), "w") as f:
        json.dump(out, f, sort_keys=True)
    print("fp16_cpu:", out["fp16_cpu"])
    for name, rec in out["runs"].items():
        print(name, rec["loss_scaling"], rec["good"], rec["bad"])


if __name__ == "__main__":
    main()
