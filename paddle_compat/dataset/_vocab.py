"""Word-frequency dictionaries as Paddle 1.8's text readers build them under Python 3.

Paddle reads the corpora as bytes, so its dictionaries map *bytes* words to ids, while the marks it adds
('<unk>', '<s>', '<e>') are str keys.  We keep exactly that so ids and lookups match Paddle's.
"""


def _sort_key(item):
    word, freq = item
    # Paddle sorts by (-freq, word); a bytes word and a str mark of equal frequency make Python 3 raise there.
    # We order them as their bytes instead, which gives Paddle's order wherever Paddle does not fail.
    return -freq, word.encode() if isinstance(word, str) else word


def ids_by_frequency(word_freq, cutoff):
    """{word: id} for words seen more than `cutoff` times, most frequent first, ties by word; '<unk>' last."""
    kept = sorted(((w, c) for w, c in word_freq.items() if c > cutoff), key=_sort_key)
    word_idx = {w: i for i, (w, _) in enumerate(kept)}
    word_idx["<unk>"] = len(kept)
    return word_idx
