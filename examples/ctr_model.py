"""A CTR-DNN in Fluid 1.x style: dense features + id slots (variable-length, LoD), one shared embedding table,
sum pooling per slot, an fc tower, softmax over {no click, click}, cross entropy, AUC.

    model = build_ctr_model(fluid, slots=26, emb_dim=10, table_height=1000001, is_sparse=True)
    fluid.optimizer.SGD(0.05).minimize(model.loss)
    feeder = fluid.DataFeeder(model.feed_list, place)

With slots=8, emb_dim=8, table_height=100000, hidden=(64, 32) and the reference weights it is exactly the
model of the Paddle 3.3.1 CTR reference (tests/compat/test_parity_ctr.py). is_distributed=True marks the
table for a parameter server (the distributed lookup table); the graph is otherwise the same.
"""

import collections

CTRModel = collections.namedtuple("CTRModel", ["feed_list", "dense", "slots", "label", "predict", "loss", "auc",
                                               "batch_auc", "auc_states", "accuracy"])


def _attr(fluid, name, init, default, learning_rate=1.0):
    """A named parameter; its initial value from `init` when given (NumpyArrayInitializer)."""
    if init is not None and name in init:
        default = fluid.initializer.NumpyArrayInitializer(init[name])
    return fluid.ParamAttr(name=name, initializer=default, learning_rate=learning_rate)


def build_ctr_model(fluid, slots, emb_dim=8, table_height=100000, is_sparse=True, is_distributed=False,
                    dense_dim=13, hidden=(64, 32), init=None, table_name="emb_table", auc_thresholds=2 ** 12 - 1,
                    with_metrics=True, suffix="", table_learning_rate=1.0):
    """Build the CTR network into the current default programs.

    slots: a number of id slots (named C1..Cn) or a list of slot names. Each slot is an int64 LoD input of
    shape [-1, 1] (one id per row, one sequence per sample). init: optional {parameter name: numpy array}
    of initial values for `table_name` and fc_<i>.w_0 / fc_<i>.b_0. with_metrics=False leaves out the auc
    and accuracy ops (their fields are then None). suffix is appended to the input names (several copies of
    the network sharing its parameters, e.g. one per simulated trainer); table_learning_rate is the table's
    ParamAttr learning_rate (a multiplier of the optimizer's).
    Returns a CTRModel; feed_list is [dense_input, slots..., label] (the order DataFeeder samples use).
    """
    names = ["C%d" % (i + 1) for i in range(slots)] if isinstance(slots, int) else list(slots)
    if not names:
        raise ValueError("build_ctr_model: at least one id slot is needed")
    dense = fluid.layers.data(name="dense_input" + suffix, shape=[dense_dim], dtype="float32")
    slot_vars = [fluid.layers.data(name=n + suffix, shape=[1], dtype="int64", lod_level=1) for n in names]
    label = fluid.layers.data(name="label" + suffix, shape=[1], dtype="int64")

    table_attr = _attr(fluid, table_name, init, fluid.initializer.Uniform(-0.01, 0.01), table_learning_rate)
    pooled = []
    for ids in slot_vars:
        emb = fluid.layers.embedding(input=ids, size=[table_height, emb_dim], is_sparse=is_sparse,
                                     is_distributed=is_distributed, param_attr=table_attr)
        pooled.append(fluid.layers.sequence_pool(input=emb, pool_type="sum"))
    h = fluid.layers.concat(pooled + [dense], axis=1)
    for i, size in enumerate(list(hidden) + [2]):
        act = "softmax" if i == len(hidden) else "relu"
        h = fluid.layers.fc(input=h, size=size, act=act,
                            param_attr=_attr(fluid, "fc_%d.w_0" % i, init, fluid.initializer.Xavier()),
                            bias_attr=_attr(fluid, "fc_%d.b_0" % i, init, fluid.initializer.Constant(0.0)))
    predict = h
    loss = fluid.layers.mean(fluid.layers.cross_entropy(input=predict, label=label))
    auc = batch_auc = auc_states = accuracy = None
    if with_metrics:
        auc, batch_auc, auc_states = fluid.layers.auc(input=predict, label=label, num_thresholds=auc_thresholds)
        accuracy = fluid.layers.accuracy(input=predict, label=label)
    return CTRModel([dense] + slot_vars + [label], dense, slot_vars, label, predict, loss, auc, batch_auc,
                    auc_states, accuracy)
