"""Which LLaMA-Factory chat template fits a model, read from the ported tree's own tables.

LLaMA-Factory formats SFT data with a named template (``template: qwen``); the wrong one
trains the model on a format it will not see at inference. The model is only known when
the job starts, so porter renders a lookup table (``llamafactory/templates.json``) and
run_sft.sh picks the template from it for ``$MODEL``:

1. the model folder's name, in the table that version of LLaMA-Factory keeps itself
   (``register_model_group(models=..., template=...)`` in ``extras/constants.py``: model
   names and hub ids per family, with the family's template);
2. else the ``model_type`` in the model's config.json, through MODEL_TYPE_TEMPLATES below;
3. else LLaMA-Factory's ``default`` template, with a note to set TEMPLATE.

Only templates that version registers (``register_template(name=...)`` in
``data/template.py``) are ever chosen. The files are read as text and with ``ast``, never
imported.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from porter.lora.layout import template_sources

_REGISTERED = re.compile(r"""register_template\(\s*name\s*=\s*["']([\w.\-]+)["']""")

# (model_type, vocab_size or None for any, template), first match wins. For model types
# that one template fits; "llama" also covers Llama 2, Llama 3 and derivatives (Yi,
# DeepSeek LLM, ...), so only the two Meta vocabularies are told apart and the rest fall
# back to "default". Names checked against LLaMA-Factory 0.9.6 and 0.6.0 (template.py).
MODEL_TYPE_TEMPLATES: tuple[tuple[str, int | None, str], ...] = (
    ("llama", 128256, "llama3"),  # Llama 3.x
    ("llama", 32000, "llama2"),  # Llama 2
    ("qwen2", None, "qwen"),  # Qwen1.5, Qwen2, Qwen2.5
    ("qwen2_moe", None, "qwen"),
    ("qwen3", None, "qwen3"),
    ("qwen3_moe", None, "qwen3"),
    ("mistral", None, "mistral"),
    ("mixtral", None, "mistral"),
    ("gemma", None, "gemma"),
    ("gemma2", None, "gemma2"),
    ("gemma3", None, "gemma3"),
    ("gemma3_text", None, "gemma3"),
    ("phi3", None, "phi"),
    ("internlm2", None, "intern2"),
)


def registered_templates(tree: Path, layout: str) -> frozenset[str]:
    """Template names the tree's ``data/template.py`` registers (empty when it is absent)."""
    path = template_sources(tree, layout)[0]
    if not path.is_file():
        return frozenset()
    return frozenset(_REGISTERED.findall(path.read_text(encoding="utf-8", errors="replace")))


def _strings(node: ast.AST) -> list[str]:
    """String constants directly inside a dict's keys and values (one level of nesting)."""
    found = []
    if isinstance(node, ast.Dict):
        for key, value in zip(node.keys, node.values):
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                found.append(key.value)
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                found.append(value.value)
            elif isinstance(value, ast.Dict):
                found.extend(_strings(value))
    return found


def _statement_calls(body: list[ast.stmt]) -> Iterator[ast.Call]:
    """The calls that are whole statements, in `body` and the blocks nested in it (an `if`,
    a `try`): where constants.py registers its models. Not a walk of every node: the file
    is mostly dicts of strings (~10k nodes)."""
    for stmt in body:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            yield stmt.value
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list):
                yield from _statement_calls(inner)
        for handler in getattr(stmt, "handlers", ()):
            yield from _statement_calls(handler.body)


def family_templates(tree: Path, layout: str, registered: frozenset[str]) -> dict[str, str]:
    """Lower-cased model name or hub-id basename -> template, from the tree's constants.py."""
    path = template_sources(tree, layout)[1]
    try:
        module = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError):
        return {}
    table: dict[str, str] = {}
    for node in _statement_calls(module.body):
        if getattr(node.func, "id", None) != "register_model_group":
            continue
        keywords = {kw.arg: kw.value for kw in node.keywords}
        template = keywords.get("template")
        if not (isinstance(template, ast.Constant) and template.value in registered):
            continue
        for name in _strings(keywords.get("models", ast.Dict(keys=[], values=[]))):
            # A local copy is usually named like the hub repository: keep its last part.
            table.setdefault(name.rsplit("/", 1)[-1].lower(), template.value)
    return dict(sorted(table.items()))


def template_table(tree: Path, layout: str) -> dict[str, object]:
    """The lookup table run_sft.sh reads (rendered as llamafactory/templates.json)."""
    registered = registered_templates(tree, layout)
    return {
        "about": "chat template per model for this LLaMA-Factory tree, rendered by porter; "
        "by_name comes from its extras/constants.py, by_model_type from porter",
        "by_name": family_templates(tree, layout, registered),
        "by_model_type": [list(entry) for entry in MODEL_TYPE_TEMPLATES if entry[2] in registered],
        "fallback": "default",
    }
