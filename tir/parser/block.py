"""Blocks: ``with T.block(...)``/``T.sblock``, ``T.axis.*``, ``T.reads``/``T.writes``, ``T.init``."""
from __future__ import annotations

import ast

import attrs

from .. import dtype as dt
from ..access_region import infer_regions
from ..buffer import Range
from ..expr import IntImm, Var
from ..stmt import Block, BlockRealize, IterKind, IterVar, MatchBufferRegion
from .buffers import buffer_from_call, region, regions
from .context import describe, dotted, error
from .expr import boolean, expr, prim, span
from .frames import BlockFrame, FuncFrame
from .literals import literal_dict
from .tir_calls import positional

TRUE = IntImm(dt.bool_, 1)
_KINDS = {
    "spatial": IterKind.SPATIAL, "S": IterKind.SPATIAL, "reduce": IterKind.REDUCE,
    "R": IterKind.REDUCE, "scan": IterKind.SCAN, "opaque": IterKind.OPAQUE,
}
_REMAP = {"S": IterKind.SPATIAL, "R": IterKind.REDUCE}
BLOCK_NAMES = ("T.block", "T.sblock")
ALLOC_NAMES = ("T.alloc_buffer", "T.sblock_alloc_buffer")
ATTR_NAMES = ("T.block_attr", "T.sblock_attr")


def block(ctx, node: ast.With, call: ast.Call) -> BlockRealize:
    """Read ``with T.block("name"):`` and its body."""
    from .tir_stmt import body

    args = positional(call, 0, 1)  # ``T.block()``: TVM's default name is empty
    name = expr(ctx, args[0]) if args else ""
    if not isinstance(name, str):
        raise error(args[0], "a block name must be a string")
    frame = BlockFrame(name)
    frame.node = node
    ctx.frames.append(frame)
    try:
        with ctx.scope():
            inner = body(ctx, node.body, node)
    finally:
        ctx.frames.pop()
    # an explicit root block keeps empty regions, as in TVM
    root = name == "root" and not frame.iter_vars and isinstance(ctx.frames[-1], FuncFrame)
    return _realize(frame, inner, infer=not root)


def _realize(f: BlockFrame, inner, infer: bool = True) -> BlockRealize:
    blk = Block(
        f.name, f.iter_vars, f.reads or (), f.writes or (), inner, f.init, f.allocs,
        f.match_buffers, f.annotations,
    )
    if infer and (f.reads is None or f.writes is None):  # left out: worked out from the body, as TVM does
        reads, writes = infer_regions(blk)
        blk = attrs.evolve(blk, reads=reads if f.reads is None else blk.reads,
                           writes=writes if f.writes is None else blk.writes)
    return BlockRealize(f.bindings, f.predicate if f.predicate is not None else TRUE, blk)


def init(ctx, node: ast.With) -> None:
    """``with T.init():`` inside a block."""
    from .tir_stmt import body

    frame = ctx.frame(BlockFrame, node, "T.init()")
    if frame.init is not None:
        raise error(node, f"block {frame.name!r} has two T.init() sections")
    with ctx.scope():
        frame.init = body(ctx, node.body, node)


def header_call(ctx, node: ast.Call, name: str) -> bool:
    """Handle a block header statement (T.reads, T.writes, T.where, block attrs); False if not one."""
    if name in ("T.reads", "T.writes"):
        frame = ctx.frame(BlockFrame, node, name)
        positional(node, 0, len(node.args))
        setattr(frame, name[2:], regions(ctx, node.args))
        return True
    if name == "T.where":
        frame = ctx.frame(BlockFrame, node, name)
        (arg,) = positional(node, 1)
        frame.predicate = boolean(expr(ctx, arg), arg)
        return True
    if name in ATTR_NAMES:
        frame = ctx.frame(BlockFrame, node, name)
        (arg,) = positional(node, 1)
        frame.annotations.update(literal_dict(ctx, arg))
        return True
    return False


def axis(ctx, node: ast.Assign, call: ast.Call, name: str) -> None:
    """``v = T.axis.spatial(dom, binding)`` or ``a, b = T.axis.remap("SR", [i, k])``."""
    frame = ctx.frame(BlockFrame, node, name)
    if name == "T.axis.remap":
        return _remap(ctx, frame, node, call)
    kind = _KINDS.get(name[len("T.axis."):])
    if kind is None:
        raise error(call, f"unknown {name}; expected T.axis.spatial, reduce, scan, opaque or remap")
    target = single_target(node)
    dom_node, bind_node = positional(call, 2)
    dom = _domain(ctx, dom_node)
    var = Var(target.id, dom.extent.dtype)
    _add_iter(ctx, frame, var, dom, kind, prim(ctx, bind_node, var.dtype))


