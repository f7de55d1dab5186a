"""Which pipeline handles which file. A handler is a pure function of the file's bytes.

Handlers take (path, data, rules, version, select, ignore) and return a FileResult, or None
when the file is not theirs. Python is built in; other file types register here.
"""

from __future__ import annotations

from collections.abc import Callable

from porter.model import FileResult
from porter.pyconvert import convert_python
from porter.rules import RuleSet

Handler = Callable[[str, bytes, RuleSet, "str | None", tuple, tuple], FileResult]

# (predicate on the relative path and the first bytes, kind label, handler)
_HANDLERS: list[tuple[Callable[[str, bytes], bool], str, Handler]] = []


def register(predicate: Callable[[str, bytes], bool], kind: str, handler: Handler) -> None:
    """Add a file type. Earlier registrations win.

    The predicate sees the path and the first bytes of the file, but the bytes only for a
    name without an extension (a script known by its shebang): every other file is judged
    by its name alone, so that porter need not open the images and documents of a tree.
    """
    _HANDLERS.append((predicate, kind, handler))


def head_matters(rel: str) -> bool:
    """Whether a file's first bytes can decide its type: only when its name has no extension."""
    return "." not in rel.rsplit("/", 1)[-1]


def handler(kind: str) -> Handler:
    """The handler of a file type already recognised (by `handler_for`)."""
    return next(h for _, k, h in _HANDLERS if k == kind)


def handler_for(rel: str, head: bytes) -> tuple[str, Handler] | None:
    for predicate, kind, handler in _HANDLERS:
        if predicate(rel, head):
            return kind, handler
    return None


def _is_python(rel: str, head: bytes) -> bool:
    if rel.endswith((".py", ".pyi")):
        return True
    return "." not in rel.rsplit("/", 1)[-1] and head.startswith(b"#!") and b"python" in head.split(b"\n", 1)[0]


register(_is_python, "python", convert_python)


# Other file types register themselves when their package is imported (after Python, so a
# `.py` file always goes through the Python pipeline).
import porter.files  # noqa: E402,F401
