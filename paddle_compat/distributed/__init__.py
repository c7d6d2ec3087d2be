"""Launchers: `python -m paddle_compat.distributed.launch` (collective) and `...launch_ps` (pserver mode)."""
