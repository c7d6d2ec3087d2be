"""Paddle 1.8's inference API (`fluid.core.AnalysisConfig`, `NativeConfig`, `create_paddle_predictor`,
`PaddleTensor`, `PaddleBuf`, `PaddleDType`, the zero-copy tensors) over a saved inference model, run by the
Executor on torch.

A predictor owns a Scope holding the model's parameters and an Executor on the configured place; `run`
feeds PaddleTensors in the model's feed order and returns one PaddleTensor per fetch target, the zero-copy
calls hold inputs and outputs by name between runs. Settings that steer Paddle's own engine (IR passes,
MKLDNN, TensorRT, Lite, memory optimisation, profiling) are accepted and recorded, and change nothing here.

Where we differ from Paddle on purpose:
- `PaddleTensor(array)` keeps the array's dtype (float32, int64, int32) and refuses others; Paddle 1.8 could
  turn an int64 or float64 array into INT32 data when another argument needed a conversion.
- zero-copy calls work whether or not `switch_use_feed_fetch_ops(False)` was set (Paddle requires it), and
  one config may make several predictors.
- a model whose op types we cannot run is refused when the predictor is made, naming those ops.
"""

from .config import AnalysisConfig, NativeConfig
from .predictor import AnalysisPredictor, NativePaddlePredictor, PaddlePredictor, create_paddle_predictor
from .tensors import PaddleBuf, PaddleDType, PaddlePlace, PaddleTensor, ZeroCopyTensor

__all__ = ["PaddleDType", "PaddlePlace", "PaddleBuf", "PaddleTensor", "ZeroCopyTensor", "AnalysisConfig",
           "NativeConfig", "PaddlePredictor", "AnalysisPredictor", "NativePaddlePredictor",
           "create_paddle_predictor"]
