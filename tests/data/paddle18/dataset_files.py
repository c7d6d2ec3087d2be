"""Writes small dataset files in the exact formats Paddle 1.8's paddle.dataset readers read, under a cache root
laid out as Paddle's (<root>/<module>/<file>).  Deterministic (numpy RandomState), Python 3.7+ (it also runs
under Paddle 1.8.5's interpreter to record that reader's samples)."""

import gzip
import io
import os
import pickle
import struct
import tarfile
import zipfile

import numpy as np

WORDS = ["the", "a", "movie", "film", "good", "bad", "great", "plot", "actor", "scene", "love", "boring",
         "story", "fun", "dull", "<unk>"]


def _add(tf, name, data):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = 0
    tf.addfile(info, io.BytesIO(data))


def _dir(root, module):
    d = os.path.join(root, module)
    os.makedirs(d, exist_ok=True)
    return d


def uci_housing(root, rng):
    data = np.round(rng.uniform(0.5, 50.0, size=(20, 14)), 4)
    with open(os.path.join(_dir(root, "uci_housing"), "housing.data"), "w") as f:
        for row in data:
            f.write(" ".join("%.4f" % v for v in row) + "\n")


def _idx_gz(path, arr, magic):
    header = struct.pack(">I", magic) + b"".join(struct.pack(">I", n) for n in arr.shape)
    with gzip.open(path, "wb") as f:
        f.write(header + arr.astype(np.uint8).tobytes())


def mnist(root, rng):
    d = _dir(root, "mnist")
    for prefix, n in (("train", 200), ("t10k", 100)):   # Paddle reads in chunks of 100
        _idx_gz(os.path.join(d, "%s-images-idx3-ubyte.gz" % prefix), rng.randint(0, 256, (n, 28, 28)), 2051)
        _idx_gz(os.path.join(d, "%s-labels-idx1-ubyte.gz" % prefix), rng.randint(0, 10, (n,)), 2049)


class _Portable(pickle.Pickler):
    """Pickles arrays as numpy.ndarray(shape, dtype, buffer), which numpy 1.x and 2.x both load (a plain
    numpy 2 pickle names numpy._core, which Paddle 1.8's numpy cannot import)."""
    def reducer_override(self, obj):
        if isinstance(obj, np.ndarray):
            return np.ndarray, (obj.shape, obj.dtype.str, obj.tobytes())
        return NotImplemented


def _pickle(obj):
    buf = io.BytesIO()
    _Portable(buf, protocol=2).dump(obj)
    return buf.getvalue()


def cifar(root, rng):
    d = _dir(root, "cifar")
    with tarfile.open(os.path.join(d, "cifar-10-python.tar.gz"), "w:gz") as tf:
        for name in ("data_batch_1", "data_batch_2", "test_batch"):
            batch = {b"data": rng.randint(0, 256, (3, 3072)).astype(np.uint8),
                     b"labels": [int(x) for x in rng.randint(0, 10, 3)]}
            _add(tf, "cifar-10-batches-py/" + name, _pickle(batch))
    with tarfile.open(os.path.join(d, "cifar-100-python.tar.gz"), "w:gz") as tf:
        for name in ("train", "test"):
            batch = {b"data": rng.randint(0, 256, (2, 3072)).astype(np.uint8),
                     b"fine_labels": [int(x) for x in rng.randint(0, 100, 2)]}
            _add(tf, "cifar-100-python/" + name, _pickle(batch))


def _sentence(rng, n):
    return " ".join(WORDS[i] for i in rng.randint(0, len(WORDS) - 1, n))


def imdb(root, rng):
    with tarfile.open(os.path.join(_dir(root, "imdb"), "imdb%2FaclImdb_v1.tar.gz"), "w:gz") as tf:
        for split in ("train", "test"):
            for pol in ("pos", "neg"):
                for i in range(3):
                    text = _sentence(rng, 12).capitalize() + ", really! It's <br /> " + _sentence(rng, 5) + ".\n"
                    _add(tf, "aclImdb/%s/%s/%d_%d.txt" % (split, pol, i, 7), text.encode())
        _add(tf, "aclImdb/README", b"not a review\n")


