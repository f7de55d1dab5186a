"""Screens: does a text hold any of some words, or import any of some packages?

Every source file of a tree is screened before it is parsed, so these answer at C speed:
`WordScreen` splits a text into its words with one `bytes.translate` and asks a set (a regex
alternation of ~60 words scans at ~45 MB/s, a trie-shaped one twice that, the set ~4x the
trie); `ImportScreen` finds an import with regexes that start with a literal word.
"""

from __future__ import annotations

import re
from collections.abc import Iterable


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
        self.patterns = (
            (re.compile(rf"from[\s\\]+(?:{names})\b"), re.compile(rf"import[\s\\]+(?:[^\n;#]*?,[\s\\]*)?(?:{names})\b"))
            if names
            else ()
        )

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

    def __init__(
        self,
        words: Iterable[str],
        prefixes: Iterable[str] = (),
        inner: Iterable[str] = (),
        imported: Iterable[str] = (),
    ) -> None:
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
