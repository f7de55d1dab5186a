"""Which file type a path is, by its name (and, for a file without an extension, its first
bytes): the cheap half of each file type, kept apart from the pipelines so that the tree
runner can sort a whole tree into file types without importing what reads them (YAML,
packaging, tree-sitter load only in the process that handles such a file).
"""

from __future__ import annotations

import re

_SHEBANG = re.compile(rb"^#![ \t]*\S*?/(?:env[ \t]+)?(?:ba|da|k)?sh\b")
_NOT_DOCKERFILE = (".md", ".txt", ".rst", ".sh", ".py", ".json", ".yml", ".yaml", ".j2")


# environment.yml, environment-cuda.yaml, conda.yml, conda_gpu.yaml (and fixtures `<case>.environment.yml`).
_CONDA = re.compile(r"(?:.*\.)?(?:environment|conda)(?:[-_.][\w.-]*)?\.ya?ml")


def is_conda_environment(rel: str, head: bytes) -> bool:
    """A conda environment file, by its name: environment*.yml, conda*.yml (.yaml too)."""
    name = rel.replace("\\", "/").rsplit("/", 1)[-1].lower()
    return _CONDA.fullmatch(name) is not None


def is_compose(rel: str, head: bytes) -> bool:
    """docker-compose*.yml / compose*.yaml (and fixtures `<case>.docker-compose.yml`)."""
    name = rel.replace("\\", "/").rsplit("/", 1)[-1].lower()
    if not name.endswith((".yml", ".yaml")):
        return False
    return name.startswith(("docker-compose", "compose")) or ".docker-compose." in name or ".compose." in name


def is_dockerfile(rel: str, head: bytes) -> bool:
    """Dockerfile, Dockerfile.<variant>, Dockerfile-<variant>, <name>.dockerfile; fixtures `<case>.Dockerfile`."""
    name = rel.replace("\\", "/").rsplit("/", 1)[-1]
    if name.lower().endswith(_NOT_DOCKERFILE):
        return False  # Dockerfile.md, Dockerfile.sh: documents and scripts about it
    # Dockerfile-cu121, Dockerfile_rocm: variants named with a dash or an underscore too.
    return (
        name == "Dockerfile"
        or name.startswith(("Dockerfile.", "Dockerfile-", "Dockerfile_"))
        or name.lower().endswith(".dockerfile")
    )


def is_json_config(rel: str, head: bytes) -> bool:
    return rel.lower().endswith(".json")


def is_notebook(rel: str, head: bytes) -> bool:
    return rel.lower().endswith(".ipynb")


def is_pyproject(rel: str, head: bytes) -> bool:
    """pyproject.toml, or a fixture named `<case>.pyproject.toml`."""
    name = rel.replace("\\", "/").rsplit("/", 1)[-1]
    return name == "pyproject.toml" or name.endswith(".pyproject.toml")


def is_requirements_file(rel: str, head: bytes) -> bool:
    """requirements*.txt / *.in anywhere, constraints*.txt, any .txt/.in under a requirements/ folder.

    Fixtures are named `<case>.requirements.txt`, which the first test covers.
    """
    parts = rel.replace("\\", "/").split("/")
    name = parts[-1].lower()
    if not name.endswith((".txt", ".in")):
        return False
    if "requirements" in name or name.startswith("constraints"):
        return True
    return len(parts) > 1 and parts[-2].lower() in ("requirements", "reqs", "requirements.d")


def is_setup_cfg(rel: str, head: bytes) -> bool:
    """setup.cfg, or a fixture named `<case>.setup.cfg`."""
    name = rel.replace("\\", "/").rsplit("/", 1)[-1]
    return name == "setup.cfg" or name.endswith(".setup.cfg")


def is_shell(rel: str, head: bytes) -> bool:
    name = rel.rsplit("/", 1)[-1]
    if name.endswith((".sh", ".bash")):
        return True
    return "." not in name and bool(_SHEBANG.match(head))


def is_yaml_config(rel: str, head: bytes) -> bool:
    return rel.lower().endswith((".yaml", ".yml")) and not is_compose(rel, head) and not is_conda_environment(rel, head)


def is_python(rel: str, head: bytes) -> bool:
    """A .py/.pyi file, or an extensionless script whose shebang names python."""
    if rel.endswith((".py", ".pyi")):
        return True
    return "." not in rel.rsplit("/", 1)[-1] and head.startswith(b"#!") and b"python" in head.split(b"\n", 1)[0]
