"""The decode half of the machine_translation book chapter (Paddle 1.8's test_machine_translation.py
decode(): a While loop over max_length with array_read/array_write, embedding, fc, topk, beam_search,
sequence_expand, lod_reset and beam_search_decode), written as in the book with small sizes and fixed
weights. The encoder is embedding -> fc -> dynamic_lstm -> sequence_last_step as in the book. It takes the
fluid module as an argument so tests/data/paddle18/make_beam_search.py runs the very same code with Paddle
1.8.5 to record the reference."""

import numpy as np

DICT_SIZE, WORD_DIM, HIDDEN_DIM, DECODER_SIZE = 30, 8, 8, 8
TARGET_DICT_DIM = DICT_SIZE
MAX_LENGTH, END_ID = 6, 1
SRC_LENS = [3, 5, 2, 4]


def encoder(fluid, src_word_id):
    src_embedding = fluid.layers.embedding(input=src_word_id, size=[DICT_SIZE, WORD_DIM], dtype='float32',
                                           param_attr=fluid.ParamAttr(name='src_emb'))
    fc1 = fluid.layers.fc(input=src_embedding, size=HIDDEN_DIM * 4, act='tanh')
    lstm_hidden0, lstm_0 = fluid.layers.dynamic_lstm(input=fc1, size=HIDDEN_DIM * 4)
    return fluid.layers.sequence_last_step(input=lstm_hidden0)


def decode(fluid, context, beam_size, end_id=END_ID, max_length=MAX_LENGTH):
    pd = fluid.layers
    init_state = context
    array_len = pd.fill_constant(shape=[1], dtype='int64', value=max_length)
    counter = pd.zeros(shape=[1], dtype='int64', force_cpu=True)

    # fill the first element with init_state
    state_array = pd.create_array('float32')
    pd.array_write(init_state, array=state_array, i=counter)

    # ids, scores as memory
    ids_array = pd.create_array('int64')
    scores_array = pd.create_array('float32')

    init_ids = pd.data(name="init_ids", shape=[1], dtype="int64", lod_level=2)
    init_scores = pd.data(name="init_scores", shape=[1], dtype="float32", lod_level=2)

    pd.array_write(init_ids, array=ids_array, i=counter)
    pd.array_write(init_scores, array=scores_array, i=counter)

    cond = pd.less_than(x=counter, y=array_len)

    while_op = pd.While(cond=cond)
    with while_op.block():
        pre_ids = pd.array_read(array=ids_array, i=counter)
        pre_state = pd.array_read(array=state_array, i=counter)
        pre_score = pd.array_read(array=scores_array, i=counter)

        # expand the lod of pre_state to be the same with pre_score
        pre_state_expanded = pd.sequence_expand(pre_state, pre_score)

        pre_ids_emb = pd.embedding(input=pre_ids, size=[DICT_SIZE, WORD_DIM], dtype='float32',
                                   param_attr=fluid.ParamAttr(name='trg_emb'))

        # use rnn unit to update rnn
        current_state = pd.fc(input=[pre_state_expanded, pre_ids_emb], size=DECODER_SIZE, act='tanh')
        current_state_with_lod = pd.lod_reset(x=current_state, y=pre_score)
        # use score to do beam search
        current_score = pd.fc(input=current_state_with_lod, size=TARGET_DICT_DIM, act='softmax')
        topk_scores, topk_indices = pd.topk(current_score, k=beam_size)
        # calculate accumulated scores after topk to reduce computation cost
        accu_scores = pd.elementwise_add(x=pd.log(topk_scores), y=pd.reshape(pre_score, shape=[-1]), axis=0)
        selected_ids, selected_scores = pd.beam_search(pre_ids, pre_score, topk_indices, accu_scores, beam_size,
                                                       end_id=end_id, level=0)

        pd.increment(x=counter, value=1, in_place=True)

        # update the memories
        pd.array_write(current_state, array=state_array, i=counter)
        pd.array_write(selected_ids, array=ids_array, i=counter)
        pd.array_write(selected_scores, array=scores_array, i=counter)

        # update the break condition: up to the max length or all candidates of
        # source sentences have ended.
        length_cond = pd.less_than(x=counter, y=array_len)
        finish_cond = pd.logical_not(pd.is_empty(x=selected_ids))
        pd.logical_and(x=length_cond, y=finish_cond, out=cond)

    translation_ids, translation_scores = pd.beam_search_decode(ids=ids_array, scores=scores_array,
                                                                beam_size=beam_size, end_id=end_id)
    return translation_ids, translation_scores


def param_values(shapes, seed):
    """Fixed weights: larger than Xavier so the softmax is peaked and beams end early."""
    rs = np.random.RandomState(seed)
    return [rs.uniform(-1.5, 1.5, size=s).astype("float32") for s in shapes]


def run(fluid, beam_size, seed, end_id=END_ID, params=None):
    """-> dict: ids, scores, lod (of the decoded sentences), params (values in creation order: the
    generated parameter names differ between processes)."""
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        src = fluid.layers.data(name="src_word_id", shape=[1], dtype="int64", lod_level=1)
        context = encoder(fluid, src)
        ids, scores = decode(fluid, context, beam_size, end_id)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    place = fluid.CPUPlace()
    with fluid.scope_guard(scope):
        exe.run(startup)
        names = [p.name for p in main.global_block().all_parameters()]
        if params is None:
            params = param_values([np.array(scope.find_var(n).get_tensor()).shape for n in names], seed)
        for n, v in zip(names, params):
            scope.find_var(n).get_tensor().set(np.asarray(v, "float32"), place)
        rs = np.random.RandomState(seed + 100)
        words = rs.randint(2, DICT_SIZE, size=(sum(SRC_LENS), 1)).astype("int64")
        n = len(SRC_LENS)
        feed = {"src_word_id": fluid.create_lod_tensor(words, [SRC_LENS], place),
                "init_ids": fluid.create_lod_tensor(np.zeros((n, 1), "int64"), [[1] * n, [1] * n], place),
                "init_scores": fluid.create_lod_tensor(np.ones((n, 1), "float32"), [[1] * n, [1] * n], place)}
        out_ids, out_scores = exe.run(main, feed=feed, fetch_list=[ids, scores], return_numpy=False)
    return {"ids": np.array(out_ids).ravel().tolist(), "scores": np.array(out_scores).ravel().tolist(),
            "lod": [list(map(int, l)) for l in out_ids.lod()],
            "score_lod": [list(map(int, l)) for l in out_scores.lod()],
            "shapes": [list(np.array(out_ids).shape), list(np.array(out_scores).shape)],
            "params": [np.asarray(v).tolist() for v in params]}
