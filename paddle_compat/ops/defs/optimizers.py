"""Optimizer update ops (Paddle's operators/optimizers/): declared here, their kernels live with the backend
(backends/lowering/kernels/optimizer_ops.py: the Hogwild moment lock, SelectedRows gradients).

sgd .. adamax carry no `differentiable=False` on purpose: they always have, and backward never reaches an
update op (it runs after the loss), so the fact changes nothing but it is kept as it was.
"""

from ..registry import OutMeta, declare


def _same(*pairs):
    """infer_shape of an update op: each output slot is its input slot's shape (ParamOut is Param's)."""
    def infer(ins, attrs):
        return {out: OutMeta(ins[slot][0].shape, ins[slot][0].dtype, ins[slot][0].lod_level) for slot, out in pairs}
    return infer


declare("sgd", inputs=("Param", "Grad", "LearningRate"), outputs=("ParamOut",))
declare("momentum", inputs=("Param", "Grad", "Velocity", "LearningRate"), outputs=("ParamOut", "VelocityOut"))
declare("adam", inputs=("Param", "Grad", "LearningRate", "Moment1", "Moment2", "Beta1Pow", "Beta2Pow",
                        "Beta1Tensor", "Beta2Tensor"),
        outputs=("ParamOut", "Moment1Out", "Moment2Out", "Beta1PowOut", "Beta2PowOut"))
declare("adagrad", inputs=("Param", "Grad", "Moment", "LearningRate"), outputs=("ParamOut", "MomentOut"))
declare("rmsprop", inputs=("Param", "Grad", "Moment", "MeanSquare", "MeanGrad", "LearningRate"),
        outputs=("ParamOut", "MomentOut", "MeanSquareOut", "MeanGradOut"))
declare("adamax", inputs=("Param", "Grad", "LearningRate", "Moment", "InfNorm", "Beta1Pow"),
        outputs=("ParamOut", "MomentOut", "InfNormOut"))
declare("ftrl", inputs=("Param", "SquaredAccumulator", "LinearAccumulator", "Grad", "LearningRate"),
        outputs=("ParamOut", "SquaredAccumOut", "LinearAccumOut"), differentiable=False)
declare("decayed_adagrad", inputs=("Param", "Grad", "Moment", "LearningRate"), outputs=("ParamOut", "MomentOut"),
        differentiable=False)
declare("adadelta", inputs=("Param", "Grad", "AvgSquaredGrad", "AvgSquaredUpdate"),
        outputs=("ParamOut", "AvgSquaredGradOut", "AvgSquaredUpdateOut"), differentiable=False)
declare("lamb", inputs=("Param", "Grad", "LearningRate", "Moment1", "Moment2", "Beta1Pow", "Beta2Pow"),
        outputs=("ParamOut", "Moment1Out", "Moment2Out"), differentiable=False)
declare("lars_momentum", inputs=("Param", "Grad", "Velocity", "LearningRate"), outputs=("ParamOut", "VelocityOut"),
        differentiable=False)
declare("dpsgd", inputs=("Param", "Grad", "LearningRate"), outputs=("ParamOut",), differentiable=False,
        host="generator")
declare("average_accumulates",
        inputs=("param", "in_sum_1", "in_sum_2", "in_sum_3", "in_num_accumulates", "in_old_num_accumulates",
                "in_num_updates"),
        outputs=("out_sum_1", "out_sum_2", "out_sum_3", "out_num_accumulates", "out_old_num_accumulates",
                 "out_num_updates"), differentiable=False)

# Paddle 1.8's proximal (L1/L2-regularised) updates and DGC's local update.
declare("proximal_gd", inputs=("Param", "Grad", "LearningRate"), outputs=("ParamOut",),
        infer_shape=_same(("Param", "ParamOut")), differentiable=False)
declare("proximal_adagrad", inputs=("Param", "Moment", "Grad", "LearningRate"), outputs=("ParamOut", "MomentOut"),
        infer_shape=_same(("Param", "ParamOut"), ("Moment", "MomentOut")), differentiable=False)
declare("dgc_momentum", inputs=("current_step", "nranks", "Param", "Grad", "Velocity", "LearningRate"),
        outputs=("Grad_out", "ParamOut", "VelocityOut"),
        infer_shape=_same(("Grad", "Grad_out"), ("Param", "ParamOut"), ("Velocity", "VelocityOut")),
        differentiable=False)
