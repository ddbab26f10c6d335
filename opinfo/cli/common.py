"""Helpers shared by the subcommands: reading modules with positioned errors, output files."""
from __future__ import annotations

import os
import sys


class InputError(Exception):
    """Bad input to a subcommand: printed as ``message`` on stderr, exit code 2."""


def read_module(path: str):
    """Parse a TVMScript file; a ParseError becomes ``PATH:line:col: message``."""
    import tir

    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as err:
        raise InputError(f"{path}: cannot read: {err.strerror or err}") from None
    try:
        return tir.parse(text)
    except tir.ParseError as err:
        raise InputError(f"{path}:{err.line}:{err.col}: {err.message}") from None


def as_module(mod, path: str):
    """``mod`` as an IRModule: a lone PrimFunc becomes a module of that one function."""
    from tir.function import PrimFunc
    from tir.module import IRModule

    if isinstance(mod, PrimFunc):
        return IRModule({mod.name or os.path.splitext(os.path.basename(path))[0]: mod})
    return mod


def check_output_path(out: str, inputs: "list[str]") -> None:
    """Refuse to write over one of the inputs."""
    for p in inputs:
        if os.path.exists(out) and os.path.exists(p) and os.path.samefile(out, p):
            raise InputError(f"{out}: refusing to overwrite an input file; choose another -o path")


def fail(message: str, code: int = 2) -> int:
    print(message, file=sys.stderr)
    return code


class Progress:
    """A one-line progress bar on stderr for long work (many files, whole models).

    Drawn only when stderr is a terminal, so pipes, logs and ``--json`` consumers see
    nothing of it.
    """

    def __init__(self, total: int, label: str = "", stream=None, width: int = 30):
        self.total = max(total, 1)
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self.done = 0
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)()) and total > 1

    def advance(self, what: str = "") -> None:
        """One more unit of work done; ``what`` names it."""
        self.done += 1
        if not self.enabled:
            return
        filled = self.width * self.done // self.total
        bar = "#" * filled + "." * (self.width - filled)
        text = f"\r{self.label} [{bar}] {self.done}/{self.total} {what}"[:120]
        self.stream.write(text.ljust(120))
        self.stream.flush()

    def clear(self) -> None:
        """Erase the bar (before printing a line of output; the next advance redraws it)."""
        if self.enabled and self.done:
            self.stream.write("\r" + " " * 120 + "\r")
            self.stream.flush()

    close = clear

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def with_examples(*examples: str, note: str = "") -> dict:
    """``add_parser`` keywords that end a subcommand's --help with usage examples."""
    import argparse

    lines = ["examples:"] + [f"  {e}" for e in examples]
    if note:
        lines += ["", note]
    return {"epilog": "\n".join(lines), "formatter_class": argparse.RawDescriptionHelpFormatter}
