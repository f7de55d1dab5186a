"""One regex for many words, factored by common prefixes.

Python's `re` tries the alternatives of `a|b|c` one by one at every position, so a flat
alternation of the ~60 words the screen looks for scans at ~45 MB/s. The same words as a
trie (`cu(?:da\\b|dnn\\b|py(?:x\\b|\\b))`) scan about twice as fast, and the screen runs
on every source file of a tree.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_WORD_END = None  # trie key: the word ends here and must end a word (`\b`)
_PREFIX_END = ""  # trie key: the word ends here and may go on (a prefix such as `NCCL_`)


def word_alternation(words: Iterable[str], prefixes: Iterable[str] = ()) -> str:
    """A regex matching any of `words` ending at a word boundary, or any of `prefixes`.
    It does not anchor the start; callers put `\\b` in front when they want whole words."""
    trie: dict = {}
    for items, end in ((words, _WORD_END), (prefixes, _PREFIX_END)):
        for word in items:
            node = trie
            for ch in word:
                node = node.setdefault(ch, {})
            node[end] = {}
    return _emit(trie)


def _emit(node: dict) -> str:
    alternatives = []
    for key, child in sorted(node.items(), key=lambda kv: (kv[0] is None, kv[0] or "")):
        if key is _WORD_END:
            alternatives.append(r"\b")
        elif key == _PREFIX_END:
            return ""  # a prefix matches here whatever follows
        else:
            alternatives.append(re.escape(key) + _emit(child))
    return alternatives[0] if len(alternatives) == 1 else "(?:" + "|".join(alternatives) + ")"


# Bytes of a word (ASCII letters, digits, `_`) kept, every other byte a space: `split()` then
# gives a text's words at C speed.
_WORD_BYTES = bytes(c if (chr(c).isascii() and chr(c).isalnum()) or c == ord("_") else 32 for c in range(256))


def _is_word(text: str) -> bool:
    return bool(text) and text.isascii() and (text.replace("_", "").isalnum() or set(text) == {"_"})


class ImportScreen:
    """Whether Python source imports any of `modules` (top-level packages), in any spelling
    (`import a.b as c`, `import os, a`, `from a.b import c`, across a backslash line break),
    or holds text that only looks like an import of one; never, for no modules. Two regexes
    that start with a literal word (`from`, `import`): `re` scans for those at C speed."""

    def __init__(self, modules: Iterable[str]) -> None:
        names = "|".join(sorted(re.escape(m) for m in modules))
        self.patterns = (re.compile(rf"from[\s\\]+(?:{names})\b"),
                         re.compile(rf"import[\s\\]+(?:[^\n;#]*?,[\s\\]*)?(?:{names})\b")) if names else ()

    def search(self, text: str) -> bool:
        return any(pattern.search(text) is not None for pattern in self.patterns)


class WordScreen:
    """Whether a text holds any of `words` as a whole word, any of `prefixes` at the start of a
    word, or any of `inner` anywhere: what `\\b(?:words\\b|prefixes)|inner` finds, but about
    three times as fast as that regex (the screen reads every source file of a tree); or an
    import of any of `imported` (`ImportScreen`: packages that matter only where imported).

    The text's words come from one `bytes.translate` and `split()`, and a set answers whether
    any is a screen word. A word outside ASCII letters, digits and `_` splits there, so the
    screen may say yes where the regex says no (never the reverse): it only decides what is
    looked at more closely. Prefixes, inner words and words with other characters (`nvidia-smi`)
    are found by a substring test first, and confirmed with a regex."""

    def __init__(self, words: Iterable[str], prefixes: Iterable[str] = (), inner: Iterable[str] = (),
                 imported: Iterable[str] = ()) -> None:
        words, prefixes, inner = set(words) - {""}, set(prefixes) - {""}, set(inner) - {""}
        self.whole = frozenset(w.encode() for w in words if _is_word(w))
        # A package imported is a word of the text first: the import regex runs only then.
        imported = {m for m in imported if _is_word(m) and m not in words}
        self.imported = frozenset(m.encode() for m in imported)
        self.imports = ImportScreen(imported)
        self.others: list[tuple[str, re.Pattern[str]]] = []
        for word in sorted(words - {w for w in words if _is_word(w)}):
            self.others.append((word, re.compile(r"\b" + re.escape(word) + r"\b")))
        for word in sorted(prefixes):
            self.others.append((word, re.compile(r"\b" + re.escape(word))))
        for word in sorted(inner):
            self.others.append((word, re.compile(re.escape(word))))

    def search(self, text: str) -> bool:
        if self.whole or self.imported:
            words = text.encode("utf-8", "replace").translate(_WORD_BYTES).split()
            if not self.whole.isdisjoint(words):
                return True
            if not self.imported.isdisjoint(words) and self.imports.search(text):
                return True
        return any(needle in text and pattern.search(text) is not None for needle, pattern in self.others)
