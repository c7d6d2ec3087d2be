"""Paddle 1.8's trainer_desc.proto (package paddle.framework) as message classes: TrainerDesc and the
settings of its device workers (what fluid.trainer_desc and fluid.device_worker fill in)."""

from .data_feed_pb2 import DataFeedDesc
from .framework_pb2 import ProgramDesc
from .message import (BOOL, ENUM, FLOAT, INT32, INT64, MESSAGE, OPTIONAL, REPEATED, REQUIRED, STRING, UINT64,
                      Enum, Field, Message)


class TableParameter(Message):
    FIELDS = (Field("table_id", 1, OPTIONAL, UINT64), Field("dense_value_name", 2, REPEATED, STRING),
              Field("dense_grad_name", 3, REPEATED, STRING), Field("push_dense_wait_times", 5, REPEATED, INT32),
              Field("sparse_key_name", 6, REPEATED, STRING), Field("sparse_value_name", 7, REPEATED, STRING),
              Field("sparse_grad_name", 8, REPEATED, STRING), Field("push_sparse_wait_times", 9, REPEATED, INT32),
              Field("emb_dim", 10, OPTIONAL, INT32), Field("fea_dim", 11, OPTIONAL, INT32),
              Field("label_var_name", 12, OPTIONAL, STRING), Field("is_local", 13, OPTIONAL, BOOL, default=False),
              Field("is_async", 14, OPTIONAL, BOOL, default=False), Field("async_wait_op_name", 15, OPTIONAL, STRING))


class ProgramConfig(Message):
    FIELDS = (Field("program_id", 1, REQUIRED, STRING), Field("push_sparse_table_id", 2, REPEATED, INT32),
              Field("push_dense_table_id", 3, REPEATED, INT32), Field("pull_sparse_table_id", 4, REPEATED, INT32),
              Field("pull_dense_table_id", 5, REPEATED, INT32))


class HogwildWorkerParameter(Message):
    FIELDS = (Field("skip_ops", 1, REPEATED, STRING), Field("stat_var_names", 2, REPEATED, STRING))


class DownpourWorkerParameter(Message):
    FIELDS = (Field("sparse_table", 1, REPEATED, MESSAGE, message=TableParameter),
              Field("dense_table", 2, REPEATED, MESSAGE, message=TableParameter),
              Field("skip_ops", 3, REPEATED, STRING),
              Field("program_config", 4, REPEATED, MESSAGE, message=ProgramConfig),
              Field("push_sparse", 5, OPTIONAL, BOOL, default=True),
              Field("push_dense", 6, OPTIONAL, BOOL, default=True),
              Field("stat_var_names", 7, REPEATED, STRING))


class PullDenseWorkerParameter(Message):
    FIELDS = (Field("threshold", 1, OPTIONAL, INT32, default=1), Field("device_num", 2, OPTIONAL, INT32),
              Field("sleep_time_ms", 3, OPTIONAL, INT32, default=2),
              Field("dense_table", 4, REPEATED, MESSAGE, message=TableParameter))


class SectionConfig(Message):
    Place = Enum("Place", [("CPUPlace", 0), ("CUDAPlace", 1), ("CUDAPinnedPlace", 2)])
    CPUPlace, CUDAPlace, CUDAPinnedPlace = 0, 1, 2
    FIELDS = (Field("program_desc", 1, OPTIONAL, MESSAGE, message=ProgramDesc),
              Field("place", 2, OPTIONAL, ENUM, enum=Place), Field("concurrency", 3, OPTIONAL, INT32, default=1),
              Field("section_in_var_names", 4, REPEATED, STRING), Field("section_out_var_names", 5, REPEATED, STRING))


class SectionWorkerParameter(Message):
    FIELDS = (Field("section_config", 1, REPEATED, MESSAGE, message=SectionConfig),
              Field("queue_size", 2, OPTIONAL, INT32, default=1), Field("sync_steps", 3, OPTIONAL, INT64, default=1),
              Field("start_cpu_core_id", 4, OPTIONAL, INT32, default=1), Field("param_need_sync", 5, REPEATED, STRING))


