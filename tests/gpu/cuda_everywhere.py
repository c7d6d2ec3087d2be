"""A pytest plugin for a GPU sweep (not used by CI): every CPUPlace executor runs on cuda:0, so that the unit
suite shows which kernels or runtime paths leave tensors on the wrong device.

    python -m pytest -p cuda_everywhere tests/unit      (with tests/gpu on sys.path)

Failures that only read a scope's tensor with .numpy() are the tests' own; "Expected all tensors to be on the
same device" and the like are ours to fix."""


def pytest_configure(config):
    import torch
    from paddle_compat.fluid import core
    if not torch.cuda.is_available():
        raise RuntimeError("cuda_everywhere: torch sees no CUDA device")
    core.CUDAPlace(0)._torch_device()            # TF32 off, as for a real CUDAPlace
    core.CPUPlace._torch_device = lambda self: "cuda:0"
