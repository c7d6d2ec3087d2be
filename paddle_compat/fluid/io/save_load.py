"""Saving and loading: one file per variable in Paddle's tensor format (or one combined file), each
written atomically; inference models as a pruned program plus its parameters.

Like Paddle, saving and loading build a small program of `save`/`load` ops and run it with the
executor, so values are read from and written to the executor's scope.
"""

import json
import os
import warnings

from ...backends.checkpoint_dir import check_sha256, verify
from ...backends.ps.records import is_pserver_program, is_trainer_program
from ...ir import Program, Scope, Variable, default_main_program, global_scope, prune_for_inference
from ...ir.proto_desc import serialize_inference_model, strip_feed_fetch
from ...ir.serialization import parse_model_file, program_from_dict
from ...ir.tensor_format import atomic_write
from .dist import distributed_save, load_table_shards, pserver_load
from .remote_params import save_remote_params
from .table_export import localize_tables, save_with_tables
from .variables import (_check_exe, _clone_var, _get_valid_program, _io_program, _select, get_program_parameter,  # noqa: F401
                        get_parameter_value, get_parameter_value_by_name, get_program_persistable_vars,
                        is_parameter, is_persistable, loads_combined, parsed_state_vars, save_selected)

__all__ = ["save_vars", "save_params", "save_persistables", "load_vars", "load_params", "load_persistables",
           "save_inference_model", "load_inference_model", "is_parameter", "is_persistable",
           "get_program_parameter", "get_program_persistable_vars", "get_parameter_value",
           "get_parameter_value_by_name"]

MODEL_FILENAME = "__model__"


def save_vars(executor, dirname, main_program=None, vars=None, predicate=None, filename=None):
    """Save variables to dirname/<var name> (or all into dirname/filename), from the global scope."""
    _check_exe(executor, "save_vars")
    main_program, vs = _select(main_program, vars, predicate, "save_vars")
    if _is_distributed_trainer(main_program) and vars is None:
        return distributed_save(executor, dirname, main_program, vs, filename)
    return save_selected(executor, dirname, vs, filename)


def save_params(executor, dirname, main_program=None, filename=None):
    return save_vars(executor, dirname, main_program, None, is_parameter, filename)


def save_persistables(executor, dirname, main_program=None, filename=None):
    program = main_program if isinstance(main_program, Program) else None
    if program is not None and program._is_distributed and not _is_distributed_trainer(program) and \
            program._parameters_on_pservers is not None:
        # a program that says where its parameters live without being one of our transpiled trainers (Paddle's
        # own tests build one by hand): Paddle's route, recv_save of each remote parameter
        return save_remote_params(executor, dirname, program,
                                  lambda local: save_vars(executor, dirname, program, local, None, filename))
    return save_vars(executor, dirname, main_program, None, is_persistable, filename)


def load_vars(executor, dirname, main_program=None, vars=None, predicate=None, filename=None):
    """Load variables from dirname (files named after the variables), into the global scope."""
    _check_exe(executor, "load_vars")
    main_program, vs = _select(main_program, vars, predicate, "load_vars")
    if dirname is None:      # Paddle's load from memory: filename holds the bytes save_vars returned
        if filename is None:
            raise ValueError("load_vars: dirname and filename are both None: nothing to load from")
        return loads_combined(filename, vs)
    if _is_pserver_program(main_program) and vars is None:
        return pserver_load(executor, dirname, main_program, vs)
    manifest = verify(dirname)       # a pserver job's checkpoint: refuse an interrupted save, naming its parts
    if not os.path.isdir(dirname):
        raise ValueError("load_vars: there is no directory %s" % dirname)
    missing = [v for v in vs if filename is None and not os.path.exists(os.path.join(dirname, v.name))]
    if missing:   # distributed tables saved by the pservers, as shards <table>.block<i>
        done = set(v.name for v in load_table_shards(executor, dirname, missing))
        vs = [v for v in vs if v.name not in done]
        missing = [v.name for v in missing if v.name not in done]
    if missing:
        raise ValueError("load_vars: %s has no file for variable(s) %s" % (dirname, ", ".join(missing[:10])))

    def build(block):
        cloned = [_clone_var(block, v) for v in vs]
        if filename is None:
            for v in cloned:
                block.append_op(type="load", outputs={"Out": [v]},
                                attrs={"file_path": os.path.join(dirname, v.name)})
        elif cloned:
            cloned.sort(key=lambda v: v.name)      # the order Paddle wrote them in
            block.append_op(type="load_combine", outputs={"Out": cloned},
                            attrs={"file_path": os.path.join(dirname, filename)})

    # load into a scratch scope and move the values over only when every file read cleanly, so a bad
    # file leaves the scope as it was (nothing half-loaded)
    if manifest is not None and filename is None:
        for v in vs:
            check_sha256(manifest, dirname, v.name)
    staging = Scope()
    executor.run(_io_program(build), scope=staging)
    scope = global_scope()
    for v in vs:
        src = staging.find_var(v.name)
        if src is not None:
            dst = scope.var(v.name)
            dst.value, dst.lod = src.value, src.lod


