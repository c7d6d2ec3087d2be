"""CompiledProgram._compile(scope, place): Paddle 1.8's explicit compile step, with its checks. The executor
compiles (lowers) on the first run here; what _compile keeps is the scope and place it was compiled for, so
that compiling again for another one is refused as Paddle refuses it, and share_vars_from is checked."""

__all__ = ["CompileChecks"]


class CompileChecks:
    """Mixed into CompiledProgram."""

    def _compile(self, scope, place):
        compiled = getattr(self, "_compiled_for", None)
        if compiled is not None:
            if compiled[0] is not scope:
                raise ValueError("Cannot compile program with different scope.")
            if compiled[1] != place:
                raise ValueError("Cannot compile program with different place.")
            return self
        share = self._share_vars_from
        if self._is_data_parallel and share is not None:
            if not share._is_data_parallel:
                raise ValueError("The shared Program is not data parallel, cannot share variables from it.")
            if share._runner is None and getattr(share, "_compiled_for", None) is None:
                raise ValueError("The shared Program is not compiled and executed, so there is no variables "
                                 "to share.")
        self._compiled_for = (scope, place)
        return self
