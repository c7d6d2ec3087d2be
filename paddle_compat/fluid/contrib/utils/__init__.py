"""contrib.utils: the HDFS helpers (hdfs_utils). Paddle's lookup_table_utils serve PSLib only and are not here."""

from . import hdfs_utils  # noqa: F401
from .hdfs_utils import *  # noqa: F401,F403

__all__ = list(hdfs_utils.__all__)
