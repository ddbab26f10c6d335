"""The TVMScript reader: ``tir.parse(text)`` -> IRModule or PrimFunc.

The text is read with Python's ``ast`` module and never executed. Both dialects are
accepted: ``tir`` (``T.block``, ``T.alloc_buffer``, TVM up to 0.24) and ``tirx``
(``T.sblock``, ``T.sblock_alloc_buffer``, ``s_tir=True``, 0.25 and later). Anything the
reader does not understand raises :class:`tir.ParseError` with its line and column.
"""
from __future__ import annotations

import ast
import gc
import warnings

from ..errors import ParseError
from .context import Context
from .module import read_file

__all__ = ["parse", "parse_file", "ParseError"]


def parse(text: str):
    """Read TVMScript: a module (``@I.ir_module class``) gives an IRModule, a lone
    ``@T.prim_func`` a PrimFunc (with ``global_symbol`` set to its name unless private)."""
    if not isinstance(text, str):
        raise ParseError(f"expected TVMScript text, got {type(text).__name__}", 1, 1)
    # The reader allocates many small objects and frees none: the cyclic collector would
    # only rescan them, so it is paused for the duration of the call.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return read_file(Context(), _syntax(text))
    except RecursionError:
        raise ParseError("input nested too deeply", 1, 1) from None
    finally:
        if was_enabled:
            gc.enable()


def parse_file(path: str):
    """Read a TVMScript file (see :func:`parse`)."""
    with open(path, encoding="utf-8") as f:
        return parse(f.read())


def _syntax(text: str) -> ast.Module:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)  # e.g. "1if": reported as errors later
            return _split_declarations(ast.parse(text))
    except SyntaxError as err:
        raise ParseError(f"invalid Python syntax: {err.msg}", err.lineno or 1, err.offset or 1) from None
    except (ValueError, MemoryError, RecursionError) as err:
        raise ParseError(f"cannot read the text: {err}", 1, 1) from None


def _split_declarations(tree: ast.Module) -> ast.Module:
    """``n, m = T.int64(), T.int64()`` (as hand-written TVMScript and TVM's docs declare
    several symbolic sizes at once) read as one declaration per line. Assignments are
    statements, so only statement lists are walked, not the expressions (most of the tree)."""
    tree.body = _split_in(tree.body)
    return tree


def _split_in(stmts: list) -> list:
    out = []
    for node in stmts:
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(node, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                setattr(node, field, _split_in(inner))
        for part in (*getattr(node, "handlers", ()), *getattr(node, "cases", ())):
            part.body = _split_in(part.body)
        out.extend(_split_assign(node) if isinstance(node, ast.Assign) else (node,))
    return out


def _split_assign(node: ast.Assign) -> list:
    target = node.targets[0] if len(node.targets) == 1 else None
    if (isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple)
            and len(target.elts) == len(node.value.elts) > 1
            and all(isinstance(t, ast.Name) for t in target.elts)
            and all(_is_declaration(v) for v in node.value.elts)):
        return [ast.copy_location(ast.Assign([t], v), node) for t, v in zip(target.elts, node.value.elts)]
    return [node]


def _is_declaration(node) -> bool:
    from .context import dotted
    from .tir_stmt import _SYMBOLIC

    return isinstance(node, ast.Call) and not node.args and dotted(node.func) in _SYMBOLIC
