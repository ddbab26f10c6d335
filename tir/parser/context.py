"""Parsing state shared by the TVMScript reader: names in scope, open frames, errors.

Names live in one flat dict; entering a scope records a mark and leaving it undoes every
definition made since, so a lookup is one dict access however deep the nesting.
"""
from __future__ import annotations

import ast
import contextlib

from ..errors import ParseError

MISSING = object()


def error(node, message: str) -> ParseError:
    """A ParseError positioned at an ``ast`` node (1-based line and column)."""
    line = getattr(node, "lineno", 0) or 0
    col = getattr(node, "col_offset", -1)
    return ParseError(message, line, col + 1)


def describe(node) -> str:
    """A short readable rendering of an ``ast`` node for error messages."""
    try:
        text = ast.unparse(node)
    except Exception:  # noqa: BLE001 - unparse of a broken tree: fall back to the type
        return type(node).__name__
    return text if len(text) <= 60 else text[:57] + "..."


class Context:
    """Names in scope and the stack of open frames (function, block)."""

    def __init__(self):
        self.names: dict = {}
        self.undo: list = []
        self.frames: list = []
        self.loop_ranges: dict = {}
        """id(loop var) -> (min, extent) of the enclosing loops, for T.axis.remap."""
        self.module_name: "str | None" = None
        self.global_refs: list = []
        """(function name, ast node) of every ``cls.f`` reference, checked at module end."""

    @contextlib.contextmanager
    def scope(self, name: "str | None" = None, value=None):
        """A scope for the ``with`` body, optionally binding ``name`` to ``value`` in it; every
        definition made inside is undone on leaving, however the body ends."""
        mark = self.mark()
        try:
            if name is not None:
                self.define(name, value)
            yield
        finally:
            self.release(mark)

    def mark(self) -> int:
        """Open a scope; pass the result to :meth:`release` to close it."""
        return len(self.undo)

    def release(self, mark: int) -> None:
        """Close the scope opened by :meth:`mark`, restoring shadowed names."""
        undo, names = self.undo, self.names
        while len(undo) > mark:
            name, old = undo.pop()
            if old is MISSING:
                del names[name]
            else:
                names[name] = old

    def define(self, name: str, value) -> None:
        """Bind ``name`` in the innermost scope."""
        self.undo.append((name, self.names.get(name, MISSING)))
        self.names[name] = value

    def lookup(self, name: str, node):
        """The value bound to ``name``, or a ParseError at ``node``."""
        value = self.names.get(name, MISSING)
        if value is MISSING:
            raise error(node, f"undefined name {name!r}")
        return value

    def frame(self, kind, node, what: str):
        """The innermost open frame, which must be of type ``kind``."""
        if self.frames and isinstance(self.frames[-1], kind):
            return self.frames[-1]
        raise error(node, f"{what} is only allowed directly inside {kind.WHERE}")

    def innermost(self, kind):
        """The innermost open frame of type ``kind`` (None if there is none)."""
        for f in reversed(self.frames):
            if isinstance(f, kind):
                return f
        return None


def dotted(node) -> "str | None":
    """``T.axis.remap`` for an Attribute chain rooted at a Name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))
