"""Layering of the package, checked on the import graph (every import statement, top-level or inside a
function): op facts sit below both the front end and the backends.

  paddle_compat/ops       imports nothing of paddle_compat.fluid but the leaf dtypes module
  paddle_compat/backends  never imports the front end's builders (fluid.layers, fluid.backward, fluid.optimizer)
  fluid's core modules    (variable, framework, operator, program) never import fluid.layers
"""

import ast
import os

import paddle_compat

PKG = os.path.dirname(os.path.abspath(paddle_compat.__file__))
FRONT_END_BUILDERS = ("paddle_compat.fluid.layers", "paddle_compat.fluid.backward", "paddle_compat.fluid.optimizer")


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
    return bad


def test_import_graph_resolves_relative_imports():
    # the checker itself: backward.py's relative imports resolve to the modules they name
    names = _imports(os.path.join(PKG, "fluid", "backward.py"))
    assert "paddle_compat.ops.roles.is_autograd_op" in names
    assert "paddle_compat.fluid.framework" in names


def test_ops_sit_below_the_front_end():
    assert not _offenders(_files("ops"), ("paddle_compat.fluid", "paddle_compat.backends"),
                          allowed=("paddle_compat.fluid.dtypes",))


def test_backends_do_not_import_front_end_builders():
    bad = _offenders(_files("backends"), FRONT_END_BUILDERS)
    assert not bad, "backends reach into the front end's builders:\n" + "\n".join(bad)


def test_core_front_end_modules_do_not_import_layers():
    files = [p for n in ("variable", "framework", "operator", "program") for p in _files("fluid/%s.py" % n)]
    bad = _offenders(files, ("paddle_compat.fluid.layers", "paddle_compat.fluid.backward"))
    assert not bad, "\n".join(bad)


def test_backward_reexports_the_op_facts():
    from paddle_compat.fluid import backward, framework, operator
    from paddle_compat.ops import roles
    assert backward.is_autograd_op is roles.is_autograd_op
    assert operator.OpRole is roles.OpRole and framework.GRAD_SUFFIX == roles.GRAD_SUFFIX
