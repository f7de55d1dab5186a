"""Shell scripts through tree-sitter-bash: commands, their words, and literal values with spans.

tree-sitter-bash (not bashlex) because real training scripts use arrays, `[[ ... ]]`, `case`,
`$(( ... ))` and quoted heredoc delimiters, all of which bashlex 0.18 cannot parse; tree-sitter
parses them, marks what it cannot parse instead of failing, and is maintained. Positions come
as UTF-8 byte offsets and are turned into character offsets of the decoded text here.
"""

from __future__ import annotations

import bisect
import posixpath
import re
from dataclasses import dataclass
from functools import lru_cache

from tree_sitter import Language, Node, Parser

# Words that run the command after them (after their own NAME=value words and options).
_WRAPPERS = frozenset({"env", "nohup", "exec", "time", "sudo"})
_PYTHON = re.compile(r"^python[0-9.]*$")
# A line continuation on the last line: bash ignores it, tree-sitter-bash calls it an error.
_EOF_CONTINUATION = re.compile(r"\\(?=(?:\r?\n)?[ \t\r\n]*\Z)")
# A template's placeholder for the user to fill in, `CHECKPOINT_PATH=<Specify path>` (NVIDIA
# Megatron's example scripts): bash would read a redirection there, tree-sitter an error; it is
# parsed as the quoted word it stands for (`"Specify path"`, the same width).
_PLACEHOLDER = re.compile(r"(?m)^([ \t]*(?:export[ \t]+)?[A-Za-z_]\w*=)<([A-Za-z][^<>\"'$`\n]*)>")


@lru_cache(maxsize=1)
def _parser() -> Parser:
    import tree_sitter_bash  # loads the grammar's shared library: only for trees with scripts

    return Parser(Language(tree_sitter_bash.language()))


class Script:
    """A parsed script: its tree and a byte-to-character offset map of its text."""

    def __init__(self, text: str) -> None:
        self.text = text
        data = text.encode("utf-8")
        # Blanked or quoted in the same width, so every offset stays what it was.
        parsed = _PLACEHOLDER.sub(r'\1"\2"', _EOF_CONTINUATION.sub(" ", text))
        self.tree = _parser().parse(parsed.encode("utf-8"))
        # Byte offsets where a multi-byte character ends early: only needed for non-ASCII text.
        self._wide: list[int] = []
        self._extra: list[int] = []
        if len(data) != len(text):
            pos = extra = 0
            for char in text:
                width = len(char.encode("utf-8"))
                pos += width
                if width > 1:
                    extra += width - 1
                    self._wide.append(pos)
                    self._extra.append(extra)

    @property
    def error_line(self) -> int | None:
        """The first line (1-based) tree-sitter could not parse, or None when it all parsed."""
        if not self.tree.root_node.has_error:
            return None
        stack = [self.tree.root_node]
        while stack:
            node = stack.pop()
            if node.type == "ERROR" or node.is_missing:
                return node.start_point[0] + 1
            stack.extend(reversed([c for c in node.children if c.has_error or c.is_missing or c.type == "ERROR"]))
        return self.tree.root_node.start_point[0] + 1

    def char(self, byte: int) -> int:
        if not self._wide:
            return byte
        i = bisect.bisect_right(self._wide, byte)
        return byte - (self._extra[i - 1] if i else 0)

    def span(self, node: Node) -> tuple[int, int]:
        return self.char(node.start_byte), self.char(node.end_byte)

    def nodes(self, *types: str) -> list[Node]:
        """Every node of these types, in source order, outside heredoc bodies (which are data)."""
        out: list[Node] = []
        stack = [self.tree.root_node]
        while stack:
            node = stack.pop()
            if node.type in types:
                out.append(node)
            if node.type != "heredoc_body":
                stack.extend(reversed(node.children))
        return out


@dataclass(frozen=True)
class Word:
    """One word of a command: the node, and its value when it is literal text (else None)."""

    node: Node
    value: str | None
    quote: str  # '', "'" or '"'


def literal(node: Node) -> Word:
    """The literal value of a word node: none when it holds expansions or escapes."""
    text = node.text.decode("utf-8", "replace")
    if node.type in ("word", "number"):
        return Word(node, None if "\\" in text else text, "")
    if node.type == "raw_string":
        return Word(node, text[1:-1], "'")
    if node.type == "string" and all(c.type in ('"', "string_content") for c in node.children):
        body = text[1:-1]
        return Word(node, None if "\\" in body else body, '"')
    return Word(node, None, "")


def command_words(command: Node) -> list[Word]:
    """The name and arguments of a command, after wrappers such as `env X=1` or `nohup`."""
    name = command.child_by_field_name("name")
    if name is None:
        return []
    inner = name.children[0] if name.children else name
    words = [literal(inner)] + [literal(a) for a in command.children_by_field_name("argument")]
    while words and words[0].value is not None and posixpath.basename(words[0].value) in _WRAPPERS:
        words = words[1:]
        while words and words[0].value is not None and (words[0].value.startswith("-") or "=" in words[0].value):
            words = words[1:]
    return words


def identities(words: list[Word]) -> set[str]:
    """Names a command answers to: `torchrun`, `accelerate launch`, `python -m torch.distributed.run`."""
    if not words or words[0].value is None:
        return set()
    name = posixpath.basename(words[0].value)
    if _PYTHON.match(name):
        name = "python"
    out = {name}
    if len(words) > 1 and words[1].value is not None:
        out.add(f"{name} {words[1].value}")
        if name == "python" and words[1].value == "-m" and len(words) > 2 and words[2].value is not None:
            out.add(f"python -m {words[2].value}")
    return out