def imikolov(root, rng):
    with tarfile.open(os.path.join(_dir(root, "imikolov"), "imikolov%2Fsimple-examples.tgz"), "w:gz") as tf:
        for name, n in (("ptb.train.txt", 400), ("ptb.valid.txt", 5)):
            # b'<unk>' is an ordinary corpus word for Paddle; keep its count off '<s>'/'<e>''s (one per line):
            # Paddle 1.8 cannot sort a bytes word and a str mark of equal frequency
            lines = [" " + _sentence(rng, int(rng.randint(1, 9))) + (" <unk> \n" if i % 2 else " \n")
                     for i in range(n)]
            _add(tf, "./simple-examples/data/" + name, "".join(lines).encode())


def movielens(root, rng):
    movies = ["1::Toy Story (1995)::Animation|Children's|Comedy", "2::Jumanji (1995)::Adventure|Children's",
              "3::Grumpier Old Men (1995)::Comedy|Romance", u"4::Caf\xe9 Society (2016)::Drama|Comedy"]
    users = ["1::F::1::10::48067", "2::M::56::16::70072", "3::M::25::15::55117"]
    ratings = ["%d::%d::%d::978300760" % (rng.randint(1, 4), rng.randint(1, 5), rng.randint(1, 6))
               for _ in range(40)]
    with zipfile.ZipFile(os.path.join(_dir(root, "movielens"), "movielens%2Fml-1m.zip"), "w") as z:
        z.writestr("ml-1m/movies.dat", "\n".join(movies).encode("latin-1") + b"\n")
        z.writestr("ml-1m/users.dat", ("\n".join(users) + "\n").encode())
        z.writestr("ml-1m/ratings.dat", ("\n".join(ratings) + "\n").encode())


def conll05(root, rng):
    d = _dir(root, "conll05st")
    with open(os.path.join(d, "conll05st%2FwordDict.txt"), "w") as f:
        f.write("\n".join(["<unk>", "bos", "eos", "the", "cat", "sat", "on", "mat", "dog", "ran"]) + "\n")
    with open(os.path.join(d, "conll05st%2FverbDict.txt"), "w") as f:
        f.write("sit\nrun\n")
    with open(os.path.join(d, "conll05st%2FtargetDict.txt"), "w") as f:
        f.write("B-A0\nI-A0\nB-A1\nI-A1\nB-V\nI-V\nB-AM-LOC\nI-AM-LOC\nO\n")
    with open(os.path.join(d, "conll05st%2Femb"), "wb") as f:
        f.write(b"\0" * 16 + rng.uniform(-0.1, 0.1, (10, 32)).astype(np.float32).tobytes())
    # two sentences: one predicate, then two predicates (verb column first, one argument column per verb)
    words = ["the", "cat", "sat", "on", "the", "mat", "", "the", "dog", "ran", "and", "sat", ""]
    props = ["-\t(A0*", "-\t*)", "sit\t(V*)", "-\t(AM-LOC*", "-\t*", "-\t*)", "",
             "-\t(A0*\t(A1*", "-\t*)\t*)", "run\t(V*)\t*", "-\t*\t*", "sit\t*\t(V*)", ""]
    def gz(lines):
        buf = io.BytesIO()
        with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as g:
            g.write(("\n".join(lines) + "\n").encode())
        return buf.getvalue()
    with tarfile.open(os.path.join(d, "conll05st-tests.tar.gz"), "w:gz") as tf:
        _add(tf, "conll05st-release/test.wsj/words/test.wsj.words.gz", gz(words))
        _add(tf, "conll05st-release/test.wsj/props/test.wsj.props.gz", gz(props))


