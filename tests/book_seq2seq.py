"""The rnn_encoder_decoder and machine_translation (training part) book models, written as in Paddle 1.8's book
tests with small sizes: a bidirectional dynamic_lstm encoder and a DynamicRNN decoder whose LSTM step is built
from fc layers (rnn_encoder_decoder), and an LSTM encoder with a DynamicRNN fc decoder over a shared embedding
(machine_translation). Every function takes the fluid module, so the same code runs on paddle_compat (the
unit test) and on Paddle 1.8.5 (tests/data/paddle18/make_book_seq2seq.py records book_seq2seq.json).
Python 3.7 compatible."""

import numpy as np

SRC_DICT, TRG_DICT, EMB, ENC, DEC, BATCH = 30, 25, 8, 6, 6, 4


# ---- rnn_encoder_decoder -------------------------------------------------------------------------

def bi_lstm_encoder(fluid, input_seq, hidden_size):
    L = fluid.layers
    fwd_proj = L.fc(input=input_seq, size=hidden_size * 4, bias_attr=True)
    forward, _ = L.dynamic_lstm(input=fwd_proj, size=hidden_size * 4, use_peepholes=False)
    bwd_proj = L.fc(input=input_seq, size=hidden_size * 4, bias_attr=True)
    backward, _ = L.dynamic_lstm(input=bwd_proj, size=hidden_size * 4, is_reverse=True, use_peepholes=False)
    return L.sequence_last_step(input=forward), L.sequence_first_step(input=backward)


def lstm_step(fluid, x_t, hidden_t_prev, cell_t_prev, size):
    L = fluid.layers

    def linear(inputs):
        return L.fc(input=inputs, size=size, bias_attr=True)

    forget_gate = L.sigmoid(x=linear([hidden_t_prev, x_t]))
    input_gate = L.sigmoid(x=linear([hidden_t_prev, x_t]))
    output_gate = L.sigmoid(x=linear([hidden_t_prev, x_t]))
    cell_tilde = L.tanh(x=linear([hidden_t_prev, x_t]))
    cell_t = L.sums(input=[L.elementwise_mul(x=forget_gate, y=cell_t_prev),
                           L.elementwise_mul(x=input_gate, y=cell_tilde)])
    hidden_t = L.elementwise_mul(x=output_gate, y=L.tanh(x=cell_t))
    return hidden_t, cell_t


def lstm_decoder_without_attention(fluid, target_embedding, decoder_boot, context, decoder_size):
    L = fluid.layers
    rnn = L.DynamicRNN()
    cell_init = L.fill_constant_batch_size_like(input=decoder_boot, value=0.0, shape=[-1, decoder_size],
                                                dtype="float32")
    cell_init.stop_gradient = False
    with rnn.block():
        current_word = rnn.step_input(target_embedding)
        context = rnn.static_input(context)
        hidden_mem = rnn.memory(init=decoder_boot, need_reorder=True)
        cell_mem = rnn.memory(init=cell_init)
        decoder_inputs = L.concat(input=[context, current_word], axis=1)
        h, c = lstm_step(fluid, decoder_inputs, hidden_mem, cell_mem, decoder_size)
        rnn.update_memory(hidden_mem, h)
        rnn.update_memory(cell_mem, c)
        out = L.fc(input=h, size=TRG_DICT, bias_attr=True, act="softmax")
        rnn.output(out)
    return rnn()


def rnn_encoder_decoder(fluid):
    L = fluid.layers
    src = L.data(name="source_sequence", shape=[1], dtype="int64", lod_level=1)
    src_emb = L.embedding(input=src, size=[SRC_DICT, EMB], dtype="float32")
    fwd_last, bwd_first = bi_lstm_encoder(fluid, src_emb, ENC)
    encoded = L.concat(input=[fwd_last, bwd_first], axis=1)
    decoder_boot = L.fc(input=bwd_first, size=DEC, bias_attr=False, act="tanh")
    trg = L.data(name="target_sequence", shape=[1], dtype="int64", lod_level=1)
    trg_emb = L.embedding(input=trg, size=[TRG_DICT, EMB], dtype="float32")
    prediction = lstm_decoder_without_attention(fluid, trg_emb, decoder_boot, encoded, DEC)
    label = L.data(name="label_sequence", shape=[1], dtype="int64", lod_level=1)
    avg_cost = L.mean(L.cross_entropy(input=prediction, label=label))
    # the book's Adagrad, with a larger learning rate so that 10 steps move the loss
    fluid.optimizer.Adagrad(learning_rate=0.05).minimize(avg_cost)
    return avg_cost


# ---- machine_translation (training part) -----------------------------------------------------------

