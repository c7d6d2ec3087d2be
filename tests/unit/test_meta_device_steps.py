"""Device steps checked without a GPU (tests/meta_device.py): CUDAPlace(0) lowers to torch's meta device, where
every kernel takes its device branch and torch refuses what a GPU step must not do -- read a value back on the
host (a sync; inside a CUDA-graph capture an error) or mix a CPU tensor into device work -- and the watch sees
a CPU tensor uploaded mid-step (a capture cannot hold it). Every family and benchmark model the capture
analysis calls safe must run so, as a capture would; the unsafe ones must be caught (the probe is live)."""

import os
import sys

import numpy as np
import pytest
import torch

import paddle_compat as fluid
from paddle_compat.backends.lowering.plan import plan_block
from meta_device import MetaDevice, torch_ops

import lowering_families as F
from test_capture_check import SAFE, UNSAFE

L = fluid.layers
BENCH = os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks")
if BENCH not in sys.path:
    sys.path.append(BENCH)      # conv_models.py (ResNet-20), step_models.py (its hand-written torch twin)


def _steps(dev, main, startup, feeds, n=3):
    scope = dev.startup(startup)
    exe = fluid.Executor(fluid.CUDAPlace(0))
    recs = [dev.step(exe, main, feeds[k % len(feeds)], scope) for k in range(n)]
    return scope, recs


@pytest.mark.parametrize("name", sorted(SAFE))
def test_capture_safe_families_run_on_the_device_without_host_reads_or_uploads(name):
    main, startup, loss, feeds = F.build(name)
    with MetaDevice() as dev:
        scope, recs = _steps(dev, main, startup, [F.exe_feed(f) for f in feeds])
    assert all(r.uploads == [] for r in recs), [r.uploads for r in recs]
    assert recs[-1].kernels > 10
    held = [scope.find_var(n).value for n in scope.local_var_names()]
    held = [t for t in held if isinstance(t, torch.Tensor)]
    assert held and all(t.device.type == "meta" for t in held)      # the state stayed on the device


@pytest.mark.parametrize("name", sorted(UNSAFE))
def test_the_unsafe_families_read_the_host_and_the_probe_sees_it(name):
    main, startup, loss, feeds = F.build(name)
    with MetaDevice() as dev, pytest.raises(Exception) as err:
        _steps(dev, main, startup, [F.exe_feed(f) for f in feeds])
    assert "meta" in str(err.value), str(err.value)[:500]


def test_the_watch_sees_an_upload_and_device_mixing_fails():
    # what a kernel must not do mid-step: build a tensor from host data (a capture cannot hold the copy) ...
    x = torch.ones(3, device="meta")
    rec = torch_ops(lambda: x + torch.tensor([1.0, 2.0, 3.0]).to(x.device))
    assert rec.uploads == [("_to_copy", (3,))]
    assert torch_ops(lambda: x + torch.tensor(2.0)).uploads == []     # (a 0-dim CPU scalar is an argument)
    # ... or meet a CPU tensor with a device one
    with pytest.raises(RuntimeError, match="device"):
        x + torch.ones(3)


def _resnet(amp=None):
    import conv_models
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        img = L.data(name="img", shape=[3, 32, 32], dtype="float32")
        label = L.data(name="label", shape=[1], dtype="int64")
        loss = L.mean(L.cross_entropy(input=conv_models.resnet_cifar10(fluid, img, 20), label=label))
        opt = fluid.optimizer.Momentum(learning_rate=L.piecewise_decay([2], [0.1, 0.01]), momentum=0.9)
        if amp:
            opt = fluid.contrib.mixed_precision.decorate(opt, dtype=amp)
        opt.minimize(loss)
    r = np.random.RandomState(0)
    feed = {"img": r.rand(8, 3, 32, 32).astype("float32"), "label": r.randint(0, 10, (8, 1)).astype("int64")}
    return main, startup, loss, [feed]


