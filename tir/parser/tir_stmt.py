"""TIR statements: stores, lets, loops, blocks, branches, evaluate, and header calls."""
from __future__ import annotations

import ast

import attrs

from .. import dtype as dt
from ..buffer import Buffer
from ..expr import Cast, IntImm, PrimExpr, Var, access_dtype
from ..errors import ParseError
from ..stmt import BufferStore, Evaluate, IfThenElse, LetStmt, While, seq
from . import block as blk
from .buffers import buffer_from_call
from .context import describe, dotted, error
from .expr import _BINOPS, BITOPS, binary, bitwise, boolean, expr, indices, prim, to_prim
from .frames import FuncFrame
from .literals import literal_dict
from .loops import for_loop
from .tir_calls import dtype_arg, positional

_SYMBOLIC = ("T.int32", "T.int64", "T.int16", "T.int8", "T.uint32", "T.uint64")


def body(ctx, nodes: list, owner) -> "object":
    """The statements of a suite as one Stmt (``T.evaluate(0)`` when it holds none)."""
    stmts = stmt_list(ctx, nodes, owner)
    if not stmts:
        return Evaluate(IntImm(dt.int32, 0))
    return seq(*stmts)


def stmt_list(ctx, nodes: list, owner=None) -> list:
    """Read statements in order; a let binds the statements after it (its body)."""
    out = []
    for k, node in enumerate(nodes):
        if _is_attr_call(node):
            out.append(_attr_stmt(ctx, node.value, nodes[k + 1:], node))
            return out
        if _is_alloc_local(node):
            out.append(guarded(node, _alloc_local, ctx, node, nodes[k + 1:]))
            return out
        if _is_view(node):
            out.append(guarded(node, _view, ctx, node, nodes[k + 1:]))
            return out
        if _is_decl_assign(node):
            out.append(guarded(node, _decl_assign, ctx, node, nodes[k + 1:]))
            return out
        if _is_launch(node):
            out.append(guarded(node, _launch, ctx, node.value, blk.single_target(node).id, nodes[k + 1:], node))
            return out
        if _is_body_alloc(ctx, node, owner, out):
            out.append(guarded(node, _allocated, ctx, node, nodes[k + 1:]))
            return out
        let = guarded(node, _let_header, ctx, node)
        if let is not None:
            var, value = let
            with ctx.scope(var.name, var):
                rest = body(ctx, nodes[k + 1:], node)
            out.append(LetStmt(var, value, rest))
            return out
        s = stmt(ctx, node)
        if s is not None:
            out.append(s)
    return out


def stmt(ctx, node):
    """One statement: a Stmt, or None for header statements that only fill a frame."""
    handler = _HANDLERS.get(type(node))
    if handler is None:
        raise error(node, f"unsupported statement {describe(node)!r} in a prim_func")
    return guarded(node, handler, ctx, node)


def guarded(node, fn, *args):
    """``fn(*args)``, with any unexpected exception reported as a ParseError at ``node``."""
    try:
        return fn(*args)
    except ParseError:
        raise
    except RecursionError:
        raise error(node, "statement nested too deeply") from None
    except Exception as err:  # noqa: BLE001 - an IR constructor refused the parts
        raise error(node, f"invalid statement {describe(node)!r}: {err}") from None


# ---------------------------------------------------------------------------- attributes

def _is_attr_call(node) -> bool:
    """``T.attr(...)`` as a statement: TVM's concise form, whose body is the rest of the suite."""
    return isinstance(node, ast.Expr) and blk.callee(node.value) == "T.attr"


def _attr_stmt(ctx, call, body_nodes: list, owner):
    """``T.attr({"key": value})`` or ``T.attr(node, "key", value)`` over ``body_nodes``."""
    from ..stmt import AttrStmt
    from .literals import literal

    args = positional(call, 1, 3)
    if len(args) == 1:
        attrs_, obj = literal_dict(ctx, args[0]), None
    elif len(args) == 3:
        key = literal(ctx, args[1])
        if not isinstance(key, str):
            raise error(args[1], "T.attr: the attribute key must be a string")
        attrs_, obj = {key: literal(ctx, args[2])}, literal(ctx, args[0])
    else:
        raise error(call, "T.attr takes {\"key\": value} or (node, \"key\", value)")
    return AttrStmt(attrs_, _scoped_body(ctx, body_nodes, owner), obj)