def load_params(executor, dirname, main_program=None, filename=None):
    program, _ = _select(main_program, [], None, "load_params")
    parsed = parsed_state_vars(program)
    if parsed is not None:
        # Paddle 1.8.5 loads nothing here, silently; the program would then run on whatever the scope holds
        raise ValueError(
            "load_params: the program holds no parameters, only persistable variables (%s): it was parsed from a "
            "ProgramDesc (Paddle's __model__), which does not record which are parameters. Load them with "
            "fluid.io.load_persistables or fluid.io.load_vars (or fluid.io.load_inference_model)"
            % ", ".join(v.name for v in parsed[:10]))
    return load_vars(executor, dirname, main_program, None, is_parameter, filename)


def load_persistables(executor, dirname, main_program=None, filename=None):
    return load_vars(executor, dirname, main_program, None, is_persistable, filename)


def _is_distributed_trainer(program):
    return is_trainer_program(program)


def _is_pserver_program(program):
    return is_pserver_program(program)


def save_inference_model(dirname, feeded_var_names, target_vars, executor, main_program=None,
                         model_filename=None, params_filename=None, export_for_deployment=True,
                         program_only=False):
    """Write the program pruned to target_vars (Paddle's ProgramDesc __model__, with feed/fetch ops) and
    its parameters (Paddle's tensor format). Returns the names of the targets."""
    if isinstance(feeded_var_names, str):
        feeded_var_names = [feeded_var_names]
    if not all(isinstance(n, str) for n in feeded_var_names):
        raise TypeError("save_inference_model: feeded_var_names must be a list of str")
    if isinstance(target_vars, Variable):
        target_vars = [target_vars]
    if not all(isinstance(v, Variable) for v in target_vars):
        raise TypeError("save_inference_model: target_vars must be Variables")
    main_program = main_program or default_main_program()
    if not isinstance(main_program, Program):
        main_program = main_program._program
    gb = main_program.global_block()
    if any(op.type == "auc" for op in gb.ops):   # Paddle 1.8's reminder: the saved auc states are the current ones
        warnings.warn("please ensure that you have set the auc states to zeros before saving inference model")
    for n in feeded_var_names:
        if not gb.has_var(n):
            raise ValueError("save_inference_model: feed variable '%s' is not in the program" % n)
    pruned = prune_for_inference(main_program, feeded_var_names, [v.name for v in target_vars])
    # distributed lookup tables (pserver mode) become local lookup_table parameters, gathered from the pservers
    pruned, tables = localize_tables(pruned, global_scope(), executor)
    os.makedirs(dirname, exist_ok=True)
    fetch_names = [v.name for v in target_vars]
    atomic_write(os.path.join(dirname, model_filename or MODEL_FILENAME),
                 lambda f: f.write(serialize_inference_model(pruned, feeded_var_names, fetch_names)))
    if not program_only and tables:
        save_with_tables(executor, dirname, pruned, tables, params_filename)
    elif not program_only:
        save_persistables(executor, dirname, pruned, params_filename)
    return fetch_names


def load_inference_model(dirname, executor, model_filename=None, params_filename=None, pserver_endpoints=None):
    """Returns [program, feed target names, fetch target Variables]. dirname None: model_filename and
    params_filename are the model's and the parameters' bytes (Paddle's load from memory)."""
    if dirname is None:
        if params_filename is None:
            raise ValueError("The path of params cannot be None when the directory path is None.")
        if not isinstance(model_filename, (bytes, bytearray)):
            raise ValueError("load_inference_model: with dirname None, model_filename must be the model's bytes, "
                             "got %s" % type(model_filename).__name__)
        program, feeds, fetches = read_inference_program("<model in memory>", bytes(model_filename))
        load_persistables(executor, None, program, params_filename)
        return [program, feeds, [program.global_block().var(n) for n in fetches]]
    program, feeds, fetches = read_inference_program(os.path.join(dirname, model_filename or MODEL_FILENAME))
    load_persistables(executor, dirname, program, params_filename)
    return [program, feeds, [program.global_block().var(n) for n in fetches]]


def read_inference_program(path, data=None):
    """The program of an inference model file (Paddle's ProgramDesc, or the JSON this package once wrote),
    without its feed/fetch ops, and the feed and fetch names -> (program, feeds, fetches)."""
    if data is None:
        if not os.path.isfile(path):
            raise ValueError("load_inference_model: no model file %s" % path)
        with open(path, "rb") as f:
            data = f.read()
    if data[:1] == b"{":      # the JSON form this package wrote before it wrote Paddle's ProgramDesc
        model = json.loads(data.decode("utf-8"))
        program = program_from_dict(model)
        feeds, fetches = list(model["feed_var_names"]), list(model["fetch_var_names"])
    else:
        program = parse_model_file(data, path)
        feeds, fetches = strip_feed_fetch(program)
    gb = program.global_block()
    missing = [n for n in feeds + fetches if not gb.has_var(n)]
    if missing:
        raise ValueError("load_inference_model: %s names feed/fetch variable(s) %s that it does not define"
                         % (path, ", ".join(missing)))
    return program, feeds, fetches
