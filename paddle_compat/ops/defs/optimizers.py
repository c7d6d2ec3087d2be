"""Optimizer update ops (Paddle's operators/optimizers/): declared here, their kernels live with the backend
(backends/lowering/kernels/optimizer_ops.py: the Hogwild moment lock, SelectedRows gradients).

sgd .. adamax carry no `differentiable=False` on purpose: they always have, and backward never reaches an
update op (it runs after the loss), so the fact changes nothing but it is kept as it was.
"""

from ..registry import declare

declare("sgd", inputs=("Param", "Grad", "LearningRate"), outputs=("ParamOut",))
declare("momentum", inputs=("Param", "Grad", "Velocity", "LearningRate"), outputs=("ParamOut", "VelocityOut"))
declare("adam", inputs=("Param", "Grad", "LearningRate", "Moment1", "Moment2", "Beta1Pow", "Beta2Pow"),
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
declare("dpsgd", inputs=("Param", "Grad", "LearningRate"), outputs=("ParamOut",), differentiable=False)
declare("average_accumulates",
        inputs=("param", "in_sum_1", "in_sum_2", "in_sum_3", "in_num_accumulates", "in_old_num_accumulates",
                "in_num_updates"),
        outputs=("out_sum_1", "out_sum_2", "out_sum_3", "out_num_accumulates", "out_old_num_accumulates",
                 "out_num_updates"), differentiable=False)
