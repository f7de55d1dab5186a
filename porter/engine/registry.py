"""Which pipeline handles which file: one explicit, ordered list of file types.

A pipeline ("find" function) is a pure function of the file's bytes and the active rules.
It returns a `Found` (the text and its findings, some with edits: porter/core/edits.py),
`Skipped` (not readable as its type) or None (nothing to look at); the engine
(porter/engine/pipeline.py) applies or reports what it found.

The first file type whose predicate accepts a path wins: Python first (a `.py` file always
goes through the Python pipeline), compose files before other YAML.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from porter.core.edits import Found
from porter.core.model import Skipped
from porter.filetypes.compose import find_compose, is_compose
from porter.filetypes.docker import find_dockerfile, is_dockerfile
from porter.filetypes.json_config import find_json, is_json_config
from porter.filetypes.notebook import find_notebook, is_notebook
from porter.filetypes.pyproject import find_pyproject, is_pyproject
from porter.filetypes.requirements import find_requirements, is_requirements_file
from porter.filetypes.setup_cfg import find_setup_cfg, is_setup_cfg
from porter.filetypes.shell import find_shell, is_shell
from porter.filetypes.yaml_config import find_yaml, is_yaml_config
from porter.python.analyze import find_python
from porter.rules import ActiveRules

Find = Callable[[str, bytes, ActiveRules], Found | Skipped | None]


@dataclass(frozen=True)
class FileType:
    name: str
    matches: Callable[[str, bytes], bool]  # (relative path, first bytes) -> is it this type
    find: Find


def _is_python(rel: str, head: bytes) -> bool:
    if rel.endswith((".py", ".pyi")):
        return True
    return "." not in rel.rsplit("/", 1)[-1] and head.startswith(b"#!") and b"python" in head.split(b"\n", 1)[0]


FILE_TYPES: tuple[FileType, ...] = (
    FileType("python", _is_python, find_python),
    FileType("compose", is_compose, find_compose),
    FileType("dockerfile", is_dockerfile, find_dockerfile),
    FileType("json", is_json_config, find_json),
    FileType("notebook", is_notebook, find_notebook),
    FileType("pyproject", is_pyproject, find_pyproject),
    FileType("requirements", is_requirements_file, find_requirements),
    FileType("setup-cfg", is_setup_cfg, find_setup_cfg),
    FileType("shell", is_shell, find_shell),
    FileType("yaml", is_yaml_config, find_yaml),
)
_BY_NAME = {t.name: t for t in FILE_TYPES}


def head_matters(rel: str) -> bool:
    """Whether a file's first bytes can decide its type: only when its name has no extension.

    Every other file is judged by its name alone, so that porter need not open the images
    and documents of a tree.
    """
    return "." not in rel.rsplit("/", 1)[-1]


def file_type(name: str) -> FileType:
    """A file type already recognised (by `type_for`)."""
    return _BY_NAME[name]


def type_for(rel: str, head: bytes) -> FileType | None:
    return next((t for t in FILE_TYPES if t.matches(rel, head)), None)