def wmt14(root, rng):
    src_words = ["<s>", "<e>", "<unk>", "le", "chat", "noir", "est", "la", "maison"]
    trg_words = ["<s>", "<e>", "<unk>", "the", "cat", "black", "is", "house"]
    with tarfile.open(os.path.join(_dir(root, "wmt14"), "wmt14.tgz"), "w:gz") as tf:
        _add(tf, "wmt14/src.dict", ("\n".join(src_words) + "\n").encode())
        _add(tf, "wmt14/trg.dict", ("\n".join(trg_words) + "\n").encode())
        for split, n in (("train/train", 6), ("test/test", 3), ("gen/gen", 2)):
            lines = []
            for _ in range(n):
                s = " ".join(src_words[i] for i in rng.randint(3, 9, rng.randint(1, 6)))
                t = " ".join(trg_words[i] for i in rng.randint(3, 8, rng.randint(1, 6))) + " zebra"
                lines.append(s + "\t" + t)
            lines.append("malformed line without tab")
            _add(tf, "wmt14/" + split, ("\n".join(lines) + "\n").encode())


def wmt16(root, rng):
    en = ["a", "man", "dog", "runs", "in", "the", "park", "with", "ball"]
    de = ["ein", "mann", "hund", "rennt", "im", "park", "mit", "ball", "der"]
    with tarfile.open(os.path.join(_dir(root, "wmt16"), "wmt16.tar.gz"), "w:gz") as tf:
        for split, n in (("train", 10), ("test", 3), ("val", 3)):
            lines = []
            for _ in range(n):
                s = " ".join(en[i] for i in rng.randint(0, len(en), rng.randint(2, 7)))
                t = " ".join(de[i] for i in rng.randint(0, len(de), rng.randint(2, 7)))
                lines.append(s + "\t" + t)
            _add(tf, "wmt16/" + split, ("\n".join(lines) + "\n").encode())


def avazu_ctr(root, rng):
    """The CTR data Paddle's dist_ctr_reader.py reads: dnn ids<TAB>lr id:value pairs<TAB>click, plus a meta."""
    dnn_dim, lr_dim = 1000, 1000
    with tarfile.open(os.path.join(_dir(root, "avazu_ctr_data"), "avazu_ctr_data.tgz"), "w:gz") as tf:
        for split, n in (("train", 100), ("test", 40), ("infer", 20)):
            lines = []
            for _ in range(n):
                dnn = " ".join(str(i) for i in rng.randint(0, dnn_dim, rng.randint(3, 9)))
                lr = " ".join("%d:1" % i for i in rng.randint(0, lr_dim, rng.randint(3, 9)))
                lines.append("%s\t%s\t%d" % (dnn, lr, rng.randint(0, 2)))
            _add(tf, "avazu_ctr_data/%s.txt" % split, ("\n".join(lines) + "\n").encode())
        _add(tf, "avazu_ctr_data/data.meta.txt", ("dnn_input_dim: %d\nlr_input_dim: %d\n" % (dnn_dim, lr_dim)).encode())


def simnet(root, rng):
    """dist_simnet_bow.py's `train`: fields split by ';' -- id, [n_pos n_neg], query, n_pos pos titles, negs."""
    ids = lambda: " ".join(str(i) for i in rng.randint(1, 1500, rng.randint(2, 8)))   # noqa: E731
    with open(os.path.join(_dir(root, "simnet"), "train"), "w") as f:
        for k in range(100):
            f.write("%d;1 1;%s;%s;%s;\n" % (k, ids(), ids(), ids()))


def text_classification(root, rng):
    """dist_text_classification.py's imdb.vocab and text_classification.tar.gz ({train,test}/{pos,neg}/*.txt)."""
    d = _dir(root, "text_classification")
    with open(os.path.join(d, "imdb.vocab"), "w") as f:
        f.write("\n".join(WORDS[:-1]) + "\n")
    with tarfile.open(os.path.join(d, "text_classification.tar.gz"), "w:gz") as tf:
        for split, n in (("train", 30), ("test", 10)):
            for label in ("pos", "neg"):
                for k in range(n):
                    _add(tf, "%s/%s/%d_1.txt" % (split, label, k), _sentence(rng, rng.randint(4, 12)).encode())


ALL = [uci_housing, mnist, cifar, imdb, imikolov, movielens, conll05, wmt14, wmt16,
       avazu_ctr, simnet, text_classification]   # the last three: data files of Paddle's dist model tests


def write_all(root, seed=0):
    for make in ALL:
        make(root, np.random.RandomState(seed))
