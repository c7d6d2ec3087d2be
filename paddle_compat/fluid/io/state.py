"""fluid.save / fluid.load and fluid.io.load_program_state / set_program_state (Paddle 1.6+'s state files).

Same files as Paddle 1.8: `<path>.pdparams` (parameters) and `<path>.pdopt` (optimizer state), each a pickled
{name: numpy array} (protocol 2), so state moves both ways between Paddle 1.8 and this package. `<path>.pdmodel`
holds the program as Paddle's ProgramDesc bytes (Program.parse_from_string reads it; load() does not need it).
State files are read with safe_pickle (numpy arrays and plain containers only): unlike Paddle's pickle.load, a
crafted file cannot run code; it is refused naming the file and what it asked for.
"""

import io
import os
import pickle
import warnings

import numpy as np

from ...ir import Program, convert_dtype, dtype_name, global_scope, safe_pickle
from .variables import is_belong_to_optimizer, is_parameter, parsed_state_vars
from ...ir.proto_desc import serialize_program

__all__ = ["save", "load", "load_program_state", "set_program_state"]


def _check_program(program, fn):
    if not isinstance(program, Program):
        raise TypeError("%s: program must be a fluid.Program, got %s" % (fn, type(program).__name__))


def _value(name, fn):
    v = global_scope().find_var(name)
    if v is None or v.value is None:
        raise ValueError("%s: variable '%s' has no value in the scope (did you run the startup program?)"
                         % (fn, name))
    return np.array(v.get_tensor())


def save(program, model_path):
    _check_program(program, "save")
    if not os.path.basename(model_path):
        raise ValueError("save: model_path must be dirname/filename, got %r" % (model_path,))
    dirname = os.path.dirname(model_path)
    if dirname:
        os.makedirs(dirname, exist_ok=True)
    groups = (("pdparams", is_parameter), ("pdopt", is_belong_to_optimizer))
    parsed = set(v.name for v in parsed_state_vars(program) or ())
    if parsed:   # a program parsed from a ProgramDesc: Paddle 1.8.5 saves its persistable variables as .pdopt
        groups = (("pdparams", lambda v: False), ("pdopt", lambda v: v.name in parsed))
    for ext, pick in groups:
        state = {v.name: _value(v.name, "save") for v in program.list_vars() if pick(v)}
        _atomic_write(model_path + "." + ext, _dumps(state))
    _atomic_write(model_path + ".pdmodel", serialize_program(program))    # Paddle's ProgramDesc bytes


def _array_reduce(a):
    # numpy >= 2 pickles arrays through `numpy._core`, which the numpy 1.x beside Paddle 1.8 cannot import:
    # rebuild through `numpy.ndarray(shape, dtype, buffer)`, a path every numpy has.
    a = np.ascontiguousarray(a)
    return np.ndarray, (a.shape, a.dtype.str, a.tobytes())


def _dumps(state):
    buf = io.BytesIO()
    p = pickle.Pickler(buf, protocol=2)
    p.dispatch_table = {np.ndarray: _array_reduce}
    p.dump(state)
    return buf.getvalue()


def _atomic_write(path, data):
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def _read(path):
    # latin1: files pickled by Python 2 builds of Paddle, too. Errors (a refused or corrupt file) name the path.
    state = safe_pickle.load_path(path, encoding="latin1")
    if not isinstance(state, dict):
        raise ValueError("cannot read %s as a state dict: it holds a %s, not a dict {name: array}"
                         % (path, type(state).__name__))
    return state


def load_program_state(model_path, var_list=None):
    """{name: numpy array} from <model_path>.pdparams and, if present, <model_path>.pdopt."""
    params = model_path + ".pdparams"
    if not os.path.exists(params):
        raise ValueError("load_program_state: %s does not exist (expected the file fluid.save wrote)" % params)
    state = dict(_read(params))
    if os.path.exists(model_path + ".pdopt"):
        state.update(_read(model_path + ".pdopt"))
    if var_list is not None:
        names = {v.name if hasattr(v, "name") else v for v in var_list}
        missing = sorted(names - set(state))
        if missing:
            raise ValueError("load_program_state: %s lacks %s" % (model_path, missing))
        state = {k: v for k, v in state.items() if k in names}
    return state


def set_program_state(program, state_dict):
    """Put state_dict's arrays into the scope for the program's parameters and optimizer variables; returns
    the names it set. A shape or dtype mismatch names the variable."""
    _check_program(program, "set_program_state")
    scope = global_scope()
    used = []
    parsed = set(v.name for v in parsed_state_vars(program) or ())
    for var in program.list_vars():
        if not (is_parameter(var) or is_belong_to_optimizer(var) or var.name in parsed) or \
                var.name not in state_dict:
            continue
        arr = np.asarray(state_dict[var.name])
        want = [d for d in var.shape]
        if len(want) != arr.ndim or any(w >= 0 and w != a for w, a in zip(want, arr.shape)):
            raise ValueError("set_program_state: variable '%s' has shape %s, the state has %s"
                             % (var.name, want, list(arr.shape)))
        scope.var(var.name).get_tensor().set(arr.astype(_np_dtype(var), copy=False))
        used.append(var.name)
    unused = sorted(set(state_dict) - set(used))
    if unused:
        warnings.warn("set_program_state: not used by the program: %s" % unused)
    return used


def _np_dtype(var):
    name = dtype_name(convert_dtype(var.dtype))
    return np.float32 if name == "bfloat16" else np.dtype(name)


def load(program, model_path, executor=None, var_list=None):
    """Load what save() wrote into the scope: every parameter (and, if <model_path>.pdopt exists, every
    optimizer variable) of the program must be in the files."""
    _check_program(program, "load")
    state = load_program_state(model_path)
    parsed = parsed_state_vars(program)
    if parsed is not None:
        # a program parsed from a ProgramDesc: every persistable variable, from whichever file holds it
        # (Paddle 1.8.5 looks for them all in .pdopt and fails on the parameters: "Can not find [w] in model
        # file [<path>.pdopt]"; we load them)
        need = [v.name for v in parsed]
    else:
        need = [v.name for v in program.list_vars() if is_parameter(v)]
        if os.path.exists(model_path + ".pdopt"):
            need += [v.name for v in program.list_vars() if is_belong_to_optimizer(v)]
    if var_list is not None:
        need = [v.name if hasattr(v, "name") else v for v in var_list]
    missing = [n for n in need if n not in state]
    if missing:
        files = model_path + ".pdparams" + (" and .pdopt" if os.path.exists(model_path + ".pdopt") else "")
        raise ValueError("load: %s do(es) not hold %s, which the program needs%s" % (
            files, missing, " (all its persistable variables: it was parsed from a ProgramDesc, which does not "
                            "say which are parameters)" if parsed is not None else ""))
    set_program_state(program, {n: state[n] for n in need})
