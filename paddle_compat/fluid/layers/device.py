"""fluid.layers.device: get_places (deprecated in Paddle 1.8, still imported by older scripts)."""

from ...ir import cpu_places, cuda_places, is_compiled_with_cuda

__all__ = ["get_places"]


def get_places(device_count=None, device_type=None):
    """The places a program may run on. Paddle returned a PLACE_LIST variable for ParallelDo (removed
    in 1.x); here it is the Python list that fluid.cpu_places/cuda_places give, which is what the
    remaining users (CompiledProgram, DataLoader) accept."""
    if device_type not in (None, "CPU", "CUDA", "AUTO"):
        raise ValueError("get_places: device_type must be 'CPU', 'CUDA' or 'AUTO', got %r" % (device_type,))
    if device_type == "CUDA" or (device_type == "AUTO" and is_compiled_with_cuda()):
        places = cuda_places()
    else:
        places = cpu_places(device_count)
    return places[:device_count] if device_count else places
