"""Paddle's fluid.layers.rnn: RNN cells and layers.rnn (cells.py), dynamic_lstm / dynamic_gru and their units
(dynamic.py), and decoding: dynamic_decode, BeamSearchDecoder, beam_search (decoding.py)."""

from . import cells, decoding, dynamic
from .cells import *  # noqa: F401,F403
from .cells import BasicGRUUnit, BasicLSTMUnit  # noqa: F401  (contrib.layers' basic_gru / basic_lstm units)
from .decoding import *  # noqa: F401,F403
from .dynamic import *  # noqa: F401,F403

__all__ = cells.__all__ + dynamic.__all__ + decoding.__all__