def mt_encoder(fluid, is_sparse):
    L = fluid.layers
    src = L.data(name="src_word_id", shape=[1], dtype="int64", lod_level=1)
    src_emb = L.embedding(input=src, size=[SRC_DICT, EMB], dtype="float32", is_sparse=is_sparse,
                          param_attr=fluid.ParamAttr(name="vemb"))
    fc1 = L.fc(input=src_emb, size=ENC * 4, act="tanh")
    lstm_hidden0, _ = L.dynamic_lstm(input=fc1, size=ENC * 4)
    return L.sequence_last_step(input=lstm_hidden0)


def mt_decoder_train(fluid, context, is_sparse):
    L = fluid.layers
    trg = L.data(name="target_language_word", shape=[1], dtype="int64", lod_level=1)
    trg_emb = L.embedding(input=trg, size=[SRC_DICT, EMB], dtype="float32", is_sparse=is_sparse,
                          param_attr=fluid.ParamAttr(name="vemb"))
    rnn = L.DynamicRNN()
    with rnn.block():
        current_word = rnn.step_input(trg_emb)
        pre_state = rnn.memory(init=context, need_reorder=True)
        current_state = L.fc(input=[current_word, pre_state], size=DEC, act="tanh")
        current_score = L.fc(input=current_state, size=TRG_DICT, act="softmax")
        rnn.update_memory(pre_state, current_state)
        rnn.output(current_score)
    return rnn()


def machine_translation(fluid, is_sparse=True):
    L = fluid.layers
    context = mt_encoder(fluid, is_sparse)
    rnn_out = mt_decoder_train(fluid, context, is_sparse)
    label = L.data(name="target_language_next_word", shape=[1], dtype="int64", lod_level=1)
    avg_cost = L.mean(L.cross_entropy(input=rnn_out, label=label))
    fluid.optimizer.Adagrad(learning_rate=0.05, regularization=fluid.regularizer.L2DecayRegularizer(
        regularization_coeff=0.1)).minimize(avg_cost)
    return avg_cost


MODELS = {"rnn_encoder_decoder": rnn_encoder_decoder, "machine_translation": machine_translation,
          "machine_translation_dense": lambda fluid: machine_translation(fluid, is_sparse=False)}
FEEDS = {"rnn_encoder_decoder": ("source_sequence", "target_sequence", "label_sequence"),
         "machine_translation": ("src_word_id", "target_language_word", "target_language_next_word")}
FEEDS["machine_translation_dense"] = FEEDS["machine_translation"]


def batches(steps, seed=5):
    """Synthetic (source, target) pairs: the label is the target shifted by one word, as in the book's data."""
    r = np.random.RandomState(seed)
    out = []
    for _ in range(steps):
        src_lens = r.randint(1, 7, size=BATCH).tolist()
        trg_lens = r.randint(1, 6, size=BATCH).tolist()
        trg = r.randint(0, TRG_DICT, size=sum(trg_lens) + BATCH).tolist()
        words, nexts, k = [], [], 0
        for n in trg_lens:
            words += trg[k:k + n]
            nexts += trg[k + 1:k + n + 1]
            k += n + 1
        out.append({"src_lens": src_lens, "src": r.randint(0, SRC_DICT, size=sum(src_lens)).tolist(),
                    "trg_lens": trg_lens, "trg": words, "next": nexts})
    return out


def feed(fluid, name, b):
    def lod(ids, lens):
        return fluid.create_lod_tensor(np.array(ids, "int64").reshape(-1, 1), [lens], fluid.CPUPlace())
    s, t, n = FEEDS[name]
    return {s: lod(b["src"], b["src_lens"]), t: lod(b["trg"], b["trg_lens"]), n: lod(b["next"], b["trg_lens"])}


def init_values(shapes):
    return [np.random.RandomState(200 + i).uniform(-0.3, 0.3, size=s).astype("float32")
            for i, s in enumerate(shapes)]


def train(fluid, name, data):
    """{"params": [[name, shape]...], "losses": [...]} of len(data) steps from the fixed initial weights."""
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        cost = MODELS[name](fluid)
    params = main.global_block().all_parameters()
    exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
    losses = []
    with fluid.scope_guard(scope):
        exe.run(startup)
        for p, v in zip(params, init_values([p.shape for p in params])):
            scope.find_var(p.name).get_tensor().set(v, fluid.CPUPlace())
        for b in data:
            loss, = exe.run(main, feed=feed(fluid, name, b), fetch_list=[cost])
            losses.append(float(np.array(loss).reshape(-1)[0]))
    return {"params": [[p.name, list(p.shape)] for p in params], "losses": losses}
