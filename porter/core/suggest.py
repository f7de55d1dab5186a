"""A "did you mean ...?" for a mistyped name: a rule code, a subcommand.

difflib's ratio alone is a poor judge of rule codes: `PRT2O1` (a letter O) is as close to
PRT211 or PRT231 as to PRT201. So a code is first read with the look-alike letters of its
digits as digits, and compared only with codes and prefixes of its own length (`PRT2O`
means the prefix PRT20, not a code), with a stricter likeness than for words.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

_LOOKALIKE_DIGITS = str.maketrans("OIL", "011")  # upper-cased: O for 0, I and l for 1
_CODE_HEAD = 3  # "PRT"


def closest(word: str, known: Iterable[str], n: int = 3, cutoff: float = 0.6) -> list[str]:
    """The known words closest to `word` (case ignored), best first, as they are spelled."""
    by_folded: dict[str, str] = {}
    for k in known:
        by_folded.setdefault(k.casefold(), k)
    return [by_folded[m] for m in difflib.get_close_matches(word.casefold(), by_folded, n, cutoff)]


def closest_codes(typed: str, codes: Iterable[str], n: int = 3) -> list[str]:
    """Rule codes, or code prefixes as long as `typed`, that `typed` was probably meant to be."""
    typed = typed.strip().upper()
    candidates = {c[: len(typed)] for c in codes if len(c) >= len(typed)}
    read = typed[:_CODE_HEAD] + typed[_CODE_HEAD:].translate(_LOOKALIKE_DIGITS)
    if read in candidates:
        return [read]
    # One character in six wrong at most: PRT and one digit in common is no likeness.
    return closest(typed, candidates, n, cutoff=0.8)


def did_you_mean(matches: list[str]) -> str:
    """'did you mean X?' (or 'X or Y', 'X, Y or Z'); '' for no match."""
    if not matches:
        return ""
    names = matches[0] if len(matches) == 1 else f"{', '.join(matches[:-1])} or {matches[-1]}"
    return f"did you mean {names}?"
