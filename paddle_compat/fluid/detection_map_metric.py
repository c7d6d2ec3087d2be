"""fluid.metrics.DetectionMAP: the detection mAP of each batch and accumulated over batches, recorded in the
main program as Paddle 1.8 records it (two detection_map ops, the second reading and writing persistable
states, and a has_state flag set after each batch; reset(exe) clears the flag)."""

from . import layers
from .initializer import Constant
from .layer_helper import LayerHelper
from .layers.detection import detection_map
from ..ir import Program, program_guard, unique_name

__all__ = ["DetectionMAP"]


class DetectionMAP:
    def __init__(self, input, gt_label, gt_box, gt_difficult=None, class_num=None, background_label=0,
                 overlap_threshold=0.5, evaluate_difficult=True, ap_version="integral"):
        self.helper = LayerHelper("map_eval")
        gt_label = layers.cast(x=gt_label, dtype=gt_box.dtype)
        if gt_difficult is not None:
            gt_difficult = layers.cast(x=gt_difficult, dtype=gt_box.dtype)
            label = layers.concat([gt_label, gt_difficult, gt_box], axis=1)
        else:
            label = layers.concat([gt_label, gt_box], axis=1)
        # the mAP of the batch
        cur = detection_map(input, label, class_num, background_label, overlap_threshold=overlap_threshold,
                            evaluate_difficult=evaluate_difficult, ap_version=ap_version)
        # the true / false positive states carry a LoD (rows per class): declared with lod_level 1 so it is
        # kept between runs (Paddle's variables say 0 and carry it at run time all the same)
        states = [self._create_state("accum_pos_count", "int32", None),
                  self._create_state("accum_true_pos", "float32", None, lod_level=1),
                  self._create_state("accum_false_pos", "float32", None, lod_level=1)]
        self.has_state = self._create_state("has_state", "int32", [1])
        self.helper.set_variable_initializer(self.has_state, initializer=Constant(value=0))
        # the mAP of every batch since reset()
        accum = detection_map(input, label, class_num, background_label, overlap_threshold=overlap_threshold,
                              evaluate_difficult=evaluate_difficult, has_state=self.has_state,
                              input_states=states, out_states=states, ap_version=ap_version)
        layers.fill_constant(shape=self.has_state.shape, value=1, dtype=self.has_state.dtype, out=self.has_state)
        self.cur_map = cur
        self.accum_map = accum

    def _create_state(self, suffix, dtype, shape, lod_level=0):
        return self.helper.create_variable(name="_".join([unique_name.generate(self.helper.name), suffix]),
                                           persistable=True, dtype=dtype, shape=shape, lod_level=lod_level)

    def get_map_var(self):
        """(the batch's mAP, the accumulated mAP) Variables."""
        return self.cur_map, self.accum_map

    def reset(self, executor, reset_program=None):
        """Start accumulating afresh: runs a program setting has_state to 0."""
        reset_program = reset_program or Program()
        with program_guard(main_program=reset_program):
            v = self.has_state
            var = reset_program.current_block().create_var(name=v.name, shape=v.shape, dtype=v.dtype, type=v.type,
                                                           lod_level=v.lod_level, persistable=v.persistable)
            layers.fill_constant(shape=var.shape, value=0, dtype=var.dtype, out=var)
        executor.run(reset_program)
