"""fluid.dataset: DatasetFactory, QueueDataset, InMemoryDataset (Paddle 1.6-1.8's file-fed training).

A dataset reads the files of its filelist through a pipe command (usually a script built on
fluid.incubate.data_generator) that writes Paddle's MultiSlot text format, one sample per line, with the
slots of set_use_var in order. Executor.train_from_dataset / infer_from_dataset consume it in batches of
set_batch_size. Not to be confused with `paddle.dataset` (paddle_compat.dataset: downloadable readers).
"""

import threading
import warnings

import numpy as np

from . import core_dataset
from .core_dataset import Dataset as _CoreDataset
from .feed import ReadOpts, Rows, SlotSpec, make_batch, queue_batches, read_file, unpack_feed
from .reader import batch_stream
from .records import drop_zero_feasigns, merge_by_ins_id, record_ins_ids, shuffle_slots
from .shuffle import global_shuffle, trainer_sum
from ...ir import Variable

__all__ = ["DatasetFactory", "DatasetBase", "QueueDataset", "InMemoryDataset", "FileInstantDataset"]


class DatasetFactory:
    """DatasetFactory().create_dataset("QueueDataset" | "InMemoryDataset")."""

    def create_dataset(self, datafeed_class="QueueDataset"):
        cls = _KINDS.get(datafeed_class)
        if cls is None:
            raise ValueError("create_dataset: unknown dataset %r; choose one of %s"
                             % (datafeed_class, sorted(_KINDS)))
        return cls()


class DatasetBase:
    def __init__(self):
        self.pipe_command = "cat"
        self.batch_size = 1
        self.thread_num = 1
        self.filelist = []
        self.use_vars = []
        self.pipe_timeout = 3600.0   # seconds one file's pipe command may take before it is killed
        self.parse_ins_id = False
        self.parse_content = False
        self.dataset = _CoreDataset("MultiSlotDataset", owner=self)   # Paddle's native object, `.dataset`

    # configuration ----------------------------------------------------------------------------------
    def set_pipe_command(self, pipe_command):
        if not isinstance(pipe_command, str):
            raise TypeError("set_pipe_command: expected a shell command string, got %r" % (pipe_command,))
        self.pipe_command = pipe_command

    def set_batch_size(self, batch_size):
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError("set_batch_size: batch_size must be a positive int, got %r" % (batch_size,))
        self.batch_size = batch_size

    def set_thread(self, thread_num):
        if not isinstance(thread_num, int) or thread_num < 1:
            raise ValueError("set_thread: thread_num must be a positive int, got %r" % (thread_num,))
        self.thread_num = thread_num
        self.dataset.set_thread_num(thread_num)

    def set_filelist(self, filelist):
        if isinstance(filelist, str) or not all(isinstance(f, str) for f in filelist):
            raise TypeError("set_filelist: expected a list of file paths, got %r" % (filelist,))
        self.filelist = list(filelist)
        self.dataset.set_filelist(filelist)

    def set_use_var(self, var_list):
        for v in var_list:
            if not isinstance(v, Variable):
                raise TypeError("set_use_var: expected fluid Variables (from fluid.data / layers.data), got %r"
                                % (v,))
        self.use_vars = list(var_list)

    def set_hdfs_config(self, fs_name, fs_ugi):
        """"hdfs:" / "afs:" files are then read with `hadoop fs -D fs.default.name=.. -D hadoop.job.ugi=..
        -cat` (-text for .gz), unless a download command is set; process-wide, as in Paddle."""
        self.dataset.set_hdfs_config(fs_name, fs_ugi)

    def set_download_cmd(self, download_cmd):
        """"hdfs:" / "afs:" files are read with `download_cmd "path"` (its output goes through the pipe
        command); local paths are read directly. Process-wide, as in Paddle."""
        if not isinstance(download_cmd, str):
            raise TypeError("set_download_cmd: expected a shell command string, got %r" % (download_cmd,))
        self.dataset.set_download_cmd(download_cmd)

    # accepted for compatibility: they tune Paddle's C++ feed internals that have no counterpart here
    def set_queue_num(self, queue_num):
        pass

    # each line then starts with "1 <ins id>" / "1 <content>" before its slots
    def set_parse_ins_id(self, parse_ins_id):
        self.parse_ins_id = bool(parse_ins_id)

    def set_parse_content(self, parse_content):
        self.parse_content = bool(parse_content)

    def desc(self):
        return ("name: \"MultiSlotDataFeed\"\nbatch_size: %d\npipe_command: \"%s\"\nslots: %s\n"
                % (self.batch_size, self.pipe_command, [v.name for v in self.use_vars]))

    # reading ---------------------------------------------------------------------------------------
    def _slots(self):
        if not self.use_vars:
            raise ValueError("dataset: call set_use_var([...]) with the program's data variables first")
        return [SlotSpec(v) for v in self.use_vars]

    def _check_files(self):
        """False for an empty filelist: Paddle 1.8.5 then trains on nothing; a warning says so."""
        if not self.filelist:
            warnings.warn("dataset: the filelist is empty (set_filelist([...])): there is nothing to read")
            return False
        return True

    def _opts(self):
        return ReadOpts(int(bool(self.parse_ins_id)) + int(bool(self.parse_content)),
                        core_dataset.download_cmd(), core_dataset.hdfs_cmd())

    def _read(self, path, slots):
        return read_file(path, self.pipe_command, slots, self.pipe_timeout, self._opts())

    def _shards(self, nthreads):
        """One iterator of Rows (a batch each) per reader thread (Paddle gives each thread its own files),
        and the slots."""
        raise NotImplementedError

    _reads_ahead = False   # whether each iterator of _feeds runs ahead by itself (else a thread runs it)

    def _feeds(self, nthreads, drop_last=False):
        """One iterator of feed dicts per reader thread."""
        shards, slots = self._shards(nthreads)
        return [(make_batch(rows, slots) for rows in shard if not drop_last or len(rows) == self.batch_size)
                for shard in shards]


