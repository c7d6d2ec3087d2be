"""Op type -> torch lowering (registry.py), block -> generated python function (codegen.py)."""
