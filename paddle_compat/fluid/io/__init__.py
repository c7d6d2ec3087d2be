"""Paddle's fluid.io: saving and loading variables and inference models (save_load.py), Paddle 1.6+'s state files
(state.py), pserver-mode checkpoints (dist.py) and distributed lookup tables in inference models
(table_export.py); and the reader helpers Paddle offers here (DataLoader, PyReader, paddle.reader's decorators)."""

from ...readers.decorator import (ComposeNotAligned, batch, buffered, cache, chain, compose, firstn,  # noqa: F401
                                  map_readers, shuffle)
from ...readers.parallel import default_collate_fn, multiprocess_reader, xmap_readers  # noqa: F401
from ..reader import DataLoader, PyReader  # noqa: F401
from . import save_load
from .save_load import *  # noqa: F401,F403
from .save_load import MODEL_FILENAME, read_inference_program  # noqa: F401
from .variables import _get_valid_program, is_belong_to_optimizer  # noqa: F401
from .state import load, load_program_state, save, set_program_state  # noqa: F401

__all__ = save_load.__all__ + ["DataLoader", "PyReader", "save", "load", "load_program_state", "set_program_state",
                               "ComposeNotAligned", "default_collate_fn", "multiprocess_reader", "xmap_readers"]