class QueueDataset(DatasetBase):
    """Streams the files: each reader thread runs the pipe command on its files in turn."""

    def _shards(self, nthreads):
        slots = self._slots()
        if not self._check_files():
            return [], slots
        files = [self.filelist[i::nthreads] for i in range(nthreads)]
        opts = self._opts()
        return [queue_batches(f, self.pipe_command, slots, self.batch_size, self.pipe_timeout, opts=opts)
                for f in files if f], slots

    _reads_ahead = True

    def _feeds(self, nthreads, drop_last=False):
        # each thread's files are read, parsed and batched by a helper process (dataset_reader)
        slots = self._slots()
        if not self._check_files():
            return []
        files = [self.filelist[i::nthreads] for i in range(nthreads)]
        opts = self._opts()
        return [(unpack_feed(cols) for cols in batch_stream(f, self.pipe_command, slots, self.batch_size,
                                                         self.pipe_timeout, drop_last, opts))
                for f in files if f]

    def local_shuffle(self):
        raise NotImplementedError("QueueDataset does not support local shuffle; use InMemoryDataset")

    def global_shuffle(self, fleet=None):
        raise NotImplementedError("QueueDataset does not support global shuffle; use InMemoryDataset")


class InMemoryDataset(DatasetBase):
    """Loads every record (load_into_memory), can shuffle them, then feeds them split across threads."""

    def __init__(self):
        super().__init__()
        self._records = None
        self._shuffled = 0
        self._slots_original = None   # the records before slots_shuffle: each call starts from them
        self.fea_eval = False
        self.merge_by_lineid = False
        self.fleet_send_batch_size = None
        self.fleet_send_sleep_seconds = None

    # settings of Paddle's fleet (pslib) training: kept, they have nothing to drive here
    def set_fleet_send_batch_size(self, fleet_send_batch_size=1024):
        self.fleet_send_batch_size = fleet_send_batch_size

    def set_fleet_send_sleep_seconds(self, fleet_send_sleep_seconds=0):
        self.fleet_send_sleep_seconds = fleet_send_sleep_seconds

    def set_generate_unique_feasigns(self, generate_uni_feasigns, shard_num):
        self.gen_uni_feasigns = generate_uni_feasigns
        self.local_shard_num = shard_num

    def generate_local_tables_unlock(self, table_id, fea_dim, read_thread_num, consume_thread_num, shard_num):
        pass

    def set_merge_by_lineid(self, merge_size=2):
        """Records of one ins id are merged into one (dataset.dataset.merge_by_lineid(), or after
        global_shuffle); the ins ids are parsed from then on."""
        self.dataset.set_merge_by_lineid(merge_size)
        self.merge_by_lineid = True
        self.parse_ins_id = True

    def _merge_records(self, merge_size):
        # differs on purpose: Paddle 1.8.5's merge (outside pslib) reads the channels the trainers' readers
        # fill, so after load_into_memory or global_shuffle it finds no record and changes nothing, and after
        # train_from_dataset it leaves the dataset empty; here it merges the loaded records as its
        # documentation and its MergeByInsId say.
        self._records = merge_by_ins_id(self._records, self._slots(), merge_size, np.random)
        self._slots_original = None

    def set_fea_eval(self, record_candidate_size, fea_eval=True):
        """Fea eval mode (needed by slots_shuffle): a slot's values are drawn from a reservoir of up to
        record_candidate_size records."""
        if fea_eval:
            self.dataset.set_fea_eval(fea_eval, record_candidate_size)
        self.fea_eval = fea_eval

    def slots_shuffle(self, slots):
        """Each record's slots named in `slots` take the values of a random record (fea eval: how much a
        slot matters); every call starts from the records as loaded. Without fea eval mode, nothing."""
        if self.fea_eval:
            self._need_records("slots_shuffle")
            self._shuffle_slots(set(slots), self.dataset._record_candidate_size)

    def _shuffle_slots(self, names, capacity):
        if self._slots_original is None:
            self._slots_original = self._records
        self._records = shuffle_slots(self._slots_original, self._slots(), names, capacity, np.random)

    def _read(self, path, slots):
        rows = super()._read(path, slots)
        for block in rows.blocks:
            drop_zero_feasigns(block, slots)
        return rows

    def load_into_memory(self):
        self._check_files()
        slots = self._slots()
        n = min(self.thread_num, len(self.filelist))
        parts = [None] * n
        errors = []

        def load(i):
            try:
                parts[i] = Rows.concat([self._read(p, slots) for p in self.filelist[i::n]])
            except BaseException as e:  # noqa: BLE001  (re-raised in the caller)
                errors.append(e)
        threads = [threading.Thread(target=load, args=(i,), daemon=True) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()   # each read is bounded by pipe_timeout
        if errors:
            raise errors[0]
        # thread i read files i, i+n, ...: concatenating in thread order is deterministic
        self._records = Rows.concat(parts)
        self._shuffled = 0
        self._slots_original = None

    def preload_into_memory(self, thread_num=None):
        self.load_into_memory()

    def wait_preload_done(self):
        pass

    def _need_records(self, what):
        if self._records is None:
            raise RuntimeError("InMemoryDataset.%s: call load_into_memory() first" % what)

    def local_shuffle(self):
        self._need_records("local_shuffle")
        self._records.shuffle(np.random)   # np.random.seed makes it repeatable
        self._shuffled = len(self._records)

    def global_shuffle(self, fleet=None, thread_num=12):
        """Sends each record to a random trainer (fleet.worker_num() of them, over the pserver job's own
        channel: fluid/dataset/shuffle.py), then shuffles locally. Every trainer must call it, after its
        startup program has run (the trainer has then joined the job). Without fleet, or with one trainer,
        a local shuffle. np.random.seed makes the choice repeatable."""
        self._need_records("global_shuffle")
        n = fleet.worker_num() if fleet is not None else 1
        if n > 1:
            ids = record_ins_ids(self._records) if self.merge_by_lineid else None
            self._records = global_shuffle(self._records, len(self._slots()), "InMemoryDataset.global_shuffle",
                                           np.random, ins_ids=ids)
        self.local_shuffle()
        if self.merge_by_lineid:
            self._merge_records(self.dataset._merge_size)

    def release_memory(self):
        self._records = None
        self._shuffled = 0
        self._slots_original = None

    def get_memory_data_size(self, fleet=None):
        """Records held here; with a fleet of several trainers, the sum over all of them (as Paddle)."""
        self._need_records("get_memory_data_size")
        return self._sum(len(self._records), fleet, "get_memory_data_size")

    def get_shuffle_data_size(self, fleet=None):
        self._need_records("get_shuffle_data_size")
        return self._sum(self._shuffled, fleet, "get_shuffle_data_size")

    @staticmethod
    def _sum(value, fleet, what):
        if fleet is None or fleet.worker_num() <= 1:
            return value
        return trainer_sum(value, "InMemoryDataset." + what)

    def _shards(self, nthreads):
        self._need_records("feeding")
        slots = self._slots()
        n = max(1, min(nthreads, len(self._records)))
        per = -(-len(self._records) // n)

        def shard(recs):
            for i in range(0, len(recs), self.batch_size):
                yield recs[i:i + self.batch_size]
        return [shard(self._records[i * per:(i + 1) * per]) for i in range(n)], slots


class FileInstantDataset(QueueDataset):
    """Paddle's FileInstantDataset (its FileInstantDataFeed streams each file as it comes): read here as a
    QueueDataset reads its files."""

    def local_shuffle(self):
        raise NotImplementedError("FileInstantDataset does not support local shuffle; use InMemoryDataset")


_KINDS = {"QueueDataset": QueueDataset, "InMemoryDataset": InMemoryDataset, "FileInstantDataset": FileInstantDataset}
