"""fluid.nets: small compositions of layers from Paddle 1.x."""

from . import layers

__all__ = ["simple_img_conv_pool", "img_conv_group", "glu", "sequence_conv_pool"]


def simple_img_conv_pool(input, num_filters, filter_size, pool_size, pool_stride, pool_padding=0,
                         pool_type="max", global_pooling=False, conv_stride=1, conv_padding=0, conv_dilation=1,
                         conv_groups=1, param_attr=None, bias_attr=None, act=None, use_cudnn=True):
    conv_out = layers.conv2d(input=input, num_filters=num_filters, filter_size=filter_size, stride=conv_stride,
                             padding=conv_padding, dilation=conv_dilation, groups=conv_groups,
                             param_attr=param_attr, bias_attr=bias_attr, act=act, use_cudnn=use_cudnn)
    return layers.pool2d(input=conv_out, pool_size=pool_size, pool_type=pool_type, pool_stride=pool_stride,
                         pool_padding=pool_padding, global_pooling=global_pooling, use_cudnn=use_cudnn)


def img_conv_group(input, conv_num_filter, pool_size, conv_padding=1, conv_filter_size=3, conv_act=None,
                   param_attr=None, conv_with_batchnorm=False, conv_batchnorm_drop_rate=0.0, pool_stride=1,
                   pool_type="max", use_cudnn=True):
    n = len(conv_num_filter)

    def per_layer(v):
        return list(v) if isinstance(v, (list, tuple)) else [v] * n

    conv_padding, conv_filter_size = per_layer(conv_padding), per_layer(conv_filter_size)
    param_attr, with_bn = per_layer(param_attr), per_layer(conv_with_batchnorm)
    drop = per_layer(conv_batchnorm_drop_rate)
    tmp = input
    for i in range(n):
        local_act = None if with_bn[i] else conv_act
        tmp = layers.conv2d(input=tmp, num_filters=conv_num_filter[i], filter_size=conv_filter_size[i],
                            padding=conv_padding[i], param_attr=param_attr[i], act=local_act, use_cudnn=use_cudnn)
        if with_bn[i]:
            tmp = layers.batch_norm(input=tmp, act=conv_act)
            if abs(drop[i]) > 1e-5:
                tmp = layers.dropout(x=tmp, dropout_prob=drop[i])
    return layers.pool2d(input=tmp, pool_size=pool_size, pool_type=pool_type, pool_stride=pool_stride,
                         use_cudnn=use_cudnn)


def glu(input, dim=-1):
    a, b = layers.split(input, num_or_sections=2, dim=dim)
    return layers.elementwise_mul(a, layers.sigmoid(b))


def sequence_conv_pool(input, num_filters, filter_size, param_attr=None, act="sigmoid", pool_type="max",
                       bias_attr=None):
    """sequence_conv then sequence_pool: one row per sequence (Paddle 1.8's nets.sequence_conv_pool)."""
    conv_out = layers.sequence_conv(input=input, num_filters=num_filters, filter_size=filter_size,
                                    param_attr=param_attr, bias_attr=bias_attr, act=act)
    return layers.sequence_pool(input=conv_out, pool_type=pool_type)
