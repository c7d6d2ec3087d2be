"""PaddleRec-style skip-gram reader: sentences of word ids on stdin -> MultiSlot records
(input_word, true_label, neg_label) on stdout.

    dataset.set_pipe_command("python word2vec_reader.py data/dict.txt 5 5")   # dict, window, neg_num

For every word, a window size is drawn in [1, window]; each context word in it gives one record with
neg_num negative words drawn from the unigram distribution raised to the power 0.75 (word2vec's), as
PaddleRec's reader did (cumulative sums + searchsorted).
"""

import sys

import numpy as np
import paddle.fluid.incubate.data_generator as dg


class Word2VecReader(dg.MultiSlotDataGenerator):
    def __init__(self, dict_path, window, neg_num):
        super(Word2VecReader, self).__init__()
        counts = []
        with open(dict_path) as f:
            for line in f:
                counts.append(float(line.split()[2]))
        freq = np.array(counts) ** 0.75
        self.cs = np.cumsum(freq / freq.sum())
        self.window, self.neg_num = window, neg_num
        self.rs = np.random.RandomState(1)

    def generate_sample(self, line):
        def reader():
            ids = [int(w) for w in line.split()]
            for i, center in enumerate(ids):
                win = self.rs.randint(1, self.window + 1)
                for ctx in ids[max(0, i - win):i] + ids[i + 1:i + 1 + win]:
                    negs = self.cs.searchsorted(self.rs.random_sample(self.neg_num))
                    negs = np.minimum(negs, len(self.cs) - 1)
                    yield [("input_word", [center]), ("true_label", [ctx]),
                           ("neg_label", [int(n) for n in negs])]
        return reader


if __name__ == "__main__":
    Word2VecReader(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])).run_from_stdin()
