"""porter: port PyTorch CUDA training repositories to Cambricon MLU and Hygon DCU / ROCm.

The Python API (porter/api.py), loaded on first use so that `import porter` stays cheap:

    import porter

    result = porter.check("repo", target="mlu")      # -> porter.CheckReport
    done = porter.convert("repo", target="mlu")      # -> porter.ConvertReport

`porter.check` and `porter.convert` are also the modules of those features (porter/check/,
porter/convert.py): calling one runs the API function of the same name.
"""

import types as _types

__version__ = "0.1.0"

_API = ("CheckReport", "ConvertReport", "ConfigError", "RuleError", "Finding", "settings_for")
__all__ = ["__version__", "check", "convert", *_API]


class _ApiDoc:
    """`__doc__` of a feature module: the API function's docstring, then the module's own;
    the class's docstring on the class itself."""

    def __init__(self, class_doc: str) -> None:
        self.class_doc = class_doc

    def __get__(self, module, owner=None):
        if module is None:
            return self.class_doc
        own = module.__dict__.get("__doc__") or ""
        return f"{module._api().__doc__}\n\n(Also the module of the feature: {own.strip()})"

    def __set__(self, module, value) -> None:  # a data descriptor: read before the module's dict
        module.__dict__["__doc__"] = value


class FeatureModule(_types.ModuleType):
    """A feature's module that is also its API call: `porter.check(...)`, `porter.convert(...)`.

    The API module is found by name at call time: the root package is a facade over the
    layers, not one of them (pyproject [tool.importlinter]). Its signature and docstring
    are the API function's, so that `help()`, `inspect.signature` and editors show the
    parameters (loaded when asked for: `import porter` stays cheap).
    """

    def _api(self):
        import importlib

        return getattr(importlib.import_module("porter.api"), self.__name__.rpartition(".")[2])

    def __call__(self, *args, **kwargs):
        return self._api()(*args, **kwargs)

    @property
    def __signature__(self):
        import inspect

        return inspect.signature(self._api())


FeatureModule.__doc__ = _ApiDoc(FeatureModule.__doc__)  # type: ignore[assignment]


def __getattr__(name: str):
    import importlib

    if name in ("check", "convert"):
        return importlib.import_module(f"porter.{name}")
    if name in _API:
        return getattr(importlib.import_module("porter.api"), name)
    raise AttributeError(f"module 'porter' has no attribute {name!r}")