# ---------------------------------------------------------------------------- local buffers

SCOPED_ALLOCS = {"T.alloc_local": "local", "T.alloc_shared": "shared"}
"""Allocations TVM 0.27 prints with their storage scope in the name."""


def _assigned_call(node) -> "str | None":
    """The function called in ``name = f(...)`` (dotted: ``T.alloc_local``), else None."""
    if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
        return dotted(node.value.func)
    return None


def _is_alloc_local(node) -> bool:
    return _assigned_call(node) in SCOPED_ALLOCS


def _alloc_local(ctx, node: ast.Assign, rest: list):
    """``buf = T.alloc_local(shape, dtype)`` (``T.alloc_shared``): a buffer in ``"local"``
    (``"shared"``) scope (TVM's ``T.alloc_buffer(..., scope="local")``) allocated for the rest
    of the suite."""
    call = node.value
    name = dotted(call.func)
    scope = SCOPED_ALLOCS[name]
    if any(k.arg == "scope" for k in call.keywords):
        raise error(call, f"{name} takes no scope: it is always \"{scope}\"")
    return _allocated(ctx, node, rest, scope)


def _at_start(buf):
    """``buf`` without an ``elem_offset`` of 0 (TVM prints the offset of a buffer after its
    lowering passes; 0 is where a compact buffer starts anyway)."""
    return attrs.evolve(buf, elem_offset=None) if getattr(buf.elem_offset, "value", None) == 0 else buf


def _is_body_alloc(ctx, node, owner, before: list) -> bool:
    """``b = T.alloc_buffer(...)`` among the statements of a body, not in the header of a
    block or function (the start of its own suite, before any statement): TVM's allocation
    statement (after its lowering passes), whose shape may use a variable bound just before."""
    if _assigned_call(node) != "T.alloc_buffer":
        return False
    frame = ctx.frames[-1] if ctx.frames else None
    return frame is not None and (before or owner is not getattr(frame, "node", None))


def _allocated(ctx, node: ast.Assign, rest: list, scope: "str | None" = None):
    """``b = T.alloc_*(shape, dtype)``: a buffer (in ``scope`` when given) allocated for the
    rest of the suite (an elem_offset of 0 is its start)."""
    from ..stmt import AllocateBuffer

    target = blk.single_target(node)
    buf = _at_start(buffer_from_call(ctx, node.value, target.id, node.value.args))
    if scope is not None:
        buf = attrs.evolve(buf, scope=scope)
    inner = _with_buffer(ctx, target.id, buf, rest, node)
    return AllocateBuffer(buf, inner)


def _with_buffer(ctx, name: str, buf, nodes: list, node):
    """The statements ``nodes`` read with ``name`` bound to ``buf``."""
    with ctx.scope(name, buf):
        return body(ctx, nodes, node)


def _is_launch(node) -> bool:
    return _assigned_call(node) == "T.launch_thread"


def _launch(ctx, call: ast.Call, name: str, nodes: list, node):
    """``T.launch_thread("threadIdx.x", extent)``: the statements ``nodes`` run for each index
    of the thread axis, bound to ``name``."""
    from ..stmt import LaunchThread

    tag_node, ext_node = positional(call, 2)
    if not (isinstance(tag_node, ast.Constant) and isinstance(tag_node.value, str)):
        raise error(tag_node, "T.launch_thread: the thread axis is a string such as \"threadIdx.x\"")
    extent = prim(ctx, ext_node)
    if not extent.dtype.is_integer:
        raise error(ext_node, f"T.launch_thread: the extent must be an integer, got {extent.dtype}")
    var = Var(name, extent.dtype)
    with ctx.scope(name, var):
        inner = body(ctx, nodes, node)
    return LaunchThread(var, tag_node.value, extent, inner)


def _is_view(node) -> bool:
    return (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Attribute) and node.value.func.attr == "view"
            and isinstance(node.value.func.value, ast.Name))


