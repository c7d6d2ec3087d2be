"""Records dynamic_decode numbers from real PaddlePaddle 1.8.5 (run outside CI, from outside the checkout):

    cd /tmp && GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python \
        <repo>/tests/data/paddle18/make_decoding.py

Writes decoding.npz beside this script. The programs are built by the functions below (they take the fluid
module; tests/unit/test_decoding_paddle18.py builds the same programs with paddle_compat): BasicDecoder with
TrainingHelper (outputs, lengths and the gradients of sum(square(outputs)) w.r.t. the inputs, the initial state
and every parameter), BasicDecoder with GreedyEmbeddingHelper, and BeamSearchDecoder (ids, scores, lengths).
Parameters take fixed values through the scope after the startup program."""

import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
N, T, D, H, V = 4, 4, 3, 5, 6


def vals(shape, seed, lo=-0.8, hi=0.8):
    return np.random.RandomState(seed).uniform(lo, hi, size=shape).astype("float32")


def _embed(fluid):
    return lambda ids: fluid.embedding(ids, size=[V, D], param_attr=fluid.ParamAttr(name="dec_emb"))


def _out_fn(fluid):
    return lambda x: fluid.layers.fc(x, size=V, num_flatten_dims=len(x.shape) - 1,
                                     param_attr=fluid.ParamAttr(name="out_w"), bias_attr=fluid.ParamAttr(name="out_b"))


def basic_training(fluid):
    L = fluid.layers
    x = L.data("x", shape=[T, D], dtype="float32")
    x.stop_gradient = False
    h0 = L.data("h0", shape=[H], dtype="float32")
    h0.stop_gradient = False
    lens = L.data("lens", shape=[-1], dtype="int64", append_batch_size=False)
    decoder = L.BasicDecoder(L.GRUCell(H), L.TrainingHelper(x, lens), output_fn=_out_fn(fluid))
    outs, final, seq_lens = L.dynamic_decode(decoder, inits=h0, impute_finished=True, return_length=True)
    return [outs.cell_outputs, final, outs.sample_ids, seq_lens], 2


def greedy(fluid):
    L = fluid.layers
    start = L.data("start", shape=[-1], dtype="int64", append_batch_size=False)
    h0 = L.data("h0", shape=[H], dtype="float32")
    helper = L.GreedyEmbeddingHelper(_embed(fluid), start, end_token=0)
    decoder = L.BasicDecoder(L.LSTMCell(H), helper, output_fn=_out_fn(fluid))
    outs, final, seq_lens = L.dynamic_decode(decoder, inits=[h0, h0], max_step_num=5, is_test=True,
                                             return_length=True)
    return [outs.cell_outputs, outs.sample_ids, final[1], seq_lens], 0


def beam(fluid):
    L = fluid.layers
    h0 = L.data("h0", shape=[H], dtype="float32")
    decoder = L.BeamSearchDecoder(L.LSTMCell(H), start_token=1, end_token=5, beam_size=3,
                                  embedding_fn=_embed(fluid), output_fn=_out_fn(fluid))
    ids, final, seq_lens = L.dynamic_decode(decoder, inits=[h0, h0], max_step_num=5, is_test=True,
                                            return_length=True)
    return [ids, final.log_probs, final.lengths, final.finished, seq_lens], 0


CASES = {"basic_training": basic_training, "greedy": greedy, "beam": beam}


def feeds():
    return {"x": vals([N, T, D], 1), "h0": vals([N, H], 2), "lens": np.array([4, 2, 3, 1], "int64"),
            "start": np.array([1, 2, 3, 1], "int64")}


def run_case(fluid, name, params=None):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        outs, n_grad = CASES[name](fluid)
        block = main.global_block()
        ps = list(block.all_parameters())
        pairs = []
        if n_grad:
            ins = sorted((v for v in block.vars.values() if getattr(v, "is_data", False) and not v.stop_gradient),
                         key=lambda v: v.name)
            loss = None
            for o in outs[:n_grad]:
                t = fluid.layers.reduce_sum(fluid.layers.square(o))
                loss = t if loss is None else loss + t
            names = ["grad/" + v.name for v in ins] + ["grad/param%d" % i for i in range(len(ps))]
            pairs = [(n, g) for n, g in zip(names, fluid.gradients([loss], ins + ps)) if g is not None]
    res = {}
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
    np.savez_compressed(os.path.join(HERE, "decoding.npz"), **data)
    print("wrote", {k: v.shape for k, v in data.items() if "|out" in k})


if __name__ == "__main__":
    main()
