"""Statements of the mini TIR: stores, loops, blocks, sequences, branches, lets."""
from __future__ import annotations

import enum
from typing import Any

import attrs

from .buffer import Buffer, Range
from .expr import PrimExpr, Var
from .node import EMPTY, Map, Node


class ForKind(enum.Enum):
    """How a loop runs."""

    SERIAL = "serial"
    PARALLEL = "parallel"
    VECTORIZED = "vectorized"
    UNROLLED = "unroll"
    THREAD_BINDING = "thread_binding"


class IterKind(enum.Enum):
    """Kind of a block iteration variable."""

    SPATIAL = "spatial"
    REDUCE = "reduce"
    SCAN = "scan"
    OPAQUE = "opaque"


class Stmt(Node):
    """Base of statements."""

    __slots__ = ()


@attrs.frozen(cache_hash=True)
class BufferStore(Stmt):
    """``buffer[indices] = value``"""

    buffer: Buffer
    value: PrimExpr
    indices: tuple = attrs.field(converter=tuple)

    def __attrs_post_init__(self):
        if len(self.indices) != len(self.buffer.shape):
            raise ValueError(
                f"buffer {self.buffer.name!r} has rank {len(self.buffer.shape)}, "
                f"stored with {len(self.indices)} indices"
            )


@attrs.frozen(cache_hash=True)
class For(Stmt):
    """``for loop_var in range(min, min + extent)`` of a given kind."""

    loop_var: Var
    min: PrimExpr
    extent: PrimExpr
    kind: ForKind
    body: Stmt
    thread_binding: "str | None" = None
    """Thread tag for THREAD_BINDING loops (e.g. "blockIdx.x")."""
    annotations: Map = attrs.field(default=EMPTY, converter=Map)


@attrs.frozen(cache_hash=True)
class IterVar(Node):
    """A block iteration variable with its domain and kind."""

    var: Var
    dom: Range
    kind: IterKind


@attrs.frozen(cache_hash=True)
class MatchBufferRegion(Node):
    """``T.match_buffer(source_region, ...)`` inside a block: ``buffer`` views ``source``."""

    buffer: Buffer
    source: Any  # BufferRegion


@attrs.frozen(cache_hash=True)
class Block(Stmt):
    """A block: named computation over typed iteration variables with declared accesses."""

    name: str
    iter_vars: tuple = attrs.field(converter=tuple)
    reads: tuple = attrs.field(converter=tuple)
    """BufferRegions read."""
    writes: tuple = attrs.field(converter=tuple)
    """BufferRegions written."""
    body: Stmt
    init: "Stmt | None" = None
    """Runs before the first reduction step (reduction blocks only)."""
    alloc_buffers: tuple = attrs.field(default=(), converter=tuple)
    match_buffers: tuple = attrs.field(default=(), converter=tuple)
    annotations: Map = attrs.field(default=EMPTY, converter=Map)


@attrs.frozen(cache_hash=True)
class BlockRealize(Stmt):
    """Executes ``block`` with its iteration variables bound to ``iter_values``."""

    iter_values: tuple = attrs.field(converter=tuple)
    predicate: PrimExpr
    block: Block

    def __attrs_post_init__(self):
        if len(self.iter_values) != len(self.block.iter_vars):
            raise ValueError(
                f"block {self.block.name!r} has {len(self.block.iter_vars)} iteration variables "
                f"but {len(self.iter_values)} bindings"
            )


@attrs.frozen(cache_hash=True)
class SeqStmt(Stmt):
    """Statements in order."""

    seq: tuple[Stmt, ...] = attrs.field(converter=tuple)


@attrs.frozen(cache_hash=True)
class IfThenElse(Stmt):
    condition: PrimExpr
    then_case: Stmt
    else_case: "Stmt | None" = None


@attrs.frozen(cache_hash=True)
class While(Stmt):
    """``while condition: body`` (TVM's bucketize binary search)."""

    condition: PrimExpr
    """A bool expression, evaluated before each run of the body."""
    body: Stmt


@attrs.frozen(cache_hash=True)
class LetStmt(Stmt):
    """``var = value`` visible in ``body``."""

    var: Var
    value: PrimExpr
    body: Stmt


@attrs.frozen(cache_hash=True)
class Evaluate(Stmt):
    """Evaluate an expression for its side effect."""

    value: PrimExpr


@attrs.frozen(cache_hash=True)
class AllocateBuffer(Stmt):
    """A buffer allocated for the extent of ``body`` (outside any block): ``with
    T.decl_buffer(...) as b:``, or ``b = T.alloc_local(...)`` (scope ``"local"``) over the
    rest of its suite; with ``source``, no allocation: ``b = src.view(n)``, as TVM prints a
    flattened buffer, reads and writes ``source``'s storage with ``b``'s own compact shape."""

    buffer: Buffer
    body: Stmt
    source: "Buffer | None" = None
    """The buffer whose storage ``buffer`` views (no more bytes; of another type where TVM
    reuses storage), or None."""


@attrs.frozen(cache_hash=True)
class AttrStmt(Stmt):
    """``T.attr({"pragma_scope": "seq"})`` or ``T.attr(node, "key", value)`` over ``body``.

    Hints for later compiler passes; nothing here reads them, and execution runs the body.
    """

    attrs: Map = attrs.field(converter=Map)
    """The attributes: ``{key: value}`` (one pair in the three-argument form)."""
    body: Stmt
    """The statements the attributes apply to."""
    node: Any = None
    """The object of the three-argument form (a variable, buffer, string...), else None."""

    def __attrs_post_init__(self):
        if self.node is not None and len(self.attrs) != 1:
            raise ValueError("AttrStmt with a node holds exactly one attribute")


@attrs.frozen(cache_hash=True)
class LaunchThread(Stmt):
    """A thread launch as TVM prints it after its lowering passes (``with
    T.launch_thread("blockIdx.x", 8) as bx:``, ``tx = T.launch_thread("threadIdx.x", 32)``):
    ``body`` runs once for each thread index ``var`` in ``[0, extent)``."""

    var: Var
    tag: str
    """The thread axis: ``blockIdx.x``, ``threadIdx.y``, ``vthread``..."""
    extent: PrimExpr
    body: Stmt


def seq(*stmts: Stmt) -> Stmt:
    """A SeqStmt, flattened; a single statement is returned as is."""
    flat = []
    for s in stmts:
        if isinstance(s, SeqStmt):
            flat.extend(s.seq)
        elif s is not None:
            flat.append(s)
    return flat[0] if len(flat) == 1 else SeqStmt(tuple(flat))
