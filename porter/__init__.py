"""porter: port PyTorch CUDA training repositories to Cambricon MLU and Hygon DCU / ROCm.

The Python API is porter/api.py, loaded on first use so that `import porter` stays cheap:

    import porter

    result = porter.check("repo", target="mlu")      # -> porter.CheckReport
    done = porter.convert("repo", target="mlu")      # -> porter.ConvertReport

`porter.check` is `porter.api.check`, and so on for every name of `__all__`; type checkers
read them from __init__.pyi.
"""

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "check",
    "convert",
    "CheckReport",
    "ConvertReport",
    "ConfigError",
    "RuleError",
    "Finding",
    "RunOptions",
    "options_for",
    "settings_for",
]


def __getattr__(name: str) -> object:
    """The API's names, from porter.api when first asked for (PEP 562), then kept here."""
    if name not in __all__:
        raise AttributeError(f"module 'porter' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module("porter.api"), name)
    globals()[name] = value
    return value
