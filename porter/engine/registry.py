"""Which pipeline handles which file: one explicit, ordered list of file types.

A pipeline ("find" function) is a pure function of the file's bytes and the active rules.
It returns a `Found` (the text and its findings, some with edits: porter/core/edits.py),
`Skipped` (not readable as its type) or None (nothing to look at); the engine
(porter/engine/pipeline.py) applies or reports what it found.

The first file type whose predicate accepts a path wins: Python first (a `.py` file always
goes through the Python pipeline), compose files and conda environment files before other YAML.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from porter.filetypes.names import (
    is_compose,
    is_conda_environment,
    is_dockerfile,
    is_json_config,
    is_notebook,
    is_pyproject,
    is_python,
    is_requirements_file,
    is_setup_cfg,
    is_shell,
    is_yaml_config,
)
from porter.rules import ActiveRules

if TYPE_CHECKING:  # what a pipeline returns; the engine that uses it imports it
    from porter.core.edits import Found
    from porter.core.model import Skipped

Find = Callable[[str, bytes, ActiveRules], "Found | Skipped | None"]


@dataclass(frozen=True)
class FileType:
    """A file type: its name, which paths it takes (a cheap test on the name), and where its
    pipeline is ("module:function"), imported by the first process that handles such a file:
    sorting a tree into types loads no YAML, packaging or tree-sitter."""

    name: str
    matches: Callable[[str, bytes], bool]  # (relative path, first bytes) -> is it this type
    pipeline: str

    @property
    def find(self) -> Find:
        return _pipeline(self.pipeline)


@lru_cache(maxsize=None)
def _pipeline(where: str) -> Find:
    module, _, function = where.partition(":")
    return getattr(importlib.import_module(module), function)


FILE_TYPES: tuple[FileType, ...] = (
    FileType("python", is_python, "porter.python.analyze:find_python"),
    FileType("compose", is_compose, "porter.filetypes.compose:find_compose"),
    FileType("conda", is_conda_environment, "porter.filetypes.conda:find_conda"),
    FileType("dockerfile", is_dockerfile, "porter.filetypes.docker:find_dockerfile"),
    FileType("json", is_json_config, "porter.filetypes.json_config:find_json"),
    FileType("notebook", is_notebook, "porter.filetypes.notebook:find_notebook"),
    FileType("pyproject", is_pyproject, "porter.filetypes.pyproject:find_pyproject"),
    FileType("requirements", is_requirements_file, "porter.filetypes.requirements:find_requirements"),
    FileType("setup-cfg", is_setup_cfg, "porter.filetypes.setup_cfg:find_setup_cfg"),
    FileType("shell", is_shell, "porter.filetypes.shell:find_shell"),
    FileType("yaml", is_yaml_config, "porter.filetypes.yaml_config:find_yaml"),
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
