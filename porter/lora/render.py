"""Render the LoRA entry point (``OUT/porter_lora/``) for a target from the jinja2 templates.

Planning is pure (``plan_lora`` returns the files as text); ``render_lora`` only writes
them. The templates ship in the package (``porter/templates/lora``). The rendered files are
a function of a few inputs (target, output folder name, DeepSpeed, the tree's LLaMA-Factory
layout and template sources), so with a cache they are stored under a key made of those,
and a re-run neither builds the template context nor loads jinja2.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from porter.core.files import write_beneath
from porter.engine.cache import cached_texts
from porter.lora.layout import LLAMAFACTORY, LLMTUNER, detect_layout, template_sources

if TYPE_CHECKING:
    import jinja2

LF_DIR = "llamafactory"  # sub-folder of the output for the LLaMA-Factory config


@dataclass(frozen=True)
class RenderedFile:
    """One output file: path relative to the output folder, its text, and its mode."""

    relpath: str
    text: str
    executable: bool = False


def _environment() -> jinja2.Environment:
    # A fresh environment per call keeps the module free of shared mutable state; compiled
    # templates come from the bytecode cache.
    import jinja2

    from porter.core.templating import environment

    env = environment(
        "templates/lora",
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,  # Python, shell, JSON, YAML and Markdown: nothing is HTML
    )
    from porter.lora.llamafactory import cli_flag, yaml_scalar

    env.filters["yaml_scalar"] = yaml_scalar
    env.filters["cli_flag"] = cli_flag
    env.filters["py"] = python_literal
    return env


def plan_lora(
    tree: Path, out_name: str, target: str, *, deepspeed: bool = False, cache_dir: Path | None = None
) -> list[RenderedFile]:
    """Return the files of the LoRA entry point for ``target`` without writing anything.

    ``tree`` is inspected (never imported) for a LLaMA-Factory layout; ``out_name`` is the
    output folder's name inside the ported tree, which the LLaMA-Factory config uses to
    point at ``ds_config.json`` from the repository root.
    """
    tree = Path(tree)
    layout = detect_layout(tree)
    # The files are a function of these inputs alone (and of porter's code and templates, which
    # every cache key holds): a re-run that finds them loads neither the planner's modules
    # (target facts, options, LLaMA-Factory's tables) nor jinja2.
    sources = [_bytes(path) for path in template_sources(tree, layout)] if layout is not None else []
    inputs = [json.dumps([target, out_name, deepspeed, layout]).encode(), *sources]

    def plan() -> list[str]:  # flat: relpath, "x" when executable, text; file after file
        files = _plan(tree, out_name, target, deepspeed, layout, sources, cache_dir)
        return [part for f in files for part in (f.relpath, "x" if f.executable else "", f.text)]

    flat = cached_texts(cache_dir, b"\0".join(inputs), "porter_lora", plan)
    return [RenderedFile(flat[i], flat[i + 2], flat[i + 1] == "x") for i in range(0, len(flat), 3)]


def _bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""  # absent: template_table finds nothing there either


def _plan(
    tree: Path,
    out_name: str,
    target: str,
    deepspeed: bool,
    layout: str | None,
    sources: list[bytes],
    cache_dir: Path | None,
) -> list[RenderedFile]:
    from porter.lora.llamafactory import OVERRIDES, lf_config
    from porter.lora.options import train_options
    from porter.lora.targets import target_facts

    facts = target_facts(target)
    lf_dir = f"{out_name}/{LF_DIR}"
    context = {
        "t": facts,
        "options": train_options(facts),
        "deepspeed": deepspeed,
        "layout": layout,
        "lf_dir": lf_dir,
        "repo_from_lf_dir": "/".join(".." for _ in lf_dir.split("/")),
        "overrides": dict(OVERRIDES),
    }
    if layout is not None:
        ds_path = f"{out_name}/ds_config.json" if deepspeed else None
        context["lf"] = lf_config(layout, facts, deepspeed_config=ds_path)
        context["lf_templates"] = _template_table(tree, layout, sources, cache_dir)

    plan = [
        ("train_lora.py", "train_lora.py.j2", True),
        ("run_lora.sh", "run_lora.sh.j2", True),
        ("README.md", "README.md.j2", False),
    ]
    if deepspeed:
        # ZeRO-2 (optimizer states and gradients sharded) and ZeRO-3 (weights too).
        plan.append(("ds_config.json", "ds_config.json.j2", False))
        plan.append(("ds_config_zero3.json", "ds_config_zero3.json.j2", False))
    if layout == LLAMAFACTORY:
        plan.append((f"{LF_DIR}/lora_sft.yaml", "lf_sft.yaml.j2", False))
    if layout in (LLAMAFACTORY, LLMTUNER):
        plan.append((f"{LF_DIR}/run_sft.sh", "lf_run_sft.sh.j2", True))
        plan.append((f"{LF_DIR}/templates.json", "lf_templates.json.j2", False))
    env = _environment()
    return [
        RenderedFile(relpath, env.get_template(name).render(**context), executable)
        for relpath, name, executable in plan
    ]


def _template_table(tree: Path, layout: str, sources: list[bytes], cache_dir: Path | None) -> dict:
    """`template_table`, from the cache while the tree's two source files keep their bytes:
    parsing LLaMA-Factory's constants.py costs ~20 ms on every convert."""
    from porter.lora.lf_templates import template_table

    parts = [layout.encode(), *sources]  # the bytes of template_sources(tree, layout), read once by plan_lora
    (text,) = cached_texts(
        cache_dir, b"\0".join(parts), "lf_templates", lambda: [json.dumps(template_table(tree, layout))]
    )
    return json.loads(text)


