"""PaddleRec-style data generator: raw Criteo lines on stdin -> MultiSlot records on stdout.

    dataset.set_pipe_command("python criteo_reader.py")

Dense counts are divided by their per-feature maximum (PaddleRec's cont_max); each categorical value is
hashed with its slot index into [0, sparse_feature_dim). PaddleRec used Python's built-in hash(), which is
salted per process (PYTHONHASHSEED) so two reader processes map the same value to different rows; crc32
gives every process, trainer and rerun the same row.
"""

import sys
import zlib

import paddle.fluid.incubate.data_generator as dg

CONT_MAX = [20, 600, 100, 50, 64000, 500, 100, 50, 500, 10, 10, 10, 50]
SPARSE_FEATURE_DIM = 1000001


class CriteoDataset(dg.MultiSlotDataGenerator):
    def generate_sample(self, line):
        def reader():
            features = line.rstrip("\n").split("\t")
            dense = [float(features[i + 1] or 0) / CONT_MAX[i] for i in range(13)]
            sparse = [[zlib.crc32(("%d:%s" % (i, features[14 + i])).encode()) % SPARSE_FEATURE_DIM]
                      for i in range(26)]
            yield [("dense_input", dense)] + [("C%d" % (i + 1), sparse[i]) for i in range(26)] + \
                [("label", [int(features[0])])]
        return reader


if __name__ == "__main__":
    CriteoDataset().run_from_stdin()
