"""distributed_batch_reader(batch_reader): each trainer takes every trainers_num-th batch, starting at its id
(PADDLE_TRAINER_ID / PADDLE_TRAINERS_NUM), as Paddle 1.8 does; trailing batches that do not make a full round
are dropped so every trainer runs the same number of steps."""

import os

from ....backends.cluster import TRAINER_ID_ENV, TRAINERS_NUM_ENV

__all__ = ["distributed_batch_reader"]


def _env_int(name, default):
    raw = os.environ.get(name, str(default))
    try:
        return int(raw)
    except ValueError:
        raise ValueError("environment variable %s must be an integer, got %r" % (name, raw))


def distributed_batch_reader(batch_reader):
    trainer_id = _env_int(TRAINER_ID_ENV, 0)
    trainers_num = _env_int(TRAINERS_NUM_ENV, 1)
    if not 0 <= trainer_id < trainers_num:
        raise ValueError("PADDLE_TRAINER_ID=%d is not in [0, PADDLE_TRAINERS_NUM=%d)" % (trainer_id, trainers_num))

    def decorated():
        round_ = []
        for batch in batch_reader():
            round_.append(batch)
            if len(round_) == trainers_num:
                yield round_[trainer_id]
                round_ = []

    return decorated
