"""Attribute values (``T.func_attr``, block attributes, loop annotations) as Python data."""
from __future__ import annotations

import ast

from ..buffer import Buffer
from ..expr import FloatImm, IntImm, PrimExpr
from ..node import Target
from .context import describe, dotted, error


def literal(ctx, node):
    """A Python value from a literal: numbers, strings, bools, None, lists, tuples, dicts.

    ``T.int32(4)`` and friends give their number; other TIR expressions are kept as PrimExprs,
    and a buffer's name gives the Buffer (``{"layout_free_placeholders": [B]}``).
    """
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple)):
        return [literal(ctx, e) for e in node.elts]
    if isinstance(node, ast.Dict):
        return _dict(ctx, node)
    if isinstance(node, ast.Call) and dotted(node.func) == "T.target":
        return _target(ctx, node)
    from .expr import expr

    value = expr(ctx, node)
    if isinstance(value, (IntImm, FloatImm)) and not value.dtype.is_bool:
        return value.value
    if isinstance(value, IntImm):
        return bool(value.value)
    if isinstance(value, (PrimExpr, Buffer, int, float, str)):
        return value
    raise error(node, f"expected a literal value or a buffer, got {describe(node)!r}")


def _target(ctx, node: ast.Call) -> Target:
    """``T.target({"kind": "llvm", ...})`` or ``T.target("llvm")``: kept, not interpreted."""
    if len(node.args) != 1 or node.keywords:
        raise error(node, "T.target takes one argument: the target's configuration dict or its name")
    config = literal(ctx, node.args[0])
    if not isinstance(config, (dict, str)):
        raise error(node.args[0], f"T.target expects a dict or a string, got {describe(node.args[0])!r}")
    return Target(config)


def _dict(ctx, node: ast.Dict) -> dict:
    out = {}
    for k, v in zip(node.keys, node.values):
        if k is None:
            raise error(v, "**expansion is not supported in an attribute dict")
        key = literal(ctx, k)
        if not isinstance(key, str):
            raise error(k, "attribute names must be strings")
        out[key] = literal(ctx, v)
    return out


def literal_dict(ctx, node) -> dict:
    """A ``{"name": value}`` literal."""
    if not isinstance(node, ast.Dict):
        raise error(node, f"expected a dict such as {{\"key\": value}}, got {describe(node)!r}")
    return _dict(ctx, node)
