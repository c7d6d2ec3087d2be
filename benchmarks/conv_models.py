"""Convolutional nets of the benchmarks, written once against a `fluid` module argument and importing neither
torch nor this package, so that Paddle 1.8.5 (Python 3.7) runs the very same code (benchmarks/conv_layout.py
runs it in a subprocess; benchmarks/step_models.py uses resnet_cifar10).

resnet_cifar10: the book's image_classification ResNet (conv-bn-relu, 3 stages of basic blocks, 1x1 conv-bn
shortcuts where the width changes, avg pool, fc softmax); vgg16_bn_drop: the same chapter's VGG (img_conv_group
with batch_norm and dropout); mobilenet_v1: MobileNet v1 for 32x32 images (a 3x3 stem, then depthwise 3x3 +
pointwise 1x1 conv-bn-relu blocks down to 2x2).
"""

import numpy as np


def _conv_bn(fluid, x, ch_out, k, stride, pad, act="relu", groups=1):
    t = fluid.layers.conv2d(input=x, filter_size=k, num_filters=ch_out, stride=stride, padding=pad, act=None,
                            groups=groups, bias_attr=False)
    return fluid.layers.batch_norm(input=t, act=act)


def _shortcut(fluid, x, ch_in, ch_out, stride):
    return _conv_bn(fluid, x, ch_out, 1, stride, 0, None) if ch_in != ch_out else x


def _basicblock(fluid, x, ch_in, ch_out, stride):
    t = _conv_bn(fluid, x, ch_out, 3, stride, 1)
    t = _conv_bn(fluid, t, ch_out, 3, 1, 1, act=None)
    return fluid.layers.elementwise_add(x=t, y=_shortcut(fluid, x, ch_in, ch_out, stride), act="relu")


def resnet_cifar10(fluid, ipt, depth=20):
    n = (depth - 2) // 6
    h = _conv_bn(fluid, ipt, 16, 3, 1, 1)
    for ch_in, ch_out, stride in ((16, 16, 1), (16, 32, 2), (32, 64, 2)):
        h = _basicblock(fluid, h, ch_in, ch_out, stride)
        for _ in range(1, n):
            h = _basicblock(fluid, h, ch_out, ch_out, 1)
    pool = fluid.layers.pool2d(input=h, pool_size=8, pool_type="avg", pool_stride=1)
    return fluid.layers.fc(input=pool, size=10, act="softmax")


def vgg16_bn_drop(fluid, ipt):
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


def mobilenet_v1(fluid, ipt):
    h = _conv_bn(fluid, ipt, 32, 3, 1, 1)
    for cin, cout, stride in ((32, 64, 1), (64, 128, 2), (128, 128, 1), (128, 256, 2), (256, 256, 1),
                              (256, 512, 2)) + ((512, 512, 1),) * 5 + ((512, 1024, 2), (1024, 1024, 1)):
        h = _conv_bn(fluid, _conv_bn(fluid, h, cin, 3, stride, 1, groups=cin), cout, 1, 1, 0)
    h = fluid.layers.pool2d(h, pool_type="avg", global_pooling=True)
    return fluid.layers.fc(input=h, size=10, act='softmax')


MODELS = ("resnet20", "vgg16", "mobilenet")


def build(fluid, model, batch):
    """(main, startup, loss, feed): the model on 3x32x32 images with cross_entropy + mean and its optimizer
    (Momentum 0.01/0.9; VGG: Adam 0.001, as the book), and one batch of data (the same numbers everywhere)."""
    main, start = fluid.Program(), fluid.Program()
    main.random_seed = start.random_seed = 90
    with fluid.program_guard(main, start), fluid.unique_name.guard():
        img = fluid.layers.data(name="img", shape=[3, 32, 32], dtype="float32")
        label = fluid.layers.data(name="label", shape=[1], dtype="int64")
        if model == "resnet20":
            predict = resnet_cifar10(fluid, img, 20)
        elif model == "mobilenet":
            predict = mobilenet_v1(fluid, img)
        else:
            predict = vgg16_bn_drop(fluid, img)
        loss = fluid.layers.mean(fluid.layers.cross_entropy(input=predict, label=label))
        if model == "vgg16":
            fluid.optimizer.Adam(learning_rate=0.001).minimize(loss)
        else:
            fluid.optimizer.Momentum(learning_rate=0.01, momentum=0.9).minimize(loss)
    rng = np.random.RandomState(1)
    feed = {"img": rng.uniform(-1, 1, (batch, 3, 32, 32)).astype("float32"),
            "label": rng.randint(0, 10, (batch, 1)).astype("int64")}
    return main, start, loss, feed