def _embedding_mlp():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        ids = L.data("ids", [4], dtype="int64")
        y = L.data("y", [1], dtype="int64")
        emb = fluid.embedding(ids, [20, 8], param_attr=fluid.ParamAttr("emb"))   # (lookup_table_v2: ids of any shape)
        p = L.fc(L.reshape(emb, [-1, 32]), 3, act="softmax")
        loss = L.mean(L.cross_entropy(p, y))
        fluid.optimizer.Adam(0.01).minimize(loss)
    r = np.random.RandomState(1)
    return main, startup, loss, [{"ids": r.randint(0, 20, (6, 4)).astype("int64"),
                                  "y": r.randint(0, 3, (6, 1)).astype("int64")}]


@pytest.mark.parametrize("model", ["resnet20", "resnet20_amp_float16", "resnet20_amp_bfloat16", "embedding"])
def test_models_are_capture_safe_and_run_so_on_the_device(model):
    # ResNet-20 with a piecewise_decay Switch (predicated), through contrib.mixed_precision (its loss-scaling
    # check and update stay on the device), and a dense embedding (its ids checked on the host at the feed)
    main, startup, loss, feeds = _embedding_mlp() if model == "embedding" else \
        _resnet(model.split("_amp_")[1] if "_amp_" in model else None)
    scope = fluid.Scope()
    fluid.Executor(fluid.CPUPlace()).run(startup, scope=scope)
    assert plan_block(main, 0, scope, list(feeds[0]), [loss.name]).capture.safe
    with MetaDevice() as dev:
        _, recs = _steps(dev, main, startup, feeds)
    assert all(r.uploads == [] for r in recs)


def test_resnet20_launches_no_more_kernels_than_eager_torch_plus_its_batch_norm_updates():
    import step_models
    main, startup, loss, feeds = _resnet()
    with MetaDevice() as dev:
        _, recs = _steps(dev, main, startup, feeds)
    ours = recs[-1]
    model = step_models.TorchResNet20().to("meta")
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, foreach=True)   # (CUDA's default)
    x, y = torch.empty(8, 3, 32, 32, device="meta"), torch.zeros(8, dtype=torch.int64, device="meta")

    def step():
        out = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        out.backward()
        opt.step()
    ref = [torch_ops(step) for _ in range(3)][-1]
    for op in ("convolution", "convolution_backward", "native_batch_norm", "native_batch_norm_backward"):
        assert ours.ops[op] == ref.ops[op] == 21, op
    # Paddle's biased running variance costs each batch_norm three small [C] kernels more (zero_, mul_,
    # add_); the loss, the piecewise learning rate and Momentum's update cost a few more in all
    assert ours.kernels <= ref.kernels + 3 * 21 + 25, (ours.kernels, ref.kernels)


def test_an_id_outside_the_table_is_caught_on_the_host_before_the_upload():
    main, startup, loss, feeds = _embedding_mlp()
    bad = dict(feeds[0])
    bad["ids"] = bad["ids"].copy()
    bad["ids"][2, 1] = 25
    with MetaDevice() as dev:
        scope = dev.startup(startup)
        exe = fluid.Executor(fluid.CUDAPlace(0))
        dev.step(exe, main, feeds[0], scope)
        n = len(dev.steps)
        with pytest.raises(IndexError) as err:
            exe.run(main, feed=bad, fetch_list=[], scope=scope)
        assert len(dev.steps) == n      # the step did not start: nothing was updated
    msg = str(err.value)
    assert "lookup_table" in msg and "ids" in msg and "the table emb of 20 rows" in msg and "max 25" in msg, msg


# Single ops whose kernels could read the host: the capture verdict must agree with what the device step does.
def _r():
    return np.random.RandomState(0)


def _pred_label(classes=2):
    p = L.data("p", [classes], dtype="float32")
    y = L.data("y", [1], dtype="int64")
    return p, y, {"p": _r().rand(8, classes).astype("float32"), "y": _r().randint(0, classes, (8, 1)).astype("int64")}


def _auc(slide):
    p, y, feed = _pred_label()
    return L.auc(p, y, slide_steps=slide)[0], feed


def _seq_mask(maxlen):
    x = L.data("x", [1], dtype="int64")
    return L.sequence_mask(x, maxlen=maxlen), {"x": _r().randint(1, 5, (4, 1)).astype("int64")}


def _labels(fn, classes=5):
    y = L.data("y", [1], dtype="int64")
    return fn(y), {"y": _r().randint(0, classes, (8, 1)).astype("int64")}


