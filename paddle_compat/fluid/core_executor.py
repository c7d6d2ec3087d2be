"""fluid.core.Executor: the C++ executor's Python face, which Paddle's own tests drive directly --
run(program_desc, scope, block_id, create_local_scope, create_vars, fetch_vars).

It runs the program with fluid.Executor. What differs from a Python-side run is where values live: the
program's inputs are read from the scope (a data variable set there with get_tensor().set(...)), the
fetch_vars are left in the scope, and with eager deletion on (FLAGS_eager_delete_tensor_gb >= 0, Paddle
1.8's default) every other non-persistable variable ends the run uninitialised, as Paddle's garbage
collector leaves them. Temporaries never reach a scope here; with eager deletion off they are not kept.
"""

from ..ir.flags import flag_value
from ..ir.program import Program, ProgramDesc

__all__ = ["Executor"]


class Executor:
    def __init__(self, place):
        from .executor.executor import Executor as _PyExecutor   # (fluid.executor imports fluid.core)
        self._exe = _PyExecutor(place)

    def close(self):
        self._exe.close()

    def run(self, program_desc, scope, block_id=0, create_local_scope=True, create_vars=True, fetch_vars=()):
        program = program_desc.program if isinstance(program_desc, ProgramDesc) else program_desc
        if not isinstance(program, Program):
            raise TypeError("core.Executor.run takes a core.ProgramDesc, got %s" % type(program_desc).__name__)
        if block_id != 0:
            raise NotImplementedError("core.Executor.run: block %d; only block 0 (the global block) is run here"
                                      % block_id)
        fetch_vars = list(fetch_vars or [])
        block = program.global_block()
        written = {n for op in block.ops for n in op.output_arg_names}
        # inputs the program reads but no op writes: taken from the scope (Paddle's ops read them there)
        feed = {}
        for name, var in block.vars.items():
            if var.persistable or name in written:
                continue
            held = scope.find_var(name)
            if held is not None and held.is_initialized() and not isinstance(held.value, list):
                feed[name] = held.get_tensor()
        run_scope = scope.new_scope() if create_local_scope else scope
        outs = self._exe._run_program(program, feed, fetch_vars, run_scope, return_numpy=False)
        if create_vars:
            for b in program.blocks:
                for name, var in b.vars.items():
                    (scope if var.persistable else run_scope).var(name)
        if flag_value("FLAGS_eager_delete_tensor_gb") >= 0:
            keep = set(fetch_vars)
            for name in feed:
                if name not in keep:
                    scope.find_var(name).value = None
        for name, value in zip(fetch_vars, outs):
            holder = run_scope.var(name)
            inner = getattr(value, "_holder", None)
            holder.value, holder.lod = (inner.value, inner.lod) if inner is not None else (value, None)
        if create_local_scope:
            scope.drop_kids()
