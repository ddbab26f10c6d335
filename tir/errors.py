"""Errors raised by the TVMScript reader."""
from __future__ import annotations


class ParseError(Exception):
    """Malformed or unsupported TVMScript, with its position.

    ``str(err)`` is ``"line:col: message"`` (1-based line, 1-based column).
    """

    def __init__(self, message: str, line: int = 0, col: int = 0, source: "str | None" = None):
        self.message = message
        self.line = line
        self.col = col
        self.source = source
        super().__init__(f"{line}:{col}: {message}")
