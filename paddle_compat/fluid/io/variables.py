"""Which variables a save or load takes (Paddle's is_parameter / is_persistable predicates, explicit lists),
and saving a chosen list to one file per variable or one combined file, by running a program of `save` ops."""

import os

from ...backends.checkpoint_dir import MANIFEST
from ...ir import Parameter, Program, VarType, Variable, default_main_program, program_guard
from ..executor.executor import Executor


def is_parameter(var):
    return isinstance(var, Parameter)


def is_persistable(var):
    if var.type in (VarType.FEED_MINIBATCH, VarType.FETCH_LIST, VarType.READER, VarType.RAW):
        return False
    return var.persistable


def is_belong_to_optimizer(var):
    return getattr(var, "belong_to_optimizer", False)


def get_program_parameter(program):
    return [v for v in program.list_vars() if is_parameter(v)]


def get_program_persistable_vars(program):
    return [v for v in program.list_vars() if is_persistable(v)]


def _get_valid_program(main_program):
    """fluid.io's program argument: None is the default main program, a CompiledProgram its program."""
    if main_program is None:
        return default_main_program()
    if not isinstance(main_program, Program) and hasattr(main_program, "_run_with_executor"):
        main_program = main_program._program
        if main_program is None:   # built from a core.Graph
            raise TypeError("The type of input main_program is invalid, expected type is Program, but received "
                            "None (a CompiledProgram made from a core.Graph)")
    if not isinstance(main_program, Program):
        raise TypeError("The type of input main_program is invalid, expected type is fluid.Program, but "
                        "received %s" % type(main_program))
    return main_program


def _check_exe(executor, fn):
    if not isinstance(executor, Executor):
        raise TypeError("%s: executor must be a fluid.Executor, got %s" % (fn, type(executor).__name__))


def _select(main_program, vars, predicate, fn):
    if main_program is None:
        main_program = default_main_program()
    if not isinstance(main_program, Program):
        inner = getattr(main_program, "_program", None)
        if inner is None:
            raise TypeError("%s: main_program must be a fluid.Program, got %s" % (fn, type(main_program).__name__))
        main_program = inner
    if vars is None:
        seen, out = set(), []
        for v in main_program.list_vars():
            if (predicate is None or predicate(v)) and v.name not in seen:
                seen.add(v.name)
                out.append(v)
        return main_program, out
    out = []
    for v in vars:
        if isinstance(v, str):
            v = main_program.global_block().var(v)
        if not isinstance(v, Variable):
            raise TypeError("%s: vars must be Variables or names, got %r" % (fn, v))
        out.append(v)
    return main_program, out


def _clone_var(block, var):
    return block.create_var(name=var.name, shape=var.shape, dtype=var.dtype, type=var.type,
                            lod_level=var.lod_level, persistable=True)


def _io_program(ops_of):
    prog = Program()
    with program_guard(prog, Program()):
        ops_of(prog.global_block())
    return prog


def save_selected(executor, dirname, vs, filename=None):
    """Save the variables vs (chosen already) from the executor's scope: dirname/<name> each, or all into
    dirname/filename."""
    dirname = os.path.normpath(dirname)
    os.makedirs(dirname, exist_ok=True)
    # a local save over a pserver job's checkpoint: its manifest no longer describes the files
    stale = os.path.join(dirname, MANIFEST)
    if os.path.exists(stale):
        os.unlink(stale)

    def build(block):
        cloned = [_clone_var(block, v) for v in vs]
        if filename is None:
            for v in cloned:
                block.append_op(type="save", inputs={"X": [v]},
                                attrs={"file_path": os.path.join(dirname, v.name), "overwrite": True})
        elif cloned:
            # Paddle writes (and reads) a combined file in variable-name order, whatever order it was given
            cloned.sort(key=lambda v: v.name)
            block.append_op(type="save_combine", inputs={"X": cloned},
                            attrs={"file_path": os.path.join(dirname, filename)})

    executor.run(_io_program(build))


def get_parameter_value(para, executor):
    """A parameter's value (numpy) from the executor's scope, fetched by a program holding only that variable."""
    if not is_parameter(para):
        raise AssertionError("The input variable is not parameter.")
    prog = _io_program(lambda block: None)
    return executor.run(prog, feed={}, fetch_list=[_clone_var(prog.global_block(), para)])[0]


def get_parameter_value_by_name(name, executor, program=None):
    program = default_main_program() if program is None else program
    return get_parameter_value(program.global_block().var(name), executor)