def _domain(ctx, node) -> Range:
    if isinstance(node, ast.Tuple):
        if len(node.elts) != 2:
            raise error(node, "an axis domain tuple is (begin, end)")
        lo = prim(ctx, node.elts[0])
        hi = prim(ctx, node.elts[1], lo.dtype)
        return Range(lo, span(lo, hi))
    ext = prim(ctx, node)
    return Range(IntImm(ext.dtype, 0), ext)


def _remap(ctx, frame, node, call) -> None:
    kinds_node, vars_node = positional(call, 2)
    kinds = expr(ctx, kinds_node)
    if not isinstance(kinds, str) or any(k not in _REMAP for k in kinds):
        raise error(kinds_node, "T.axis.remap kinds must be a string of S and R, e.g. \"SSR\"")
    if not isinstance(vars_node, (ast.List, ast.Tuple)) or len(vars_node.elts) != len(kinds):
        raise error(vars_node, f"T.axis.remap expects a list of {len(kinds)} loop variables")
    targets = _targets(node, len(kinds))
    for k, t, v_node in zip(kinds, targets, vars_node.elts):
        loop_var = expr(ctx, v_node)
        dom = ctx.loop_ranges.get(id(loop_var))
        if dom is None:
            raise error(v_node, f"T.axis.remap binds loop variables; {describe(v_node)!r} is not one")
        var = Var(t.id, loop_var.dtype)
        _add_iter(ctx, frame, var, Range(*dom), _REMAP[k], loop_var)


def _add_iter(ctx, frame, var, dom, kind, binding) -> None:
    frame.iter_vars.append(IterVar(var, dom, kind))
    frame.bindings.append(binding)
    ctx.define(var.name, var)


def single_target(node):
    if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
        raise error(node, "expected one name on the left of '='")
    return node.targets[0]


def _targets(node, n: int) -> list:
    if len(node.targets) != 1:
        raise error(node, "chained assignment is not supported")
    t = node.targets[0]
    elts = t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]
    if len(elts) != n or not all(isinstance(e, ast.Name) for e in elts):
        raise error(t, f"expected {n} names on the left of '='")
    return elts


def alloc(ctx, node: ast.Assign, call: ast.Call) -> None:
    """``buf = T.alloc_buffer(shape, dtype, ...)``: allocated by the innermost block (or the root)."""
    target = single_target(node)
    frame = ctx.frames[-1] if ctx.frames else None
    if frame is None:
        raise error(node, "T.alloc_buffer outside a function")
    buf = buffer_from_call(ctx, call, target.id, call.args)
    frame.allocs.append(buf)
    ctx.define(target.id, buf)


def match_buffer(ctx, node: ast.Assign, call: ast.Call) -> None:
    """``A = T.match_buffer(a, shape, dtype)`` on a handle parameter, or on a region in a block."""
    target = single_target(node)
    if not call.args:
        raise error(call, "T.match_buffer needs a source and a shape")
    frame = ctx.frames[-1] if ctx.frames else None
    if isinstance(frame, FuncFrame):
        return _match_param(ctx, frame, target, call)
    if not isinstance(frame, BlockFrame):
        raise error(node, "T.match_buffer is only allowed in a function or block header")
    source = region(ctx, call.args[0])
    buf = buffer_from_call(ctx, call, target.id, call.args[1:])
    frame.match_buffers.append(MatchBufferRegion(buf, source))
    ctx.define(target.id, buf)


def _match_param(ctx, frame, target, call) -> None:
    handle = expr(ctx, call.args[0])
    if not isinstance(handle, Var) or handle not in frame.params or not handle.dtype.is_handle:
        raise error(call.args[0], "T.match_buffer in a function body needs a T.handle parameter")
    if handle in frame.buffer_map:
        raise error(call.args[0], f"parameter {handle.name!r} is already matched to a buffer")
    buf = buffer_from_call(ctx, call, target.id, call.args[1:], data=handle)
    frame.buffer_map[handle] = buf
    ctx.define(target.id, buf)



def callee(node) -> "str | None":
    """The dotted name called by a Call node (``T.axis.remap``), else None."""
    return dotted(node.func) if isinstance(node, ast.Call) else None
