"""Lowering a block to torch: registry.py (op type -> kernel), plan.py (the BlockPlan: what runs, as data, from
autograd_region.py, fusion*.py, nan_check.py, capture_check.py), emit.py (plan -> generated Python),
codegen.py (lower_block = plan + emit), ctx.py (what kernels see), capture.py (whole-step CUDA graphs),
interpreter.py (the op-by-op reference the differential tests compare against), debug.py (showing the code)."""
