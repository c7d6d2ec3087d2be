"""`paddle` namespace of paddle_compat: lets unmodified Fluid 1.x scripts `import paddle.fluid as fluid`.

Every `paddle.X.Y` resolves to `paddle_compat.X.Y` -- the *same* module object, so
`paddle.fluid.Program is paddle_compat.fluid.Program` and a module added to paddle_compat needs no edit here.
A meta-path finder does the aliasing; it sits first on sys.meta_path because `paddle.fluid.__path__` is
paddle_compat's directory and the ordinary path finder would otherwise load a second copy of each submodule.

This package is not PaddlePaddle. If a real PaddlePaddle is installed too, importing this one warns
(PaddleShadowWarning) and names where the real one is; set PADDLE_COMPAT_SHADOW_ERROR=1 to make that an error.
"""

import importlib
import importlib.abc
import importlib.util
import os
import sys
import warnings

_PREFIX = __name__ + "."
_TARGET = "paddle_compat."
# top-level names that paddle_compat already uses for something else (paddle_compat.reader is fluid.reader)
_RENAMED = {"reader": "readers"}


class PaddleShadowWarning(RuntimeWarning):
    """A real PaddlePaddle is installed next to paddle_compat's `paddle` namespace."""


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target):
        self.target = target

    def create_module(self, spec):
        # importlib keeps the attributes the module already has (__name__, __path__, __package__), so the
        # alias and the original stay one object with one identity ...
        module = importlib.import_module(self.target)
        self._spec = module.__spec__
        return module

    def exec_module(self, module):
        # ... except __spec__, which it always overwrites: put the original back (relative imports run
        # later inside functions check __spec__.parent against __package__)
        module.__spec__ = self._spec

    # `python -m paddle.distributed.launch` (runpy) runs the original module's code as __main__
    def _original_loader(self):
        spec = importlib.util.find_spec(self.target)
        return spec.loader

    def get_code(self, fullname):
        return self._original_loader().get_code(self.target)

    def is_package(self, fullname):
        return self._original_loader().is_package(self.target)


class _AliasFinder(importlib.abc.MetaPathFinder):
    """paddle.X.Y -> paddle_compat.X.Y, for any X.Y that paddle_compat has."""

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith(_PREFIX):
            return None
        rest = fullname[len(_PREFIX):]
        head, dot, tail = rest.partition(".")
        real = _TARGET + _RENAMED.get(head, head) + dot + tail
        try:
            found = importlib.util.find_spec(real)
        except ModuleNotFoundError:
            found = None
        if found is None:
            return None   # let other finders try (e.g. a test tree laid out as paddle/fluid/tests)
        return importlib.util.spec_from_loader(fullname, _AliasLoader(real),
                                               is_package=found.submodule_search_locations is not None)


def _real_paddle_locations():
    """Where a real PaddlePaddle is installed (dist metadata or another `paddle` package on sys.path)."""
    here = os.path.dirname(os.path.abspath(__file__))
    found = []
    try:
        from importlib import metadata
        for dist_name in ("paddlepaddle", "paddlepaddle-gpu", "paddlepaddle_gpu"):
            try:
                dist = metadata.distribution(dist_name)
            except metadata.PackageNotFoundError:
                continue
            found.append("%s %s (%s)" % (dist.metadata["Name"], dist.version, dist.locate_file("")))
    except Exception:  # metadata lookups must never break `import paddle`
        pass
    for entry in sys.path:
        cand = os.path.join(entry or os.getcwd(), "paddle")
        # fluid/core.py: Paddle 1.x-2.x; base/core.py: Paddle 3.x
        if os.path.isdir(cand) and os.path.abspath(cand) != here and \
                any(os.path.exists(os.path.join(cand, sub, "core.py")) for sub in ("fluid", "base")):
            found.append(cand)
    return found


def _check_shadowing():
    real = _real_paddle_locations()
    if not real:
        return
    msg = ("`import paddle` gives paddle_compat (Fluid 1.x on PyTorch), not PaddlePaddle, but a real "
           "PaddlePaddle is also installed: %s. Uninstall one of them, or import paddle_compat directly."
           % "; ".join(real))
    if os.environ.get("PADDLE_COMPAT_SHADOW_ERROR") == "1":
        raise ImportError(msg)
    warnings.warn(msg, PaddleShadowWarning, stacklevel=3)


_check_shadowing()

if not any(isinstance(f, _AliasFinder) for f in sys.meta_path):
    sys.meta_path.insert(0, _AliasFinder())

import paddle_compat as _pc  # noqa: E402


def _alias_loaded_modules():
    """paddle.X.Y in sys.modules for every paddle_compat.X.Y already loaded. Importing an alias through the
    finder ends with importlib setting it as an attribute of its parent package, which would replace a name
    that a module of the same name stands under in Paddle too (fluid.data the function, fluid/data.py;
    fluid.layers.rnn the layer, fluid/layers/rnn): an alias already in sys.modules is returned as is."""
    renamed = {v: k for k, v in _RENAMED.items()}
    for name, module in list(sys.modules.items()):
        if name.startswith(_TARGET) and module is not None:
            head, dot, tail = name[len(_TARGET):].partition(".")
            sys.modules.setdefault(_PREFIX + renamed.get(head, head) + dot + tail, module)


_alias_loaded_modules()
# Scripts that check `paddle.__version__` (or call fluid.require_version) see the Paddle API level this
# package implements (1.8.5); the project's own version is `paddle.compat_version`.
from paddle_compat.version import full_version as __version__  # noqa: E402
from . import fluid  # noqa: E402,F401
from . import compat  # noqa: E402,F401
from . import reader  # noqa: E402,F401
from paddle_compat.readers import batch  # noqa: E402,F401

compat_version = _pc.__version__


def __getattr__(name):
    # paddle.dataset and friends load on first touch (they are heavier and optional)
    try:
        return importlib.import_module(_PREFIX + name)
    except ModuleNotFoundError as e:
        if e.name != _PREFIX + name:
            raise
    raise AttributeError("module 'paddle' (paddle_compat) has no attribute %r" % name)
