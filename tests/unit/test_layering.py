"""Layering of the package, checked on the import graph (every import statement, top-level or inside a
function). Imports point down only:

  paddle_compat/fluid     the user's face (Paddle's module names)
  paddle_compat/backends  lowering to torch, pserver and collective runtimes: never imports fluid
  paddle_compat/ops       one declaration per op type: imports only the IR
  paddle_compat/ir        Program, Block, Operator, Variable, Scope, LoDTensor, file formats: imports nothing above

and fluid.framework / fluid.core hand on the IR's own objects under Paddle's module paths.
"""

import ast
import os
import subprocess
import sys

import paddle_compat

PKG = os.path.dirname(os.path.abspath(paddle_compat.__file__))


def _module_name(path):
    rel = os.path.relpath(path, os.path.dirname(PKG))[:-3].replace(os.sep, ".")
    return rel[: -len(".__init__")] if rel.endswith(".__init__") else rel


def _imports(path):
    """Absolute names of every module an import statement in `path` names (and `from m import x`: m.x too)."""
    mod = _module_name(path)
    pkg = mod if path.endswith("__init__.py") else mod.rsplit(".", 1)[0]
    with open(path) as fh:
        tree = ast.parse(fh.read(), path)
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = pkg.split(".")
                parts = parts[: len(parts) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            out.add(base)
            out.update(base + "." + a.name for a in node.names)
    return out


def _files(sub):
    root = os.path.join(PKG, *sub.split("/"))
    if root.endswith(".py"):
        return [root]
    return [os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith(".py")]


def _offenders(files, forbidden, allowed=()):
    bad = []
    for f in files:
        for name in _imports(f):
            if name.startswith(forbidden) and not name.startswith(tuple(allowed)):
                bad.append("%s imports %s" % (os.path.relpath(f, PKG), name))
    return sorted(bad)


def _above(package):
    """paddle_compat's subpackages other than `package` and those below it."""
    below = {"ir": ("ir",), "ops": ("ops", "ir")}[package]
    names = [n for n in os.listdir(PKG) if n not in below and not n.startswith(("_", "."))]
    return tuple("paddle_compat." + (n[:-3] if n.endswith(".py") else n) for n in names)


def test_import_graph_resolves_relative_imports():
    # the checker itself: backward.py's relative imports resolve to the modules they name
    names = _imports(os.path.join(PKG, "fluid", "backward", "backward.py"))
    assert "paddle_compat.ir.is_autograd_op" in names
    assert "paddle_compat.fluid.backward.recompute" in names


def test_ir_imports_nothing_above_it():
    bad = _offenders(_files("ir"), _above("ir") + ("paddle_compat.fluid", "paddle_compat.backends"))
    assert not bad, "the IR reaches above itself:\n" + "\n".join(bad)


def test_ir_imports_no_torch():
    # runtime holders reach torch through ir/lazy.py, which loads it on first use
    bad = [os.path.relpath(f, PKG) for f in _files("ir") if any(n == "torch" or n.startswith("torch.")
                                                                 for n in _imports(f))]
    assert not bad, bad


def test_importing_the_ir_loads_only_the_ir():
    # In a fresh interpreter, paddle_compat.ir loaded on its own: `paddle_compat` stands as a bare package
    # (its __init__ is the whole fluid API by design), so what loads is what ir/ itself imports.
    code = ("import os, sys, types\n"
            "pkg = types.ModuleType('paddle_compat'); pkg.__path__ = [%r]; sys.modules['paddle_compat'] = pkg\n"
            "before = set(sys.modules)\n"
            "import paddle_compat.ir\n"
            "new = set(sys.modules) - before\n"
            "assert 'paddle_compat.ir.program' in new, sorted(new)\n"
            "bad = [m for m in new if m.startswith('paddle_compat.') and not m.startswith('paddle_compat.ir')]\n"
            "bad += [m for m in new if m == 'torch' or m.startswith('torch.')]\n"
            "print(sorted(bad))\n" % PKG)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", "import paddle_compat.ir loaded: " + out.stdout


def test_ops_import_only_the_ir():
    bad = _offenders(_files("ops"), _above("ops"))
    assert not bad, "op declarations reach above the IR:\n" + "\n".join(bad)


def test_backends_never_import_the_front_end():
    bad = _offenders(_files("backends"), ("paddle_compat.fluid",))
    assert not bad, "backends reach into the front end:\n" + "\n".join(bad)


def test_the_lowering_never_imports_the_pserver_runtime():
    # the pserver runtime lowers its blocks with the lowering and registers its own kernels (backends/ps/kernels.py)
    bad = _offenders(_files("backends/lowering"), ("paddle_compat.backends.ps",))
    assert not bad, "the lowering reaches up into the pserver runtime:\n" + "\n".join(bad)


def test_framework_and_core_hand_on_the_irs_objects():
    from paddle_compat import ir
    from paddle_compat.fluid import core, framework, unique_name
    for name in ("Program", "Block", "Variable", "Parameter", "Operator", "OpRole", "default_main_program",
                 "program_guard", "name_scope", "GRAD_SUFFIX"):
        assert getattr(framework, name) is getattr(ir, name), name
    for name in ("CPUPlace", "CUDAPlace", "Scope", "LoDTensor", "LoDTensorArray", "SelectedRows", "EOFException",
                 "ProgramDesc", "VarDesc"):
        assert getattr(core, name) is getattr(ir, name), name
    assert unique_name.generate is ir.unique_name.generate and unique_name.guard is ir.unique_name.guard


def test_backward_reexports_the_op_facts():
    from paddle_compat.fluid import backward, framework
    from paddle_compat.ir import operator, roles
    assert backward.is_autograd_op is roles.is_autograd_op
    assert operator.OpRole is roles.OpRole and framework.GRAD_SUFFIX == roles.GRAD_SUFFIX


def _imports_inside_functions():
    """(file, line, text) of every import statement inside a function, with whether the line or the one above it
    carries a comment (the reason it is not at the top of the module)."""
    found = []
    for f in _files(""):
        with open(f) as fh:
            src = fh.read()
        lines = src.splitlines()
        seen = set()
        for node in ast.walk(ast.parse(src, f)):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for sub in ast.walk(node):
                if isinstance(sub, (ast.Import, ast.ImportFrom)) and sub.lineno not in seen:
                    seen.add(sub.lineno)
                    text = lines[sub.lineno - 1]
                    reason = "#" in text or lines[sub.lineno - 2].strip().startswith("#")
                    found.append((os.path.relpath(f, PKG), sub.lineno, text.strip(), reason))
    return found


def test_imports_inside_functions_are_few_and_say_why():
    # an import inside a function hides an arrow of the import graph (and the cycle it may dodge): the few left
    # defer a heavy or optional dependency, and say so
    found = _imports_inside_functions()
    unexplained = ["%s:%d %s" % f[:3] for f in found if not f[3]]
    assert not unexplained, "imports inside functions without a reason:\n" + "\n".join(unexplained)
    assert len(found) < 20, "\n".join("%s:%d %s" % f[:3] for f in found)


def test_fluid_modules_are_named_after_what_they_hold():
    # Paddle's module names, or a name saying what the file holds: no catch-alls
    bad = [os.path.relpath(f, PKG) for f in _files("fluid")
           if os.path.basename(f)[:-3].endswith(("_more", "_ext")) or "misc" in os.path.basename(f)]
    assert not bad, bad
