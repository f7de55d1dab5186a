"""Recognise a LLaMA-Factory checkout, and which generation of it, by its file layout.

porter never imports the code it scans, so the version is read from the layout alone:
- "llmtuner": the early layout (up to 0.7), package ``src/llmtuner`` launched through
  ``src/train_bash.py`` with command-line flags;
- "llamafactory": the later layout (0.8 on), package ``src/llamafactory`` launched through
  the ``llamafactory-cli`` console script with a YAML config.
"""

from __future__ import annotations

from pathlib import Path

LLMTUNER = "llmtuner"
LLAMAFACTORY = "llamafactory"

_PACKAGE = {LLAMAFACTORY: "src/llamafactory", LLMTUNER: "src/llmtuner"}
# Files that declare console scripts: where "llamafactory-cli" is registered.
_PACKAGING_FILES = ("pyproject.toml", "setup.py", "setup.cfg")


def _declares_cli(tree: Path) -> bool:
    for name in _PACKAGING_FILES:
        path = tree / name
        if path.is_file() and "llamafactory-cli" in path.read_text(encoding="utf-8", errors="replace"):
            return True
    return False


def detect_layout(tree: Path) -> str | None:
    """Return "llamafactory", "llmtuner" or None for a source tree.

    The new layout needs both the package directory and the ``llamafactory-cli`` console
    script; the old one needs the package directory and ``src/train_bash.py``. A tree that
    has only a package directory is not treated as LLaMA-Factory, because the launch
    script rendered for it would call an entry point that is not there.
    """
    tree = Path(tree)
    src = tree / "src"
    if (src / "llamafactory").is_dir() and _declares_cli(tree):
        return LLAMAFACTORY
    if (src / "llmtuner").is_dir() and (src / "train_bash.py").is_file():
        return LLMTUNER
    return None


def template_sources(tree: Path, layout: str) -> tuple[Path, Path]:
    """The two files of a LLaMA-Factory tree its chat templates are read from
    (porter/lora/lf_templates.py): data/template.py and extras/constants.py."""
    package = Path(tree) / _PACKAGE[layout]
    return package / "data" / "template.py", package / "extras" / "constants.py"
