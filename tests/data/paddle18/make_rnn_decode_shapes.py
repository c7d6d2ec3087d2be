"""Records, from real PaddlePaddle 1.8.5 (run outside CI, from outside the checkout):

    cd /tmp && GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python \
        <repo>/tests/data/paddle18/make_rnn_decode_shapes.py

programs whose shapes are partly unknown when built, as in Paddle's test_rnn_decode_api: a beam search over
an encoder output with an unknown time axis (BeamSearchDecoder.tile_beam_merge_with_batch of
[-1, -1, H]), and losses where cross_entropy takes an [N, T] label of [N, T, V] probabilities (its loss
is [N, T]) and is multiplied by an [N, T] sequence mask. Writes rnn_decode_shapes.npz beside this script:
outputs, the gradients of the loss w.r.t. every parameter, and the build-time shapes (shape/...).
tests/unit/test_rnn_decode_shapes_paddle18.py builds the same programs with paddle_compat. Parameters take
fixed values through the scope after the startup program."""

import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
N, T, D, H, V, BEAM = 3, 5, 4, 6, 7, 3


def vals(shape, seed, lo=-0.8, hi=0.8):
    return np.random.RandomState(seed).uniform(lo, hi, size=shape).astype("float32")


def _embed(fluid, name):
    return lambda ids: fluid.embedding(ids, size=[V, D], param_attr=fluid.ParamAttr(name=name))


def _out_fn(fluid):
    return lambda x: fluid.layers.fc(x, size=V, num_flatten_dims=len(x.shape) - 1,
                                     param_attr=fluid.ParamAttr(name="out_w"), bias_attr=False)


def _encoder(fluid):
    L = fluid.layers
    src = fluid.data("src", shape=[None, None], dtype="int64")
    src_len = fluid.data("src_len", shape=[None], dtype="int64")
    enc_out, enc_final = L.rnn(L.GRUCell(H, name="enc"), _embed(fluid, "src_emb")(src), sequence_length=src_len)
    return enc_out, enc_final


def _attention_cell(fluid, enc_out):
    L = fluid.layers

    class Cell(L.RNNCell):
        """An LSTM whose input is the step input joined with the mean of the encoder output."""

        def __init__(self):
            self.lstm = L.LSTMCell(H, name="dec")

        def call(self, step_input, states):
            ctx = L.reduce_mean(enc_out, dim=1)
            return self.lstm(L.concat([step_input, ctx], axis=1), states)

        @property
        def state_shape(self):
            return self.lstm.state_shape
    return Cell()


def beam(fluid):
    L = fluid.layers
    enc_out, enc_final = _encoder(fluid)
    tiled = L.BeamSearchDecoder.tile_beam_merge_with_batch(enc_out, BEAM)
    decoder = L.BeamSearchDecoder(_attention_cell(fluid, tiled), start_token=0, end_token=1, beam_size=BEAM,
                                  embedding_fn=_embed(fluid, "trg_emb"), output_fn=_out_fn(fluid))
    ids, final, lens = L.dynamic_decode(decoder, inits=[enc_final, enc_final], max_step_num=6, is_test=True,
                                        return_length=True)
    return [tiled, ids, final.log_probs, lens], None, {"tiled": tiled}


def policy_gradient(fluid):
    """Greedy decoding, then -log p(sample) weighted by a reward and the mask of the decoded lengths."""
    L = fluid.layers
    enc_out, enc_final = _encoder(fluid)
    start = L.fill_constant_batch_size_like(input=enc_out, shape=[-1], dtype="int64", value=0)
    helper = L.GreedyEmbeddingHelper(_embed(fluid, "trg_emb"), start, end_token=1)
    decoder = L.BasicDecoder(_attention_cell(fluid, enc_out), helper, output_fn=_out_fn(fluid))
    outs, _, lens = L.dynamic_decode(decoder, inits=[enc_final, enc_final], max_step_num=6, return_length=True)
    probs = L.softmax(outs.cell_outputs)
    ce = L.cross_entropy(probs, outs.sample_ids)
    mask = L.sequence_mask(lens, maxlen=L.shape(probs)[1], dtype="float32")
    reward = mask * 2.0 - 0.5
    loss = L.reduce_sum(ce * reward) / L.reduce_sum(L.cast(lens, "float32"))
    return [outs.sample_ids, lens, ce, loss], loss, {"ce": ce, "reward": reward, "weighted": ce * reward}