def python_literal(value: object) -> str:
    """A Python literal for train_lora.py's parser; strings double-quoted like the code around them."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid Python string literal
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(python_literal(item) for item in value) + "]"
    return repr(value)


class EditedFiles(Exception):
    """Files of the output folder that differ from what porter would write there: edited by
    a person (or by another porter), not to be overwritten without being asked."""

    def __init__(self, paths: list[Path]) -> None:
        super().__init__(", ".join(map(str, paths)))
        self.paths = paths


def _differs(path: Path, data: bytes) -> bool:
    """Whether something other than exactly `data` is at `path` (a link or folder counts)."""
    if not os.path.lexists(path):
        return False
    if path.is_symlink() or not path.is_file():
        return True
    try:
        return path.read_bytes() != data
    except OSError:
        return True


def edited_lora_files(
    tree: Path, out_dir: Path, target: str, *, deepspeed: bool = False, cache_dir: Path | None = None
) -> list[Path]:
    """The files of ``out_dir`` that differ from what porter would write there (a train_lora.py
    edited by hand, or written by another porter), in plan order."""
    out_dir = Path(out_dir)
    return _edited(out_dir, plan_lora(tree, out_dir.name, target, deepspeed=deepspeed, cache_dir=cache_dir))


def _edited(out_dir: Path, planned) -> list[Path]:
    return [out_dir / f.relpath for f in planned if _differs(out_dir / f.relpath, f.text.encode("utf-8"))]


def render_lora(
    tree: Path,
    out_dir: Path,
    target: str,
    *,
    deepspeed: bool = False,
    cache_dir: Path | None = None,
    root: Path | None = None,
    keep_edits: bool = False,
    skip: tuple[Path, ...] = (),
) -> list[Path]:
    """Write the LoRA entry point for ``target`` ("mlu" or "hip") into ``out_dir``.

    ``out_dir`` is normally ``OUT/porter_lora``. When ``tree`` is a LLaMA-Factory checkout,
    a LoRA SFT config and launch script for it go to ``out_dir/llamafactory``. Returns the
    paths written, in a stable order. Nothing is written through a symbolic link below
    ``root`` (default: ``out_dir`` itself); raises OSError (LinkRefused for a link) naming
    the path. With ``keep_edits``, a file there that differs from what porter would write
    (a train_lora.py edited by hand) stops the run before anything is written: EditedFiles
    names them all. Files that hold what porter writes are rewritten either way. The files
    in ``skip`` (edited ones convert keeps: ``edited_lora_files``) are left as they are.
    """
    out_dir = Path(out_dir)
    planned = plan_lora(tree, out_dir.name, target, deepspeed=deepspeed, cache_dir=cache_dir)
    if keep_edits:
        edited = _edited(out_dir, planned)
        if edited:
            raise EditedFiles(edited)
    # Written beneath `root` (the folder the user or convert named) with no link followed:
    # `out_dir` itself is `root` when `root` is None, else `root/<out_dir relative to root>`.
    base = Path(root) if root is not None else out_dir
    rel = out_dir.relative_to(base).as_posix() if root is not None else ""
    rel = "" if rel == "." else rel
    written: list[Path] = []
    for item in planned:
        if out_dir / item.relpath in skip:
            continue
        data = item.text.encode("utf-8")
        write_beneath(
            base, f"{rel}/{item.relpath}" if rel else item.relpath, data, mode=0o755 if item.executable else 0o644
        )
        written.append(out_dir / item.relpath)
    return written
