"""fluid.nets: small compositions of layers from Paddle 1.x."""

from . import layers

__all__ = ["simple_img_conv_pool", "img_conv_group", "glu", "sequence_conv_pool", "scaled_dot_product_attention"]


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


def scaled_dot_product_attention(queries, keys, values, num_heads=1, dropout_rate=0.):
    """softmax(Q K^T / sqrt(d_head)) V over [batch, length, hidden] inputs. With num_heads > 1, Q, K and V
    first go through their own fc (hidden -> hidden, a weight and bias each) and are split into heads, whose
    results are joined again. dropout_rate > 0 drops attention weights (training mode)."""
    for arg, v in (("queries", queries), ("keys", keys), ("values", values)):
        layers.utils.check_variable(v, arg, "scaled_dot_product_attention")
        if len(v.shape) != 3:
            raise ValueError("scaled_dot_product_attention: %s must be 3-D [batch, length, hidden], got shape %s"
                             % (arg, list(v.shape)))
    if not queries.dtype == keys.dtype == values.dtype:
        raise TypeError("scaled_dot_product_attention: queries, keys and values must share one dtype")
    if queries.shape[-1] != keys.shape[-1]:
        raise ValueError("scaled_dot_product_attention: queries' hidden size %d differs from keys' %d"
                         % (queries.shape[-1], keys.shape[-1]))
    if keys.shape[-2] != values.shape[-2]:
        raise ValueError("scaled_dot_product_attention: keys have length %d but values %d"
                         % (keys.shape[-2], values.shape[-2]))
    for arg, v in (("keys", keys), ("values", values)):
        if v.shape[-1] % num_heads:
            raise ValueError("scaled_dot_product_attention: the hidden size of %s (%d) is not divisible by "
                             "num_heads=%d" % (arg, v.shape[-1], num_heads))
    q, k, v = queries, keys, values
    if num_heads > 1:
        q, k, v = [layers.fc(input=t, size=t.shape[-1], num_flatten_dims=2) for t in (q, k, v)]

        def heads(t):
            h = t.shape[-1]
            return layers.transpose(layers.reshape(t, list(t.shape[:-1]) + [num_heads, h // num_heads]),
                                    perm=[0, 2, 1, 3])
        q, k, v = heads(q), heads(k), heads(v)
    scaled = layers.scale(q, scale=(keys.shape[-1] // num_heads) ** -0.5)
    weights = layers.softmax(layers.matmul(scaled, k, transpose_y=True))
    if dropout_rate:
        weights = layers.dropout(weights, dropout_prob=dropout_rate, is_test=False)
    out = layers.matmul(weights, v)
    if num_heads > 1:
        t = layers.transpose(out, perm=[0, 2, 1, 3])
        out = layers.reshape(t, [t.shape[0], t.shape[1], t.shape[2] * t.shape[3]])
    return out