def _mean_iou():
    p, y = L.data("p", [1], dtype="int64"), L.data("y", [1], dtype="int64")
    return L.mean_iou(p, y, 3)[0], {"p": _r().randint(0, 3, (8, 1)).astype("int64"),
                                    "y": _r().randint(0, 3, (8, 1)).astype("int64")}


def _accuracy():
    p, y, feed = _pred_label(5)
    return L.accuracy(L.softmax(p), y), feed


def _softmax_ce():
    p, y, feed = _pred_label(5)
    return L.mean(L.softmax_with_cross_entropy(p, y)), feed


def _dense(fn, shape=(2, 3)):
    x = L.data("x", list(shape), dtype="float32")
    return fn(x), {"x": _r().rand(4, *shape).astype("float32")}


OP_CASES = {
    "auc": (lambda: _auc(1), False), "auc_sliding": (lambda: _auc(3), False),
    "sequence_mask": (lambda: _seq_mask(None), False), "sequence_mask_maxlen": (lambda: _seq_mask(6), True),
    "one_hot": (lambda: _labels(lambda y: L.one_hot(y, 5)), True),
    "label_smooth": (lambda: _labels(lambda y: L.label_smooth(L.one_hot(y, 5), epsilon=0.1)), True),
    "mean_iou": (_mean_iou, False), "accuracy": (_accuracy, True), "softmax_ce": (_softmax_ce, True),
    "flatten": (lambda: _dense(lambda x: L.flatten(x, axis=2)), True),
    "topk_argmax": (lambda: _dense(lambda x: L.concat([L.cast(L.argmax(x, 2), "float32"),
                                                      L.reduce_sum(L.topk(x, 2)[0], dim=2)], axis=1)), True),
    "layer_norm": (lambda: _dense(lambda x: L.layer_norm(x)), True),
}


@pytest.mark.parametrize("name", sorted(OP_CASES))
def test_single_op_verdicts_agree_with_the_device_step(name):
    build, safe = OP_CASES[name]
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        out, feed = build()
    scope = fluid.Scope()
    fluid.Executor(fluid.CPUPlace()).run(startup, scope=scope)
    verdict = plan_block(main, 0, scope, list(feed), [out.name]).capture
    assert verdict.safe == safe, verdict.reason
    with MetaDevice() as dev:
        scope = dev.startup(startup)
        exe = fluid.Executor(fluid.CUDAPlace(0))
        if safe:
            recs = [dev.step(exe, main, feed, scope) for _ in range(2)]
            assert all(r.uploads == [] for r in recs)
        else:
            with pytest.raises(Exception, match="meta"):
                dev.step(exe, main, feed, scope)


def test_a_fed_label_outside_one_hot_depth_is_caught_on_the_host():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        out, feed = _labels(lambda y: L.one_hot(y, 5))
    with MetaDevice() as dev:
        scope = dev.startup(startup)
        exe = fluid.Executor(fluid.CUDAPlace(0))
        with pytest.raises(ValueError, match=r"one_hot: ids of y must be in \[0, 5\), got range \[0, 7\]"):
            exe.run(main, feed={"y": np.array([[0], [7]], "int64")}, fetch_list=[], scope=scope)
        assert dev.steps == []


def test_fed_ids_and_labels_are_not_read_back_in_an_eager_device_step():
    # outside a capture the kernels check indices with a sync, unless the feed checked them on the host
    def onehot_model():
        main, startup = fluid.Program(), fluid.Program()
        with fluid.program_guard(main, startup), fluid.unique_name.guard():
            x = L.data("x", [4], dtype="float32")
            y = L.data("y", [1], dtype="int64")
            loss = L.mean(L.square_error_cost(L.fc(x, 5), L.one_hot(y, 5)))
            fluid.optimizer.SGD(0.1).minimize(loss)
        r = np.random.RandomState(2)
        return main, startup, loss, [{"x": r.rand(6, 4).astype("float32"),
                                      "y": r.randint(0, 5, (6, 1)).astype("int64")}]
    for build in (_embedding_mlp, onehot_model):
        main, startup, loss, feeds = build()
        with MetaDevice(capturing=False) as dev:
            _, recs = _steps(dev, main, startup, feeds)
        assert all(r.done and r.uploads == [] for r in recs)
