"""Conv nets on the CPU with FLAGS_conv_channels_last on (the default) against off: our own step both ways, in
one process, alternating rounds; thread CPU time per step and the ratio on / off (below 1: the channels-last
memory order pays). The baseline here is our NCHW path, not torch: step_speed.py compares with torch eager.

    python benchmarks/conv_layout.py [--model resnet20,vgg16,mobilenet] [--batch 16] [--rounds 5] [--steps 3]

resnet20: the book's resnet_cifar10 (depth 20, Momentum); vgg16: the book's vgg16_bn_drop (img_conv_group with
batch_norm and dropout, Adam); mobilenet: MobileNet v1 (depthwise conv2d with groups = channels, then 1x1
convolutions, each with batch_norm + relu; Momentum), all on 3x32x32 images. VGG's last blocks run 512
channels at 4x4 and 2x2, where channels-last convolutions are slower: those go back to NCHW
(paddle_compat/ops/defs/nn_ops.py); MobileNet's depthwise ones stay channels-last at every size and its 1x1
ones keep their input's order. This benchmark shows what those choices pay.
"""

import argparse
import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import paddle_compat as fluid  # noqa: E402
from bench_util import median  # noqa: E402
from step_models import resnet_cifar10  # noqa: E402

torch.set_num_threads(1)


def vgg16_bn_drop(ipt):
    def conv_block(x, num_filter, groups, dropouts):
        return fluid.nets.img_conv_group(input=x, pool_size=2, pool_stride=2, conv_num_filter=[num_filter] * groups,
                                         conv_filter_size=3, conv_act='relu', conv_with_batchnorm=True,
                                         conv_batchnorm_drop_rate=dropouts, pool_type='max')
    h = conv_block(ipt, 64, 2, [0.3, 0])
    h = conv_block(h, 128, 2, [0.4, 0])
    h = conv_block(h, 256, 3, [0.4, 0.4, 0])
    h = conv_block(h, 512, 3, [0.4, 0.4, 0])
    h = conv_block(h, 512, 3, [0.4, 0.4, 0])
    h = fluid.layers.dropout(x=h, dropout_prob=0.5)
    h = fluid.layers.batch_norm(input=fluid.layers.fc(input=h, size=512), act='relu')
    h = fluid.layers.fc(input=fluid.layers.dropout(x=h, dropout_prob=0.5), size=512)
    return fluid.layers.fc(input=h, size=10, act='softmax')


def _conv_bn(x, num_filters, filter_size, stride, groups=1):
    c = fluid.layers.conv2d(x, num_filters=num_filters, filter_size=filter_size, stride=stride,
                            padding=(filter_size - 1) // 2, groups=groups, bias_attr=False)
    return fluid.layers.batch_norm(c, act="relu")


def mobilenet_v1(ipt):
    """MobileNet v1 for 32x32 images: a 3x3 stem, then depthwise 3x3 + pointwise 1x1 blocks down to 2x2."""
    h = _conv_bn(ipt, 32, 3, 1)
    for cin, cout, stride in ((32, 64, 1), (64, 128, 2), (128, 128, 1), (128, 256, 2), (256, 256, 1),
                              (256, 512, 2)) + ((512, 512, 1),) * 5 + ((512, 1024, 2), (1024, 1024, 1)):
        h = _conv_bn(_conv_bn(h, cin, 3, stride, groups=cin), cout, 1, 1)
    h = fluid.layers.pool2d(h, pool_type="avg", global_pooling=True)
    return fluid.layers.fc(input=h, size=10, act='softmax')


def make_step(model, flag, batch):
    """Our step, lowered with FLAGS_conv_channels_last=flag (the flag is read when a block is lowered: the
    warm-up runs here, under it)."""
    old = os.environ.get("FLAGS_conv_channels_last")
    os.environ["FLAGS_conv_channels_last"] = flag
    try:
        main, start = fluid.Program(), fluid.Program()
        main.random_seed = start.random_seed = 90
        with fluid.program_guard(main, start), fluid.unique_name.guard():
            img = fluid.layers.data(name="img", shape=[3, 32, 32], dtype="float32")
            label = fluid.layers.data(name="label", shape=[1], dtype="int64")
            if model == "resnet20":
                predict = resnet_cifar10(fluid, img, 20)
                opt = fluid.optimizer.Momentum(learning_rate=0.01, momentum=0.9)
            elif model == "mobilenet":
                predict = mobilenet_v1(img)
                opt = fluid.optimizer.Momentum(learning_rate=0.01, momentum=0.9)
            else:
                predict = vgg16_bn_drop(img)
                opt = fluid.optimizer.Adam(learning_rate=0.001)
            loss = fluid.layers.mean(fluid.layers.cross_entropy(input=predict, label=label))
            opt.minimize(loss)
        scope, exe = fluid.Scope(), fluid.Executor(fluid.CPUPlace())
        exe.run(start, scope=scope)
        rng = np.random.RandomState(1)
        feed = {"img": rng.uniform(-1, 1, (batch, 3, 32, 32)).astype("float32"),
                "label": rng.randint(0, 10, (batch, 1)).astype("int64")}

        def step():
            return exe.run(main, feed=feed, fetch_list=[loss], scope=scope)[0]
        torch.manual_seed(0)    # dropout without a fixed seed draws from torch's generator: the same masks
        first = float(np.asarray(step()).reshape(-1)[0])
        step()
    finally:
        if old is None:
            del os.environ["FLAGS_conv_channels_last"]
        else:
            os.environ["FLAGS_conv_channels_last"] = old
    return step, first


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="resnet20,vgg16,mobilenet")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--steps", type=int, default=3)
    a = ap.parse_args()
    for model in a.model.split(","):
        if model not in ("resnet20", "vgg16", "mobilenet"):
            raise SystemExit("unknown model %r (resnet20, vgg16, mobilenet)" % model)
        (on, l_on), (off, l_off) = make_step(model, "1", a.batch), make_step(model, "0", a.batch)
        if abs(l_on - l_off) > 1e-4 * max(1.0, abs(l_off)):
            raise AssertionError("%s: first loss %r with channels-last, %r without" % (model, l_on, l_off))
        cpu = {"on": [], "off": []}
        sides = [("on", on), ("off", off)]
        for r in range(a.rounds):
            for k, fn in sides[r % 2:] + sides[:r % 2]:      # each side leads in turn
                c0 = time.thread_time()
                for _ in range(a.steps):
                    fn()
                cpu[k].append((time.thread_time() - c0) / a.steps)
        ratio = median([x / y for x, y in zip(cpu["on"], cpu["off"])])
        print("%s b%d: first loss %.6f / %.6f; cpu ms/step channels-last %.1f, NCHW %.1f, ratio %.3f" % (
            model, a.batch, l_on, l_off, median(cpu["on"]) * 1e3, median(cpu["off"]) * 1e3, ratio), flush=True)


if __name__ == "__main__":
    main()
