"""tir.topi: named ops with Relax attributes -> PrimFuncs in the loop forms TVM produces.

    func = tir.topi.lower("nn.conv2d", [((1, 8, 10, 10), "float32"), ((16, 8, 3, 3), "float32")],
                          strides=[2, 2], padding=[1, 1, 1, 1])

Op names and attribute names follow DESIGN.md (the Relax names without ``relax.``).
"""
from __future__ import annotations

import functools
import inspect

from ..builder import Builder
from ..function import PrimFunc
from .common import OpError, ShapeError

__all__ = ["lower", "lower_into", "op_names", "accepted_attrs", "OpError", "ShapeError"]


@functools.lru_cache(maxsize=1)
def _table() -> dict:
    from .ops import op_table

    return op_table()


def op_names() -> list:
    """Every op name :func:`lower` accepts, sorted."""
    return sorted(_table())


def _signature(op_name: str):
    fn = _table().get(op_name)
    if fn is None:
        raise ValueError(f"unknown op {op_name!r}; accepted ops: {', '.join(op_names())}")
    params = list(inspect.signature(fn).parameters.values())[1:]
    inputs = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    attrs = {p.name: p.default for p in params if p.kind is p.KEYWORD_ONLY}
    variadic = any(p.kind is p.VAR_POSITIONAL for p in params)
    return fn, inputs, attrs, variadic


def accepted_attrs(op_name: str) -> dict:
    """Attribute name -> default value for ``op_name``."""
    return dict(_signature(op_name)[2])


def lower_into(b: Builder, op_name: str, buffers: list, **attrs):
    """Lower ``op_name`` on existing buffers into builder ``b``; returns the output buffer(s)."""
    fn, inputs, accepted, variadic = _signature(op_name)
    unknown = sorted(set(attrs) - set(accepted))
    if unknown:
        raise ValueError(f"{op_name}: unknown attribute(s) {', '.join(unknown)}; "
                         f"accepted: {', '.join(accepted) or 'none'}")
    if not variadic and len(buffers) != len(inputs):
        raise ValueError(f"{op_name}: expected {len(inputs)} input(s) "
                         f"({', '.join(p.name for p in inputs)}), got {len(buffers)}")
    return fn(b, *buffers, **attrs)


def lower(op_name: str, inputs, **attrs) -> PrimFunc:
    """A PrimFunc computing ``op_name`` on inputs given as ``(shape, dtype)`` pairs.

    Shapes hold ints or int64 ``tir.Var``/``SizeVar`` (e.g. a symbolic batch). Raises
    ``ValueError`` for an unknown op or attribute, and for shapes the op does not accept.
    """
    b = Builder()
    buffers = []
    for i, spec in enumerate(inputs):
        try:
            shape, dtype = spec
        except (TypeError, ValueError):
            raise ValueError(f"{op_name}: input {i} must be a (shape, dtype) pair, got {spec!r}") from None
        buffers.append(b.placeholder(shape, dtype, "x" if i == 0 else f"x{i}"))
    out = lower_into(b, op_name, buffers, **attrs)
    outs = list(out) if isinstance(out, tuple) else [out]
    return b.build(buffers, outs)
