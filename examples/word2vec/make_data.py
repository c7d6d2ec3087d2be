"""Write a synthetic corpus with a known structure for skip-gram training, and its word dictionary.

    python make_data.py [--out_dir data] [--train_files 4] [--sentences_per_file 500]

The vocabulary is split into `topics` groups; each sentence draws its words (Zipf-distributed) from one
topic, with `noise` of them drawn from the whole vocabulary. Words of a topic therefore share contexts,
and a trained embedding puts them close: the nearest neighbour (cosine) of a frequent word should be a word
of its own topic. By chance that happens for about 1/topics of the words. Writes train/part-*
(one sentence of word ids per line, PaddleRec's preprocessed form), dict.txt (`word id count` per line,
the counts the reader's negative sampling uses) and data_info.json (the topic of every word).
Deterministic for a seed, numpy only (runs under Paddle 1.8.5's Python 3.7 too).
"""

import argparse
import json
import os

import numpy as np


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out_dir", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "data"))
    ap.add_argument("--train_files", type=int, default=4)
    ap.add_argument("--sentences_per_file", type=int, default=500)
    ap.add_argument("--vocab", type=int, default=1000)
    ap.add_argument("--topics", type=int, default=10)
    ap.add_argument("--sentence_len", type=int, default=12)
    ap.add_argument("--noise", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    rs = np.random.RandomState(args.seed)
    topic = rs.permutation(np.arange(args.vocab) % args.topics)          # the topic of each word id
    members = [np.flatnonzero(topic == t) for t in range(args.topics)]
    zipf = [1.0 / np.arange(1, len(m) + 1) ** 0.8 for m in members]
    zipf = [z / z.sum() for z in zipf]
    counts = np.zeros(args.vocab, dtype=np.int64)
    os.makedirs(os.path.join(args.out_dir, "train"), exist_ok=True)
    for k in range(args.train_files):
        lines = []
        for _ in range(args.sentences_per_file):
            t = rs.randint(args.topics)
            words = members[t][rs.choice(len(members[t]), size=args.sentence_len, p=zipf[t])]
            noisy = rs.random_sample(args.sentence_len) < args.noise
            words[noisy] = rs.randint(args.vocab, size=int(noisy.sum()))
            counts += np.bincount(words, minlength=args.vocab)
            lines.append(" ".join(str(w) for w in words))
        with open(os.path.join(args.out_dir, "train", "part-%d" % k), "w") as f:
            f.write("\n".join(lines) + "\n")
    with open(os.path.join(args.out_dir, "dict.txt"), "w") as f:
        for w in range(args.vocab):
            f.write("w%d %d %d\n" % (w, w, max(int(counts[w]), 1)))
    info = {"vocab": args.vocab, "topics": args.topics, "topic": topic.tolist(), "seed": args.seed,
            "chance_accuracy": 1.0 / args.topics,
            "sentences": args.train_files * args.sentences_per_file}
    with open(os.path.join(args.out_dir, "data_info.json"), "w") as f:
        json.dump(info, f)
    print(json.dumps({k: v for k, v in info.items() if k != "topic"}))


if __name__ == "__main__":
    main()
