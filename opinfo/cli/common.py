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


def check_output_path(out: str, inputs: "list[str]") -> None:
    """Refuse to write over one of the inputs."""
    for p in inputs:
        if os.path.exists(out) and os.path.exists(p) and os.path.samefile(out, p):
            raise InputError(f"{out}: refusing to overwrite an input file; choose another -o path")


def fail(message: str, code: int = 2) -> int:
    print(message, file=sys.stderr)
    return code
