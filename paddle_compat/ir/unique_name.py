"""Paddle's unique names: generate('fc') -> fc_0, fc_1, ...; guard() gives a fresh namespace."""

import collections
import contextlib

__all__ = ["generate", "generate_with_ignorable_key", "switch", "guard", "UniqueNameGenerator"]


class UniqueNameGenerator:
    def __init__(self, prefix=None):
        self.ids = collections.defaultdict(int)
        self.prefix = prefix or ""

    def __call__(self, key):
        tmp = self.ids[key]
        self.ids[key] += 1
        return self.prefix + "_".join([key, str(tmp)])


generator = UniqueNameGenerator()


def generate(key):
    return generator(key)


def generate_with_ignorable_key(key):
    # Paddle's dygraph mode ignores the key; in static mode it is generate().
    return generator(key)


def switch(new_generator=None):
    global generator
    old = generator
    generator = new_generator if new_generator is not None else UniqueNameGenerator()
    return old


@contextlib.contextmanager
def guard(new_generator=None):
    if isinstance(new_generator, str):
        new_generator = UniqueNameGenerator(new_generator)
    elif isinstance(new_generator, bytes):
        new_generator = UniqueNameGenerator(new_generator.decode())
    old = switch(new_generator)
    try:
        yield
    finally:
        switch(old)
