"""mock_torch: run PyTorch scripts unchanged on oneflow_like.

    python -m oneflow_like.mock_torch script.py ARGS      # the whole script
    from oneflow_like import mock_torch
    mock_torch.enable()                                    # or: with mock_torch.enable(): ...
    import torch, torch.nn.functional as F                 # -> oneflow_like, oneflow_like.nn.functional
    mock_torch.disable()

enable() puts an import hook first on sys.meta_path (nothing is written to disk): `torch` and
every `torch.X.Y` resolve to `oneflow_like.X.Y`, a real module or a module-valued attribute
(torch.cuda -> oneflow_like.cuda). What a script imports is a thin view of our module: reads
and writes go to it, and a name we lack raises an error naming both the torch name and ours
(AttributeError, or ModuleNotFoundError for a module). disable() removes the hook and the
`torch*` entries it made, and puts back any it replaced (a real torch imported before).
"""
import dis
import importlib
import importlib.abc
import importlib.machinery
import sys
import types

_TORCH = "torch"
_OURS = "oneflow_like"


def _ours(name):
    """torch.X.Y -> oneflow_like.X.Y."""
    return _OURS + name[len(_TORCH) :]


def _resolve(name):
    """The oneflow_like module behind the torch name `name`; ModuleNotFoundError naming both."""
    target = _ours(name)
    try:
        return importlib.import_module(target)
    except ModuleNotFoundError as e:
        if e.name != target:  # something the module itself imports is missing: not ours to rename
            raise
    parent, _, last = target.rpartition(".")
    value = getattr(importlib.import_module(parent), last, None) if parent else None
    if isinstance(value, types.ModuleType):
        return value
    raise ModuleNotFoundError(
        f"No module named '{name}' (mock_torch: oneflow_like has no module '{target}')", name=name
    )


class _View(types.ModuleType):
    """What `import torch...` yields: attribute reads and writes go to the oneflow_like module;
    submodules come back as views too, so a missing name anywhere names its torch path."""

    def __init__(self, name, real):
        super().__init__(name, getattr(real, "__doc__", None))
        object.__setattr__(self, "_real", real)
        for attr in ("__path__", "__file__"):
            if hasattr(real, attr):
                object.__setattr__(self, attr, getattr(real, attr))

    def __getattr__(self, attr):
        real = object.__getattribute__(self, "_real")
        try:
            value = getattr(real, attr)
        except AttributeError:
            missing = f"mock_torch: {real.__name__}.{attr} does not exist in oneflow_like"
            if _in_import_from(sys._getframe(1)):
                # `from torch.X import Y`: Python would replace an AttributeError with its own
                # message, which does not say what is missing; an ImportError passes through.
                raise ImportError(
                    f"cannot import name '{attr}' from '{self.__name__}' ({missing})",
                    name=self.__name__,
                ) from None
            raise AttributeError(
                f"module '{self.__name__}' has no attribute '{attr}' ({missing})"
            ) from None
        if isinstance(value, types.ModuleType) and value.__name__.startswith(_OURS):
            return _view(f"{self.__name__}.{attr}", value)
        return value

    def __setattr__(self, attr, value):
        if attr.startswith("__") and attr.endswith("__"):
            object.__setattr__(self, attr, value)
        elif isinstance(value, _View):  # the import system binds submodules on their parent
            object.__setattr__(self, attr, value)
        else:
            setattr(object.__getattribute__(self, "_real"), attr, value)

    def __dir__(self):
        return dir(object.__getattribute__(self, "_real"))


def _in_import_from(frame):
    """Whether `frame` is executing a `from ... import name` (the IMPORT_FROM instruction)."""
    try:
        code = frame.f_code.co_code
        return dis.opname[code[frame.f_lasti]] == "IMPORT_FROM"
    except (AttributeError, IndexError):
        return False


_views = {}


def _view(name, real):
    v = _views.get(name)
    if v is None or object.__getattribute__(v, "_real") is not real:
        v = _views[name] = _View(name, real)
    return v


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path=None, target=None):
        if fullname != _TORCH and not fullname.startswith(_TORCH + "."):
            return None
        real = _resolve(fullname)
        is_pkg = hasattr(real, "__path__")
        return importlib.machinery.ModuleSpec(fullname, self, is_package=is_pkg)

    def create_module(self, spec):
        v = _view(spec.name, _resolve(spec.name))
        if v.__spec__ is None:
            object.__setattr__(v, "__spec__", spec)
            object.__setattr__(v, "__loader__", self)
        return v

    def exec_module(self, module):
        pass


_finder = _Finder()
_saved = {}  # torch* modules that were in sys.modules before enable()


class _Enabled:
    """enable()'s result: also a context manager that disables on exit."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        disable()
        return False


def enable():
    """Makes `import torch` (and torch.X.Y) resolve to oneflow_like from now on."""
    if _finder not in sys.meta_path:
        for name in [n for n in sys.modules if n == _TORCH or n.startswith(_TORCH + ".")]:
            _saved[name] = sys.modules.pop(name)
        sys.meta_path.insert(0, _finder)
    return _Enabled()


def disable():
    """Undoes enable(): torch imports go to a real torch again (if one is installed)."""
    if _finder in sys.meta_path:
        sys.meta_path.remove(_finder)
    for name in [n for n in sys.modules if n == _TORCH or n.startswith(_TORCH + ".")]:
        if isinstance(sys.modules[name], _View):
            del sys.modules[name]
    sys.modules.update(_saved)
    _saved.clear()
    _views.clear()


def is_enabled():
    return _finder in sys.meta_path


def run_script(path, argv=()):
    """Runs the file `path` as __main__ with sys.argv = [path, *argv], mock enabled meanwhile."""
    import os
    import runpy

    old_argv, old_path0 = sys.argv, sys.path[0] if sys.path else None
    sys.argv = [path, *argv]
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        with enable():
            return runpy.run_path(path, run_name="__main__")
    finally:
        sys.argv = old_argv
        if sys.path and sys.path[0] != old_path0:
            sys.path.pop(0)


__all__ = ["disable", "enable", "is_enabled", "run_script"]
