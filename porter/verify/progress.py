"""Where `porter verify` is, on one terminal line rewritten in place ("modules 123/307 |
LoRA on 2 emulated devices"): porter.core.progress's line, which convert and check draw
too, labelled for verify. Nothing when stderr is not a terminal."""

from __future__ import annotations

from typing import TextIO

from porter.core.progress import Progress as _Progress


class Progress(_Progress):
    def __init__(self, stream: TextIO | None = None, enabled: bool | None = None) -> None:
        super().__init__(stream, enabled, label="porter verify")