class FetchConfig(Message):
    Method = Enum("Method", [("PRINT", 0)])
    PRINT = 0
    FIELDS = (Field("fetch_var_names", 1, REPEATED, STRING), Field("fetch_var_str_format", 2, REPEATED, STRING),
              Field("print_period", 3, OPTIONAL, INT32, default=100),
              Field("method", 4, OPTIONAL, ENUM, default=0, enum=Method))


class AdjustInsWeightConfig(Message):
    FIELDS = (Field("need_adjust", 1, OPTIONAL, BOOL, default=False),
              Field("nid_slot", 2, OPTIONAL, STRING, default=""),
              Field("nid_adjw_threshold", 3, OPTIONAL, FLOAT, default=0.0),
              Field("nid_adjw_ratio", 4, OPTIONAL, FLOAT, default=0.0),
              Field("ins_weight_slot", 5, OPTIONAL, STRING, default=""))


class TableDependencyMap(Message):
    FIELDS = (Field("key", 1, REQUIRED, INT32), Field("values", 2, REPEATED, INT32))


class CopyTableConfig(Message):
    FIELDS = (Field("need_copy", 1, OPTIONAL, BOOL, default=False), Field("batch_num", 2, OPTIONAL, INT32, default=100),
              Field("src_sparse_tables", 3, REPEATED, INT32), Field("dest_sparse_tables", 4, REPEATED, INT32),
              Field("src_dense_tables", 5, REPEATED, INT32), Field("dest_dense_tables", 6, REPEATED, INT32),
              Field("src_var_list", 7, REPEATED, STRING), Field("dest_var_list", 8, REPEATED, STRING),
              Field("dense_pull_after_copy", 9, OPTIONAL, BOOL, default=False),
              Field("sparse_copy_by_feasign", 10, OPTIONAL, BOOL, default=True),
              Field("enable_dependency", 11, OPTIONAL, BOOL, default=False),
              Field("table_denpendency_map", 12, REPEATED, MESSAGE, message=TableDependencyMap))


class TrainerDesc(Message):
    FIELDS = (Field("class_name", 1, OPTIONAL, STRING), Field("device_worker_name", 2, OPTIONAL, STRING),
              Field("thread_num", 3, OPTIONAL, INT32), Field("binding_cpu", 4, OPTIONAL, BOOL, default=False),
              Field("filelist", 5, REPEATED, STRING), Field("debug", 6, OPTIONAL, BOOL, default=False),
              Field("fetch_config", 7, OPTIONAL, MESSAGE, message=FetchConfig),
              Field("use_cvm", 8, OPTIONAL, BOOL, default=False), Field("dump_slot", 9, OPTIONAL, BOOL, default=False),
              Field("scale_datanorm", 10, OPTIONAL, FLOAT, default=-1.0),
              Field("mpi_rank", 11, OPTIONAL, INT32, default=-1), Field("dump_fields_path", 12, OPTIONAL, STRING),
              Field("dump_fields", 13, REPEATED, STRING), Field("dump_converter", 14, OPTIONAL, STRING),
              Field("dump_param", 15, REPEATED, STRING), Field("mpi_size", 16, OPTIONAL, INT32, default=-1),
              Field("dump_file_num", 17, OPTIONAL, INT32, default=16),
              Field("check_nan_var_names", 18, REPEATED, STRING),
              Field("copy_table_config", 19, OPTIONAL, MESSAGE, message=CopyTableConfig),
              Field("adjust_ins_weight_config", 20, OPTIONAL, MESSAGE, message=AdjustInsWeightConfig),
              Field("no_cvm", 21, OPTIONAL, BOOL, default=False), Field("thread_barrier", 22, OPTIONAL, BOOL),
              Field("loss_names", 23, REPEATED, STRING),
              Field("hogwild_param", 101, OPTIONAL, MESSAGE, message=HogwildWorkerParameter),
              Field("downpour_param", 103, OPTIONAL, MESSAGE, message=DownpourWorkerParameter),
              Field("pull_dense_param", 102, OPTIONAL, MESSAGE, message=PullDenseWorkerParameter),
              Field("section_param", 104, OPTIONAL, MESSAGE, message=SectionWorkerParameter),
              Field("data_desc", 201, OPTIONAL, MESSAGE, message=DataFeedDesc))
