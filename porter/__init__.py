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


class FeatureModule(_types.ModuleType):
    """A feature's module that is also its API call: `porter.check(...)`, `porter.convert(...)`.

    The API module is found by name at call time: the root package is a facade over the
    layers, not one of them (pyproject [tool.importlinter]).
    """

    def __call__(self, *args, **kwargs):
        import importlib

        api = importlib.import_module("porter.api")
        return getattr(api, self.__name__.rpartition(".")[2])(*args, **kwargs)


def __getattr__(name: str):
    import importlib

    if name in ("check", "convert"):
        return importlib.import_module(f"porter.{name}")
    if name in _API:
        return getattr(importlib.import_module("porter.api"), name)
    raise AttributeError(f"module 'porter' has no attribute {name!r}")
