"""fluid.core.Dataset and fluid.core.Fleet: the native objects behind Paddle 1.8's dataset classes.

A fluid.dataset InMemoryDataset / QueueDataset holds one as `.dataset` (scripts call its methods directly,
e.g. `dataset.dataset.merge_by_lineid()`); it keeps the settings, and the record operations act on the
Python dataset that owns it. The download command and the hadoop command are process-wide, as in Paddle
(its fs layer keeps one of each): every dataset fetches "hdfs:" / "afs:" files with them.
"""

import weakref

__all__ = ["Dataset", "Fleet"]

_fs = {"download_cmd": "", "hdfs_cmd": "hadoop fs"}


def download_cmd():
    return _fs["download_cmd"]


def hdfs_cmd():
    return _fs["hdfs_cmd"]


class Dataset:
    """core.Dataset("MultiSlotDataset"): settings with Paddle's getters, and the record operations of the
    fluid.dataset object that owns it (none for a bare one: it holds no records)."""

    def __init__(self, name="MultiSlotDataset", owner=None):
        if name != "MultiSlotDataset":
            raise ValueError("core.Dataset: unknown dataset %r (Paddle 1.8 has MultiSlotDataset)" % (name,))
        self._owner = weakref.ref(owner) if owner is not None else (lambda: None)
        self._thread_num = 1
        self._filelist = []
        self._trainer_num = 1
        self._hdfs = ("", "")
        self._fleet_send_batch_size = 1024
        self._fleet_send_sleep_seconds = 0
        self._merge_size = 2
        self._fea_eval = False
        self._record_candidate_size = 0

    # settings ------------------------------------------------------------------------------------------
    def set_thread_num(self, thread_num):
        self._thread_num = int(thread_num)

    def get_thread_num(self):
        return self._thread_num

    def set_filelist(self, filelist):
        self._filelist = list(filelist)

    def get_filelist(self):
        return list(self._filelist)

    def set_trainer_num(self, trainer_num):
        self._trainer_num = int(trainer_num)

    def get_trainer_num(self):
        return self._trainer_num

    def set_hdfs_config(self, fs_name, fs_ugi):
        self._hdfs = (fs_name, fs_ugi)
        _fs["hdfs_cmd"] = "hadoop fs -D fs.default.name=%s -D hadoop.job.ugi=%s" % (fs_name, fs_ugi)

    def get_hdfs_config(self):
        return self._hdfs

    def set_download_cmd(self, download_cmd):
        _fs["download_cmd"] = download_cmd

    def get_download_cmd(self):
        return _fs["download_cmd"]

    def set_fleet_send_batch_size(self, size):
        self._fleet_send_batch_size = int(size)

    def get_fleet_send_batch_size(self):
        return self._fleet_send_batch_size

    def set_fleet_send_sleep_seconds(self, seconds):
        self._fleet_send_sleep_seconds = seconds

    def set_merge_by_lineid(self, merge_size=2):
        self._merge_size = int(merge_size)

    def set_fea_eval(self, fea_eval, record_candidate_size):
        self._fea_eval = bool(fea_eval)
        self._record_candidate_size = int(record_candidate_size)

    # accepted: they tune Paddle's native feed (queues, channels, pslib tables) that has no counterpart here
    def _noop(self, *args, **kwargs):
        return None

    set_queue_num = set_parse_ins_id = set_parse_content = set_parse_logkey = set_merge_by_sid = _noop
    set_enable_pv_merge = set_generate_unique_feasigns = generate_local_tables_unlock = _noop
    set_data_feed_desc = set_preload_thread_num = set_current_phase = register_client2client_msg_handler = _noop
    create_channel = create_readers = destroy_readers = create_preload_readers = destroy_preload_readers = _noop
    dynamic_adjust_channel_num = dynamic_adjust_readers_num = preprocess_instance = postprocess_instance = _noop

    # record operations: the owning dataset's -------------------------------------------------------------
    def _ds(self):
        return self._owner()

    def merge_by_lineid(self):
        ds = self._ds()
        if ds is not None and ds._records is not None:
            ds._merge_records(self._merge_size)

    def slots_shuffle(self, slots):
        if not self._fea_eval:
            raise RuntimeError("core.Dataset.slots_shuffle: call set_fea_eval(...) first (fea eval mode)")
        ds = self._ds()
        if ds is not None and ds._records is not None:
            ds._shuffle_slots(set(slots), self._record_candidate_size)

    def _call(self, name, *args):
        ds = self._ds()
        if ds is None:
            return None
        return getattr(ds, name)(*args)

    def load_into_memory(self):
        self._call("load_into_memory")

    def preload_into_memory(self):
        self._call("load_into_memory")

    def wait_preload_done(self):
        pass

    def local_shuffle(self):
        self._call("local_shuffle")

    def release_memory(self):
        self._call("release_memory")

    def get_memory_data_size(self):
        ds = self._ds()
        return 0 if ds is None or getattr(ds, "_records", None) is None else len(ds._records)

    def get_shuffle_data_size(self):
        ds = self._ds()
        return 0 if ds is None else getattr(ds, "_shuffled", 0)

    def get_pv_data_size(self):
        return 0


class Fleet:
    """core.Fleet(): Paddle's FleetWrapper handle. Its pslib settings have nothing to drive here (pslib is
    not supported); as a Paddle build without pslib, they are accepted and the cache threshold is 0."""

    def set_client2client_config(self, request_timeout_ms, connect_timeout_ms, max_retry):
        return None

    def get_cache_threshold(self, table_id):
        return 0.0
