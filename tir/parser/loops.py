"""``for`` loops: ``range``, ``T.grid``, ``T.serial``/``parallel``/``vectorized``/``unroll``, ``T.thread_binding``."""
from __future__ import annotations

import ast

from ..expr import IntImm, Var
from ..stmt import For, ForKind
from .context import describe, dotted, error
from .expr import expr, match_types, prim, span
from .literals import literal_dict
from .tir_calls import keyword, positional

_KINDS = {
    "range": ForKind.SERIAL, "T.serial": ForKind.SERIAL, "T.parallel": ForKind.PARALLEL,
    "T.vectorized": ForKind.VECTORIZED, "T.unroll": ForKind.UNROLLED,
    "T.thread_binding": ForKind.THREAD_BINDING,
}


class _Header:
    """One loop of a ``for`` statement before its body is read."""

    __slots__ = ("name", "min", "extent", "kind", "thread", "annotations")

    def __init__(self, name, lo, ext, kind, thread=None, annotations=None):
        self.name, self.min, self.extent, self.kind = name, lo, ext, kind
        self.thread, self.annotations = thread, annotations or {}


def for_loop(ctx, node: ast.For):
    """Read a ``for`` statement into nested For nodes."""
    from .tir_stmt import body

    if node.orelse:
        raise error(node, "for ... else is not supported")
    headers = _headers(ctx, node)
    with ctx.scope():
        loop_vars = []
        for h in headers:
            v = Var(h.name, h.min.dtype)
            ctx.define(h.name, v)
            ctx.loop_ranges[id(v)] = (h.min, h.extent)
            loop_vars.append(v)
        inner = body(ctx, node.body, node)
    for h, v in zip(reversed(headers), reversed(loop_vars)):
        inner = For(v, h.min, h.extent, h.kind, inner, h.thread, h.annotations)
    return inner


def _names(target) -> list:
    elts = target.elts if isinstance(target, ast.Tuple) else [target]
    for e in elts:
        if not isinstance(e, ast.Name):
            raise error(e, f"a loop variable must be a name, got {describe(e)!r}")
    return [e.id for e in elts]


def _headers(ctx, node) -> list:
    call = node.iter
    name = dotted(call.func) if isinstance(call, ast.Call) else None
    names = _names(node.target)
    if name == "T.grid":
        positional(call, 1, len(call.args))
        if len(names) != len(call.args):
            raise error(node.target, f"T.grid has {len(call.args)} extents but {len(names)} loop variables")
        exts = [prim(ctx, a) for a in call.args]
        return [_Header(n, IntImm(e.dtype, 0), e, ForKind.SERIAL) for n, e in zip(names, exts)]
    kind = _KINDS.get(name)
    if kind is None:
        raise error(call, f"unsupported loop {describe(call)!r}; expected range, T.grid, T.serial, "
                    "T.parallel, T.vectorized, T.unroll or T.thread_binding")
    if len(names) != 1:
        raise error(node.target, f"{name} binds one loop variable, got {len(names)}")
    return [_single(ctx, call, name, kind, names[0])]


def _single(ctx, call, name, kind, var_name) -> _Header:
    allowed = () if name == "range" else ("annotations", "thread")
    args = positional(call, 1, 2, allowed)
    thread = None
    if kind is ForKind.THREAD_BINDING:
        thread = expr(ctx, keyword(call, "thread")) if keyword(call, "thread") is not None else None
        if not isinstance(thread, str):
            raise error(call, "T.thread_binding needs thread=\"threadIdx.x\" (or another tag)")
    elif keyword(call, "thread") is not None:
        raise error(call, f"{name} takes no thread= argument")
    ann_node = keyword(call, "annotations")
    annotations = literal_dict(ctx, ann_node) if ann_node is not None else None
    if len(args) == 1:
        ext = prim(ctx, args[0])
        return _Header(var_name, IntImm(ext.dtype, 0), ext, kind, thread, annotations)
    lo, hi = match_types(prim(ctx, args[0]), prim(ctx, args[1]))
    return _Header(var_name, lo, span(lo, hi), kind, thread, annotations)
