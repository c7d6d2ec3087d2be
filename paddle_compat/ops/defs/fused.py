"""The lowering's fused ops (Paddle keeps its own in operators/fused/): k lookups of one table sum-pooled
(backends/lowering/fusion.py), fc's product and bias add as one addmm (fusion_fc.py), grouped momentum / sgd
updates (fusion_optim.py). No program names them: the lowering forms them. Kernels:
backends/lowering/kernels/fused_ops.py."""

from ..registry import declare

declare("fused_lookup_seqpool_sum", inputs=("Ids*", "W"), outputs=("Out*",), lod_in=("Ids*",), lod_out=("Out*",))
declare("fused_mul_add_bias", inputs=("X", "Y", "Bias"), outputs=("Out",))
declare("fused_momentum_group", inputs=("Param*", "Grad*", "Velocity*", "LearningRate"),
        outputs=("ParamOut*", "VelocityOut*"))
declare("fused_sgd_group", inputs=("Param*", "Grad*", "LearningRate"), outputs=("ParamOut*",))
