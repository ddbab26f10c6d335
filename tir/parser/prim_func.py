"""``@T.prim_func def f(...):`` -> PrimFunc."""
from __future__ import annotations

import ast

from .. import dtype as dt
from ..expr import Var
from ..function import PrimFunc
from ..stmt import Block, BlockRealize
from .block import TRUE
from .buffers import buffer_from_call
from .context import describe, dotted, error
from .frames import FuncFrame
from .tir_calls import dtype_arg
from .tir_stmt import _SYMBOLIC, body, symbolic_var

_FLAGS = ("private", "s_tir", "check_well_formed")


def decorator_flags(ctx, node: ast.FunctionDef, name: str) -> "dict | None":
    """The keyword flags of a ``@T.prim_func(...)``-style decorator, None if absent."""
    for dec in node.decorator_list:
        if dotted(dec) == name:
            return {}
        if isinstance(dec, ast.Call) and dotted(dec.func) == name:
            return _flags(dec)
    return None


def _flags(dec: ast.Call) -> dict:
    if dec.args:
        raise error(dec, f"{describe(dec.func)} takes only keyword flags")
    out = {}
    for kw in dec.keywords:
        if kw.arg not in _FLAGS or not isinstance(kw.value, ast.Constant) or not isinstance(kw.value.value, bool):
            raise error(kw, f"unexpected decorator argument {kw.arg!r}; expected {', '.join(_FLAGS)} = True/False")
        out[kw.arg] = kw.value.value
    return out


def prim_func(ctx, node: ast.FunctionDef, flags: dict) -> PrimFunc:
    """Read a prim_func definition; a non-private one gets ``global_symbol`` = its name."""
    _check_signature(node)
    with ctx.scope():
        frame = FuncFrame([], {})
        frame.node = node
        _predeclare(ctx, frame, node.body)
        scalars = {arg.arg: _scalar_param(ctx, arg) for arg in node.args.args if not _is_buffer(arg)}
        for arg in node.args.args:
            _param(ctx, frame, arg, scalars)
        ctx.frames.append(frame)
        try:
            inner = body(ctx, node.body, node)
        finally:
            ctx.frames.pop()
    attrs = dict(frame.attrs)
    if not flags.get("private", False) and "global_symbol" not in attrs:
        attrs["global_symbol"] = node.name
    return PrimFunc(tuple(frame.params), frame.buffer_map, _root(frame, inner), attrs)


def _check_signature(node: ast.FunctionDef) -> None:
    a = node.args
    if a.vararg or a.kwarg or a.kwonlyargs or a.defaults or a.posonlyargs:
        raise error(node, f"prim_func {node.name!r}: only plain annotated parameters are supported")


def _predeclare(ctx, frame: FuncFrame, stmts: list) -> None:
    """Declare ``n = T.int64()`` statements of the body first: the signature may use them."""
    for s in stmts:
        if not isinstance(s, ast.Assign) or not isinstance(s.value, ast.Call):
            continue
        name = dotted(s.value.func)
        if name in _SYMBOLIC and not s.value.args:
            var = symbolic_var(ctx, s, s.value, name)
            ctx.define(var.name, var)
            frame.predeclared.add(id(s))


def _is_buffer(arg: ast.arg) -> bool:
    return _buffer_args(arg.annotation) is not None


def _buffer_args(ann) -> "list | None":
    """The arguments of a ``T.Buffer((128,), "float32")`` annotation, or of the subscript
    form TVM 0.9-0.11 printed, ``T.Buffer[(128,), "float32"]``; None for other annotations."""
    if isinstance(ann, ast.Call) and dotted(ann.func) == "T.Buffer":
        return ann.args
    if isinstance(ann, ast.Subscript) and dotted(ann.value) == "T.Buffer":
        sl = ann.slice
        return list(sl.elts) if isinstance(sl, ast.Tuple) else [sl]
    return None


def _scalar_param(ctx, arg: ast.arg) -> Var:
    """A scalar parameter, defined before any buffer is read: TVM quotes a buffer extent
    that uses a scalar declared later in the signature (``lv: T.Buffer((5, "n * 18")), n: T.int64``)."""
    if arg.annotation is None:
        raise error(arg, f"parameter {arg.arg!r} needs a type such as T.Buffer(...), T.handle or T.int32")
    var = Var(arg.arg, dtype_arg(ctx, arg.annotation))
    ctx.define(arg.arg, var)
    return var


def _param(ctx, frame: FuncFrame, arg: ast.arg, scalars: dict) -> None:
    if _is_buffer(arg):
        ann = arg.annotation
        var = Var(arg.arg, dt.handle)
        buf = buffer_from_call(ctx, ann, arg.arg, _buffer_args(ann))
        frame.buffer_map[var] = buf
        ctx.define(arg.arg, buf)
    else:
        var = scalars[arg.arg]
    frame.params.append(var)


def _root(frame: FuncFrame, inner):
    """The function body: an explicit root block as written, else an implicit one."""
    if _is_explicit_root(inner) and not frame.allocs:
        return inner
    root = Block("root", (), (), (), inner, alloc_buffers=tuple(frame.allocs))
    return BlockRealize((), TRUE, root)


def _is_explicit_root(inner) -> bool:
    return isinstance(inner, BlockRealize) and inner.block.name == "root" and not inner.block.iter_vars