def mle(fluid):
    """Teacher forcing: cross_entropy against an [N, T] label, masked by the target lengths."""
    L = fluid.layers
    enc_out, enc_final = _encoder(fluid)
    trg = fluid.data("trg", shape=[None, None], dtype="int64")
    trg_len = fluid.data("trg_len", shape=[None], dtype="int64")
    label = fluid.data("label", shape=[None, None], dtype="int64")
    decoder = L.BasicDecoder(_attention_cell(fluid, enc_out), L.TrainingHelper(_embed(fluid, "trg_emb")(trg), trg_len),
                             output_fn=_out_fn(fluid))
    outs, _ = L.dynamic_decode(decoder, inits=[enc_final, enc_final], impute_finished=True)
    probs = L.softmax(outs.cell_outputs)
    ce = L.cross_entropy(input=probs, label=label)
    mask = L.sequence_mask(trg_len, maxlen=L.shape(probs)[1], dtype="float32")
    loss = L.reduce_sum(L.reduce_mean(ce * mask, dim=[0]))
    return [ce, loss], loss, {"ce": ce, "masked": ce * mask}


CASES = {"beam": beam, "policy_gradient": policy_gradient, "mle": mle}


def feeds():
    rs = np.random.RandomState(5)
    return {"src": rs.randint(2, V, (N, T)).astype("int64"), "src_len": np.array([5, 3, 4], "int64"),
            "trg": rs.randint(2, V, (N, T + 1)).astype("int64"), "trg_len": np.array([6, 2, 4], "int64"),
            "label": rs.randint(0, V, (N, T + 1)).astype("int64")}


def run_case(fluid, name, params=None):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        outs, loss, shaped = CASES[name](fluid)
        block = main.global_block()
        ps = list(block.all_parameters())
        grads = fluid.gradients([loss], ps) if loss is not None else []
        pairs = [("grad/param%d" % i, g) for i, g in enumerate(grads) if g is not None]
    res = {"shape/" + k: np.array([int(d) for d in v.shape], "int64") for k, v in shaped.items()}
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        exe = fluid.Executor(fluid.CPUPlace())
        exe.run(startup)
        for i, p in enumerate(ps):
            t = scope.find_var(p.name).get_tensor()
            v = params["param/%d" % i] if params is not None else vals(np.array(t).shape, 100 + i, -0.9, 0.9)
            t.set(np.asarray(v, "float32"), fluid.CPUPlace())
            res["param/%d" % i] = np.asarray(v, "float32")
        feed = {k: v for k, v in feeds().items() if block.has_var(k)}
        got = exe.run(main, feed=feed, fetch_list=outs + [g for _, g in pairs])
    for i, o in enumerate(got[:len(outs)]):
        res["out/%d" % i] = np.array(o)
    for (n, _), g in zip(pairs, got[len(outs):]):
        res[n] = np.array(g)
    return res


def main():
    import paddle.fluid as fluid
    data = {}
    for name in CASES:
        for k, v in run_case(fluid, name).items():
            data[name + "|" + k] = v
    np.savez_compressed(os.path.join(HERE, "rnn_decode_shapes.npz"), **data)
    print("wrote", {k: (v.shape if "|out" in k or "|grad" in k else v.tolist()) for k, v in data.items()
                    if "|param" not in k})


if __name__ == "__main__":
    main()
