"""fluid.trainer_desc: the descriptions Paddle 1.8 hands its C++ trainers (TrainerDesc and its kinds), each a
trainer_desc_pb2.TrainerDesc message filled by the _set_* calls.  Here nothing reads them back:
Executor.train_from_dataset takes its settings as arguments; they are kept for scripts and tools that build
or inspect a description (its bytes are Paddle's)."""

import multiprocessing

from .proto import trainer_desc_pb2

__all__ = ["TrainerDesc", "MultiTrainer", "DistMultiTrainer", "PipelineTrainer"]


class TrainerDesc:
    def __init__(self):
        self.proto_desc = trainer_desc_pb2.TrainerDesc()
        self.proto_desc.thread_num = multiprocessing.cpu_count()     # Paddle's default: one per CPU
        self._fleet_desc = None
        self._device_worker = None
        self._program = None
        self._infer = False

    def _set_fetch_var_and_info(self, fetch_vars, fetch_info, print_period):
        info = list(fetch_info)
        cfg = self.proto_desc.fetch_config
        for i, v in enumerate(fetch_vars):
            cfg.fetch_var_names.append(v.name)
            cfg.fetch_var_str_format.append(info[i])
        cfg.print_period = print_period

    def _set_debug(self, debug):
        self.proto_desc.debug = debug

    def _set_thread(self, thread_num):
        self.proto_desc.thread_num = thread_num

    def _set_device_worker(self, device_worker):
        self._device_worker = device_worker

    def _set_infer(self, infer):
        self._infer = infer

    def _set_fleet_desc(self, fleet_desc):
        self._fleet_desc = fleet_desc

    def _gen_trainer_desc(self):
        pass

    def _set_program(self, program):
        self._program = program

    def _set_use_cvm(self, use_cvm=False):
        self.proto_desc.use_cvm = use_cvm

    def _set_no_cvm(self, no_cvm=False):
        self.proto_desc.no_cvm = no_cvm

    def _set_scale_datanorm(self, scale_datanorm=-1):
        self.proto_desc.scale_datanorm = scale_datanorm

    def _set_dump_slot(self, dump_slot):
        self.proto_desc.dump_slot = dump_slot

    def _set_mpi_rank(self, mpi_rank):
        self.proto_desc.mpi_rank = mpi_rank

    def _set_mpi_size(self, mpi_size):
        self.proto_desc.mpi_size = mpi_size

    def _set_dump_fields(self, dump_fields):
        self.proto_desc.dump_fields.extend(dump_fields)

    def _set_dump_fields_path(self, path):
        self.proto_desc.dump_fields_path = path

    def _set_dump_file_num(self, dump_file_num):
        self.proto_desc.dump_file_num = dump_file_num

    def _set_dump_converter(self, converter):
        self.proto_desc.dump_converter = converter

    def _set_dump_param(self, dump_param):
        self.proto_desc.dump_param.extend(dump_param)

    def _set_thread_barrier(self, thread_barrier):
        self.proto_desc.thread_barrier = thread_barrier

    def _set_check_nan_var_names(self, check_nan_var_names):
        self.proto_desc.check_nan_var_names.extend(check_nan_var_names)

    def _set_loss_names(self, loss_names):
        self.proto_desc.loss_names.extend(loss_names)

    def _set_adjust_ins_weight(self, config_dict):
        cfg = self.proto_desc.adjust_ins_weight_config
        cfg.need_adjust = config_dict.get("need_adjust", False)
        cfg.nid_slot = config_dict.get("nid_slot", "")
        cfg.nid_adjw_threshold = config_dict.get("nid_adjw_threshold", 0.0)
        cfg.nid_adjw_ratio = config_dict.get("nid_adjw_ratio", 0.0)
        cfg.ins_weight_slot = config_dict.get("ins_weight_slot", "")

    def _set_copy_table_config(self, config_dict):
        cfg = self.proto_desc.copy_table_config
        cfg.need_copy = config_dict.get("need_copy", False)
        cfg.batch_num = config_dict.get("batch_num", 100)
        pairs = (("src_sparse_tables", "dest_sparse_tables"), ("src_dense_tables", "dest_dense_tables"),
                 ("src_var_list", "dest_var_list"))
        for src_key, dest_key in pairs:
            src, dest = (_as_list(config_dict.get(k, [])) for k in (src_key, dest_key))
            if len(src) != len(dest):
                raise ValueError("len(%s) != len(%s), %s vs %s" % (src_key, dest_key, len(src), len(dest)))
            getattr(cfg, src_key).extend(src)
            getattr(cfg, dest_key).extend(dest)
        for key, values in config_dict.get("dependency_map", {}).items():
            values = _as_list(values)
            if len(values) != 1:
                raise ValueError("dependency len %s != 1" % len(values))
            cfg.table_denpendency_map.add(key=key, values=values)
        cfg.dense_pull_after_copy = config_dict.get("dense_pull_after_copy", True)
        cfg.enable_dependency = config_dict.get("enable_dependency", False)
        cfg.sparse_copy_by_feasign = config_dict.get("sparse_copy_by_feasign", True)

    def _desc(self):
        return self.proto_desc.SerializeToString()

    def __str__(self):
        return str(self.proto_desc)


def _as_list(v):
    return v if isinstance(v, list) else [v]


class _WorkerTrainer(TrainerDesc):
    """A trainer whose device worker writes its part of the description."""
    _CLASS = None

    def _gen_trainer_desc(self):
        super()._gen_trainer_desc()
        self.proto_desc.class_name = self._CLASS
        if self._program is None:
            raise RuntimeError("%s: no program set (_set_program)" % self._CLASS)
        if self._device_worker is None:
            raise RuntimeError("%s: no device worker set (_set_device_worker)" % self._CLASS)
        self._device_worker._set_infer(self._infer)
        self._device_worker._set_program(self._program)
        self._device_worker._gen_worker_desc(self.proto_desc)


class MultiTrainer(_WorkerTrainer):
    """Threads each running the program on their share of the data (a Hogwild device worker)."""
    _CLASS = "MultiTrainer"


class DistMultiTrainer(_WorkerTrainer):
    """MultiTrainer for distributed training (its device worker talks to the parameter servers)."""
    _CLASS = "DistMultiTrainer"


class PipelineTrainer(_WorkerTrainer):
    """Sections of a program run as a pipeline (a Section device worker)."""
    _CLASS = "PipelineTrainer"
