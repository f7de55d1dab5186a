"""Where `porter verify` is, on one terminal line rewritten in place ("modules 123/307 |
LoRA on 2 emulated devices"); nothing at all when the stream is not a terminal (CI logs,
pipes, files), where such a line would only be noise.

The line has a part per thing going on (the imports and the LoRA run go on side by side),
each set and dropped by its own thread.
"""

from __future__ import annotations

import sys
import threading
from typing import TextIO


class Progress:
    def __init__(self, stream: TextIO | None = None, enabled: bool | None = None) -> None:
        self._stream = stream or sys.stderr
        self.enabled = self._stream.isatty() if enabled is None else enabled
        self._parts: dict[str, str] = {}
        self._width = 0
        self._lock = threading.Lock()

    def show(self, text: str, part: str = "main") -> None:
        with self._lock:
            self._parts[part] = text
            self._render()

    def count(self, what: str, done: int, total: int, part: str | None = None) -> None:
        self.show(f"{what} {done}/{total}", part or what)

    def drop(self, part: str) -> None:
        with self._lock:
            if self._parts.pop(part, None) is not None:
                self._render()

    def close(self) -> None:
        """Clear the line, so that what is printed next starts at the left margin."""
        with self._lock:
            self._parts.clear()
            if self.enabled and self._width:
                self._stream.write("\r" + " " * self._width + "\r")
                self._stream.flush()
            self._width = 0

    def _render(self) -> None:
        if not self.enabled:
            return
        line = "porter verify: " + " | ".join(self._parts.values()) if self._parts else ""
        self._stream.write("\r" + line.ljust(self._width))
        self._stream.flush()
        self._width = len(line)
