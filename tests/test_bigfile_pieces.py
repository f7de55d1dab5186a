"""A very large module is parsed and verified in pieces, to the very tree and answer of one
parse of the whole (porter/python/pieces.py).

No timing (benchmarks/bigfile.py measures): the trees are compared node for node, positions
included, and what the parser and the compiler are handed at once is measured in characters.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from porter.engine.pipeline import convert_bytes
from porter.python import analyze, pieces
from porter.rules import ActiveRules, Selection, load_rules

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from synth_big import python_file  # noqa: E402


def _dump(tree: ast.AST) -> str:
    return ast.dump(tree, include_attributes=True)


def _synthetic(size: int) -> str:
    import io

    out = io.StringIO()
    python_file(out, size)
    return out.getvalue()


# Lines at column 0 that are no statement's start: inside strings and brackets, after a
# backslash, clauses that continue a statement, a decorator's function; CRLF and lone CR.
_TRAPS = '''import torch
x = """
y = 1
not code: (
"""
items = [
z,
]
total = 1 + \\
w
if x:
    pass
else:
    pass
try:
    pass
except Exception:
    pass
finally:
    pass
@decorator
def f():
    return torch.ones(1).cuda()
class C:
    s = \'\'\'
class D: pass
\'\'\'
'''


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_pieces_give_the_whole_parse_tree(monkeypatch, newline):
    text = (_TRAPS * 40).replace("\n", newline) + _synthetic(60_000).replace("\n", newline)
    monkeypatch.setattr(pieces, "PIECE_CHARS", 997)
    cut = pieces.cuts(text, 997)
    assert len(cut) > 40 if newline != "\r" else not cut  # (no "\n": nothing to cut at)
    assert _dump(analyze.parse(text, "m.py")) == _dump(analyze._parse_whole(text, "m.py"))


def test_the_fixtures_parse_in_pieces_to_their_whole_tree(monkeypatch):
    monkeypatch.setattr(pieces, "PIECE_CHARS", 64)
    compared = 0
    for path in sorted((ROOT / "fixtures").rglob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            whole = analyze._parse_whole(text, str(path))
        except (SyntaxError, ValueError):
            with pytest.raises((SyntaxError, ValueError)):
                analyze.parse(text, str(path))
            continue
        assert _dump(analyze.parse(text, str(path))) == _dump(whole), path
        compared += 1
    assert compared > 300


def test_a_broken_module_gets_the_whole_parse_error(monkeypatch):
    monkeypatch.setattr(pieces, "PIECE_CHARS", 500)
    text = _synthetic(20_000) + "def broken(:\n    pass\n" + _synthetic(20_000)
    with pytest.raises(SyntaxError) as whole:
        analyze._parse_whole(text, "m.py")
    with pytest.raises(SyntaxError) as in_pieces:
        analyze.parse(text, "m.py")
    assert (in_pieces.value.msg, in_pieces.value.lineno) == (whole.value.msg, whole.value.lineno)


def test_verification_in_pieces_answers_as_the_whole(monkeypatch):
    monkeypatch.setattr(pieces, "PIECE_CHARS", 500)
    good = _TRAPS * 20 + _synthetic(20_000)
    assert pieces.parses_in_pieces(good, "m.py")
    assert analyze.parse_problem(good, "m.py") is None
    # What only the compiler refuses parses (the answer is about parsing), in pieces or whole
    assert pieces.parses_in_pieces(good + "return 1\n" + good, "m.py")
    assert analyze.parse_problem(good + "return 1\n" + good, "m.py") is None
    # What the scopes refuse: the whole decides, and it parses
    assert not pieces.parses_in_pieces(good + "nonlocal x\n" + good, "m.py")
    assert analyze.parse_problem(good + "nonlocal x\n" + good, "m.py") is None
    broken = good + "def f(:\n" + good
    assert analyze.parse_problem(broken, "m.py").startswith("does not parse: ")
    # barry_as_FLUFL can change what `!=` means to the parser: the whole is asked
    flufl = "from __future__ import barry_as_FLUFL\n" + good + "x = 1 != 2\n"
    assert not pieces.parses_in_pieces(flufl, "m.py")
    in_pieces = analyze.parse_problem(flufl, "m.py")
    monkeypatch.setattr(pieces, "PIECE_CHARS", len(flufl))
    assert in_pieces == analyze.parse_problem(flufl, "m.py")


def test_a_large_module_is_never_handed_whole_to_the_parser_or_the_compiler(monkeypatch):
    monkeypatch.setattr(pieces, "PIECE_CHARS", 4096)
    text = _synthetic(200_000)
    longest: list[int] = [0]
    real_parse = analyze._parse_whole

    def parse_whole(source, path):
        longest[0] = max(longest[0], len(source.lstrip("\n")))
        return real_parse(source, path)

    def counted(real):
        def call(source, *args, **kwargs):
            if isinstance(source, str):
                longest[0] = max(longest[0], len(source))
            return real(source, *args, **kwargs)

        return call

    monkeypatch.setattr(analyze, "_parse_whole", parse_whole)
    monkeypatch.setattr(pieces.symtable, "symtable", counted(pieces.symtable.symtable))
    monkeypatch.setattr(analyze, "compile", counted(compile), raising=False)
    result = convert_bytes("big.py", text.encode(), ActiveRules(load_rules("mlu"), Selection()))[1]
    assert result.status == "changed" and len(result.edits) > 100
    assert 0 < longest[0] < 3 * 4096  # a piece, or two joined: never the 200 KB module
