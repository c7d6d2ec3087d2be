"""The lowering's fused ops (Paddle keeps its own in operators/fused/): k lookups of one table sum-pooled
(backends/lowering/fusion.py), fc's product and bias add as one addmm (fusion_fc.py), softmax + cross_entropy +
mean as one node (fusion_loss.py), grouped momentum / sgd updates (fusion_optim.py), mixed precision's
loss-scaling check (fusion_amp.py). No program names them: the lowering forms them. Kernels:
backends/lowering/kernels/fused_ops.py."""

from ..registry import declare

declare("fused_lookup_seqpool_sum", inputs=("Ids*", "W"), outputs=("Out*",), lod_in=("Ids*",), lod_out=("Out*",))
declare("fused_mul_add_bias", inputs=("X", "Y", "Bias"), outputs=("Out",))
declare("fused_softmax_cross_entropy_mean", inputs=("X", "Label"), outputs=("Out",), no_grad=("Label",))
declare("fused_momentum_group", inputs=("Param*", "Grad*", "Velocity*", "LearningRate"),
        outputs=("ParamOut*", "VelocityOut*"))
declare("fused_sgd_group", inputs=("Param*", "Grad*", "LearningRate"), outputs=("ParamOut*",))
# k elementwise_div + k reduce_sum, concat, reduce_sum, isfinite, logical_not, update_loss_scaling as one op;
# its attributes are update_loss_scaling's
declare("fused_amp_unscale_check_update", inputs=("X*", "PrevLossScaling", "InGoodSteps", "InBadSteps"),
        outputs=("Out*", "FoundInfinite", "LossScaling", "OutGoodSteps", "OutBadSteps"), differentiable=False)
