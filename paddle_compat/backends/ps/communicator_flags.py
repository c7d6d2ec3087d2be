"""TrainerRuntimeConfig's communicator flags (Paddle 1.8's FLAGS_communicator_*): their defaults and their
checks, in one place for fleet's strategies, fluid.communicator and the half-async communicator. No torch."""

import os

__all__ = ["FLAG_FIELDS", "default_flags", "parse_flags"]

# field -> (smallest valid value, Paddle 1.8's default; None: CPU_NUM)
FLAG_FIELDS = {
    "communicator_max_merge_var_num": (1, None),
    "communicator_send_queue_size": (1, None),
    "communicator_independent_recv_thread": (0, 1),
    "communicator_min_send_grad_num_before_recv": (0, None),
    "communicator_thread_pool_size": (1, 5),
    "communicator_send_wait_times": (0, 5),
    "communicator_is_sgd_optimizer": (0, 1),
}
_BOOL_FIELDS = ("communicator_independent_recv_thread", "communicator_is_sgd_optimizer")


def default_flags():
    """TrainerRuntimeConfig's flags as Paddle 1.8 reads them: FLAGS_communicator_<field> from the
    environment, else its default (CPU_NUM for the merge count, queue size and sends before a recv)."""
    cpu_num = os.getenv("CPU_NUM", "1")
    return {k: os.getenv("FLAGS_" + k, cpu_num if d is None else str(d)) for k, (_, d) in FLAG_FIELDS.items()}


def parse_flags(flags, where="TrainerRuntimeConfig"):
    """{field: int} from TrainerRuntimeConfig's string flags (FLAGS_communicator_* as Paddle reads them);
    a value that is not an integer, or is too small, is an error naming the field."""
    out = {}
    for key, value in dict(flags).items():
        if key not in FLAG_FIELDS:
            continue
        low = FLAG_FIELDS[key][0]
        try:
            if isinstance(value, bool):
                v = int(value)
            elif isinstance(value, float) and not value.is_integer():
                raise ValueError
            else:
                v = int(str(value).strip())
        except (TypeError, ValueError):
            raise ValueError("%s: %s must be an integer, got %r (also settable as FLAGS_%s)"
                             % (where, key, value, key)) from None
        if v < low or (key in _BOOL_FIELDS and v > 1):
            want = "0 or 1" if key in _BOOL_FIELDS else ">= %d" % low
            raise ValueError("%s: %s must be %s, got %r (also settable as FLAGS_%s)" % (where, key, want, value, key))
        out[key] = v
    return out
