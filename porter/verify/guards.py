"""Optional-package guards: an ImportError raised on purpose because a package is absent.

Libraries and training repositories check for optional packages at import time and raise
an ImportError of their own instead of letting `import x` fail:
    if not is_vllm_available(): raise ImportError("vllm is not installed")
    require_version("trl>=0.18")   # transformers: "The 'trl>=0.18' distribution was not
                                   # found and is required by this application"
    requires_backends(obj, ["sentencepiece"])  # "... requires the SentencePiece library
                                               # but it was not found in your environment"
Such a module needs a package this environment lacks, like a ModuleNotFoundError; it says
nothing about the port. Only ImportErrors are read, and only these wordings: an
ImportError about a name a module lacks ("cannot import name") stays a failure.
"""

from __future__ import annotations

import re

# A package, with extras and a version specifier if given ("peft[x]", "trl>=0.18,<=0.24").
_NAME = r"[`'\"]?([A-Za-z][\w.\-]*(?:\[[\w,]+\])?(?:[<>=!~][^\s`'\"]*)?)[`'\"]?"
_SPEC = re.compile(r"^([A-Za-z][\w.\-]*)")
_GUARDS = (
    re.compile(_NAME + r" (?:is|are) not installed", re.IGNORECASE),
    re.compile(r"The " + _NAME + r" distribution was not found and is required", re.IGNORECASE),
    re.compile(r"requires the " + _NAME + r" librar(?:y|ies) but (?:it was|they were) not found", re.IGNORECASE),
    re.compile(_NAME + r" is required for a normal functioning of this module", re.IGNORECASE),
    re.compile(r"(?:please|you need to|you must|to) install " + _NAME, re.IGNORECASE),
    re.compile(r"pip install (?:-U |--upgrade )?" + _NAME, re.IGNORECASE),
)


def needed_package(result: dict) -> str | None:
    """The package an import result says is missing, when it failed on an optional-package
    guard; else None."""
    if result.get("status") != "error" or not result.get("import_error"):
        return None
    message = result.get("error", "").split(": ", 1)[-1]
    for pattern in _GUARDS:
        m = pattern.search(message)
        if m:
            spec = _SPEC.match(m.group(1))  # "trl>=0.18" -> trl, "peft[x]" -> peft
            if spec:
                return spec.group(1).rstrip(".").lower()
    return None