def _view(ctx, node: ast.Assign, rest: list):
    """``x_1 = x.view(n, ...)``: TVM's print of a flattened buffer, ``x``'s storage read with
    another compact shape (one extent may be -1: the rest of the elements) over the rest of
    the suite."""
    from ..stmt import AllocateBuffer

    target = blk.single_target(node)
    call = node.value
    source = ctx.lookup(call.func.value.id, call.func.value)
    if not isinstance(source, Buffer):
        raise error(call.func.value, f"{call.func.value.id!r} is not a buffer; .view() takes a buffer")
    if call.keywords or not call.args or any(isinstance(a, ast.Constant) and isinstance(a.value, str)
                                             for a in call.args):
        raise error(call, "x.view() is read with the new extents only (no dtype or layout view)")
    dims = [prim(ctx, a, dt.int64) for a in call.args]
    for a, d in zip(call.args, dims):
        if not d.dtype.is_int:
            raise error(a, f"x.view(): an extent must be an integer, got {d.dtype}")
    size = _constant_size(source.shape)
    known = [d for d in dims if not (isinstance(d, IntImm) and d.value == -1)]
    if len(dims) - len(known) > 1:
        raise error(call, "x.view(): at most one extent may be -1")
    if len(known) < len(dims):
        rest_size = _constant_size(known)
        if size is None or rest_size is None or rest_size == 0 or size % rest_size:
            raise error(call, f"x.view(): cannot infer the -1 extent of a view of {source.name!r}")
        dims = [IntImm(dt.int64, size // rest_size) if d not in known else d for d in dims]
    _check_fits(source, dims, call, "x.view()")
    buf = Buffer(target.id, tuple(dims), source.dtype, scope=source.scope)
    inner = _with_buffer(ctx, target.id, buf, rest, node)
    return AllocateBuffer(buf, inner, source)


def _is_decl_assign(node) -> bool:
    return _assigned_call(node) == "T.decl_buffer"


def _decl_assign(ctx, node: ast.Assign, rest: list):
    """``b = T.decl_buffer(shape, dtype)`` over the rest of the suite: allocated, or with
    ``data=src.data`` (TVM's print of a flattened buffer already of its final shape) a view of
    ``src``'s storage, as :func:`_view`."""
    from ..stmt import AllocateBuffer

    target = blk.single_target(node)
    call = node.value
    data = [k for k in call.keywords if k.arg == "data"]
    source = None
    if data:
        ref = data[0].value
        if not (isinstance(ref, ast.Attribute) and ref.attr == "data" and isinstance(ref.value, ast.Name)):
            raise error(ref, "T.decl_buffer(data=...) is read as another buffer's storage: data=buf.data")
        source = ctx.lookup(ref.value.id, ref.value)
        if not isinstance(source, Buffer):
            raise error(ref.value, f"{ref.value.id!r} is not a buffer")
        call = ast.Call(func=call.func, args=call.args, keywords=[k for k in call.keywords if k.arg != "data"])
        ast.copy_location(call, node.value)
    buf = buffer_from_call(ctx, call, target.id, call.args)
    if source is not None:
        buf = _at_start(buf)
        if buf.strides or buf.elem_offset is not None:
            raise error(node.value, f"T.decl_buffer: a view of {source.name!r} has a compact layout from its start")
        if buf.dtype != source.dtype and "bfloat" in (buf.dtype.code, source.dtype.code):
            raise error(node.value, f"T.decl_buffer: a {buf.dtype} view of {source.name!r} ({source.dtype}) "
                                    "is not supported (bfloat16 is held as float32)")
        _check_fits(source, buf.shape, node.value, "T.decl_buffer", buf.dtype)
    inner = _with_buffer(ctx, target.id, buf, rest, node)
    return AllocateBuffer(buf, inner, source)


def _check_fits(source, dims, node, what: str, dtype=None) -> None:
    """A view of ``dims`` (of ``dtype``, default the source's: TVM's storage reuse views
    memory with another type) takes no more bytes than ``source`` (when both are constant)."""
    size, view_size = _constant_size(source.shape), _constant_size(dims)
    if size is None or view_size is None:
        return
    dtype = dtype or source.dtype
    if view_size * _bytes(dtype) > size * _bytes(source.dtype):
        held = f"{size}" if dtype == source.dtype else f"{size} {source.dtype}"
        raise error(node, f"{what}: {view_size} {'elements' if dtype == source.dtype else dtype}, "
                          f"more than {source.name!r} holds ({held})")


def _bytes(d) -> int:
    """Bytes of one value of ``d`` in memory (a bool takes one)."""
    return max(1, d.bits // 8) * d.lanes


def _constant_size(dims) -> "int | None":
    size = 1
    for d in dims:
        value = getattr(d, "value", d)
        if not isinstance(value, int) or isinstance(value, bool):
            return None
        size *= value
    return size


# ---------------------------------------------------------------------------- lets

def _let_header(ctx, node):
    """(var, value) when ``node`` is a let binding (``x: T.let[T.int64] = v`` or ``x = v``)."""
    if isinstance(node, ast.AnnAssign):
        return _annotated_let(ctx, node)
    if not isinstance(node, ast.Assign) or len(node.targets) != 1:
        return None
    target = node.targets[0]
    if not isinstance(target, ast.Name) or _special_call(node.value):
        return None
    value = to_prim(expr(ctx, node.value), node.value)
    return Var(target.id, value.dtype), value


def _annotated_let(ctx, node: ast.AnnAssign):
    if not isinstance(node.target, ast.Name) or node.value is None:
        raise error(node, "expected name: T.let[dtype] = value")
    ann = node.annotation
    if isinstance(ann, ast.Subscript) and dotted(ann.value) == "T.let":
        ann = ann.slice
    d = dtype_arg(ctx, ann)
    return Var(node.target.id, d), prim(ctx, node.value, d)


def _special_call(value) -> bool:
    name = blk.callee(value)
    if name is None:
        return False
    if name.startswith("T.axis.") or name in blk.ALLOC_NAMES or name in ("T.match_buffer", "T.Buffer"):
        return True
    return name in _SYMBOLIC and not value.args


# ---------------------------------------------------------------------------- handlers

def _assign(ctx, node: ast.Assign):
    if len(node.targets) != 1:
        raise error(node, "chained assignment is not supported")
    target, value = node.targets[0], node.value
    if isinstance(target, ast.Subscript):
        return _store(ctx, target, expr(ctx, value), value)
    name = blk.callee(value) or ""
    if name.startswith("T.axis."):
        return blk.axis(ctx, node, value, name)
    if name in blk.ALLOC_NAMES:
        return blk.alloc(ctx, node, value)
    if name == "T.match_buffer":
        return blk.match_buffer(ctx, node, value)
    if name in _SYMBOLIC:
        return declare_symbolic(ctx, node, value, name)
    if name == "T.Buffer" and isinstance(target, ast.Name):
        # A buffer named only by an annotation (TVM prints ``T_reshape = T.Buffer(...)`` in
        # a block whose ``layout_free_placeholders`` refers to a buffer inlined away).
        ctx.define(target.id, buffer_from_call(ctx, value, target.id, value.args))
        return None
    raise error(node, f"unsupported assignment {describe(node)!r}")


def declare_symbolic(ctx, node, call, name: str) -> None:
    """``n = T.int64()``: a symbolic variable (``is_size_var=True`` for a size variable)."""
    frame = ctx.frames[0] if ctx.frames else None
    if isinstance(frame, FuncFrame) and id(node) in frame.predeclared:
        return None
    var = symbolic_var(ctx, node, call, name)
    ctx.define(var.name, var)
    return None


def symbolic_var(ctx, node, call, name: str):
    """The Var (or SizeVar) declared by ``n = T.int64()``."""
    from ..expr import SizeVar

    if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
        raise error(node, "expected one name on the left of '='")
    positional(call, 0, 0, ("is_size_var",))
    size_node = next((k.value for k in call.keywords if k.arg == "is_size_var"), None)
    is_size = size_node is not None and isinstance(size_node, ast.Constant) and size_node.value is True
    cls = SizeVar if is_size else Var
    return cls(node.targets[0].id, dt.dtype(name[2:]))


def _store(ctx, target: ast.Subscript, value, value_node):
    buf = expr(ctx, target.value)
    if not isinstance(buf, Buffer):
        raise error(target.value, f"cannot store into {describe(target.value)!r}; expected a buffer")
    idx = indices(ctx, buf, target.slice, target)
    want = access_dtype(buf, idx)  # a vector for a vector store (a Ramp index)
    value = to_prim(value, value_node, want)
    if value.dtype.is_bool and want.is_integer and want.bits == 8 and value.dtype.lanes == want.lanes:
        value = Cast(want, value)  # TVM keeps bool vectors in int8 storage
    if value.dtype != want:
        raise error(value_node, f"storing a {value.dtype} value into {want} elements of buffer {buf.name!r}")
    return BufferStore(buf, value, idx)


def _augassign(ctx, node: ast.AugAssign):
    op = type(node.op)
    if op not in _BINOPS and op not in BITOPS or not isinstance(node.target, ast.Subscript):
        raise error(node, "only buffer[...] += -= *= /= //= %= &= |= ^= <<= >>= value is supported")
    current, value = expr(ctx, node.target), expr(ctx, node.value)
    if op in BITOPS:
        return _store(ctx, node.target, bitwise(BITOPS[op], current, value, node), node.value)
    return _store(ctx, node.target, binary(_BINOPS[op], current, value, node), node.value)


def _expr_stmt(ctx, node: ast.Expr):
    value = node.value
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return None  # a docstring
    name = blk.callee(value)
    if name is None:
        raise error(node, f"unsupported statement {describe(node)!r}")
    if blk.header_call(ctx, value, name):
        return None
    if name == "T.func_attr":
        frame = ctx.frame(FuncFrame, value, name)
        (arg,) = positional(value, 1)
        frame.attrs.update(literal_dict(ctx, arg))
        return None
    if name == "T.evaluate":
        (arg,) = positional(value, 1)
        return Evaluate(to_prim(expr(ctx, arg), arg))
    result = expr(ctx, value)
    if not isinstance(result, PrimExpr):
        raise error(node, f"unsupported statement {describe(node)!r}")
    return Evaluate(result)


def _with(ctx, node: ast.With):
    if len(node.items) != 1:
        raise error(node, "expected with T.block(\"name\"):, with T.init(): or with T.attr(...):")
    call = node.items[0].context_expr
    name = blk.callee(call)
    if name == "T.decl_buffer":
        return _decl_buffer(ctx, node, call)
    if name == "T.launch_thread":
        target = node.items[0].optional_vars
        if not isinstance(target, ast.Name):
            raise error(node, "expected with T.launch_thread(\"threadIdx.x\", extent) as name:")
        return _launch(ctx, call, target.id, node.body, node)
    if node.items[0].optional_vars is not None:
        raise error(node, "unexpected 'as' in this with-statement")
    if name in blk.BLOCK_NAMES:
        return blk.block(ctx, node, call)
    if name == "T.attr":
        return _attr_stmt(ctx, call, node.body, node)
    if name == "T.init":
        positional(call, 0)
        blk.init(ctx, node)
        return None
    raise error(call, f"unsupported with-statement {describe(call)!r}; expected T.block/T.sblock, T.init or T.attr")


def _decl_buffer(ctx, node: ast.With, call):
    """``with T.decl_buffer(shape, dtype) as A:``: a buffer allocated for the body."""
    from ..stmt import AllocateBuffer
    from .buffers import buffer_from_call

    target = node.items[0].optional_vars
    if not isinstance(target, ast.Name):
        raise error(node, "expected with T.decl_buffer(shape, dtype) as name:")
    buf = buffer_from_call(ctx, call, target.id, call.args)
    inner = _with_buffer(ctx, target.id, buf, node.body, node)
    return AllocateBuffer(buf, inner)


def _if(ctx, node: ast.If):
    cond = boolean(expr(ctx, node.test), node.test)
    then = _scoped_body(ctx, node.body, node)
    other = _scoped_body(ctx, node.orelse, node) if node.orelse else None
    return IfThenElse(cond, then, other)


def _scoped_body(ctx, nodes, owner):
    with ctx.scope():
        return body(ctx, nodes, owner)


def _while(ctx, node: ast.While):
    if node.orelse:
        raise error(node.orelse[0], "a while loop cannot have an else branch")
    cond = boolean(expr(ctx, node.test), node.test)
    return While(cond, _scoped_body(ctx, node.body, node))


def _pass(ctx, node):
    return None


_HANDLERS = {
    ast.Assign: _assign,
    ast.AugAssign: _augassign,
    ast.Expr: _expr_stmt,
    ast.For: for_loop,
    ast.With: _with,
    ast.If: _if,
    ast.While: _while,
    ast.Pass: _pass,
}
