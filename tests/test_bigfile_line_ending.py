"""line_ending reads the line that holds an offset, not the rest of the text (it is asked
once per added dispatch branch: a search to the end each time was quadratic). No timing:
the answers are compared with the former search on random texts, and the searches counted."""

from __future__ import annotations

import random

from porter.core.textio import line_ending


def _former(text: str, offset: int) -> str:
    newline = text.find("\n", offset)
    cr = text.find("\r", offset)
    if cr != -1 and (newline == -1 or cr < newline - 1):
        return "\r"
    if newline == -1:
        return "\n"
    return "\r\n" if newline > 0 and text[newline - 1] == "\r" else "\n"


def test_line_ending_answers_as_before():
    rng = random.Random(5)
    for _ in range(3000):
        text = "".join(rng.choice("ab\r\n") for _ in range(rng.randrange(0, 12)))
        for offset in range(len(text) + 1):
            assert line_ending(text, offset) == _former(text, offset), (text, offset)


class _Searched(str):
    """A text that records how far each search may look."""

    def find(self, sub, start=0, end=None):
        self.looked.append((end if end is not None else len(self)) - start)
        return str.find(self, sub, start, *(() if end is None else (end,)))


def test_line_ending_searches_no_further_than_its_line():
    text = _Searched("x = 1\n" * 10_000)
    text.looked = []
    assert line_ending(text, 6) == "\n"
    assert text.looked and text.looked[-1] <= 6 and all(n <= 6 or i == 0 for i, n in enumerate(text.looked))
