"""tir: a mini TIR — buffers, expressions, loop nests, blocks, PrimFuncs and IRModules —
with a TVMScript reader and printer, a lowering library (``tir.topi``), a loop interpreter,
a C emitter and a graph executor.

Submodules that need more than the IR (parser, printer, execution) are loaded on first use.
"""
from __future__ import annotations

from .lazy import lazy_getattr

from . import dtype
from .buffer import Buffer, BufferRegion, Range, decl_buffer
from .dtype import DataType
from .expr import (
    Add, And, BinaryOp, BufferLoad, Call, Cast, CmpOp, Div, EQ, FloatImm, FloorDiv, FloorMod, GE,
    GT, IntImm, LE, LT, Let, Max, Min, Mod, Mul, NE, Not, Or, PrimExpr, Select, SizeVar, StringImm,
    Sub, Var, call, cast, const, convert, eq, floordiv, floormod, if_then_else, logical_and,
    logical_or, max_, max_value, min_, min_value, ne, select, truncdiv, truncmod,
)
from .function import PrimFunc, prim_func
from .functor import children, post_order_visit, pre_order_visit, substitute, transform
from .module import IRModule
from .node import Map, Node
from .stmt import (
    AllocateBuffer, AttrStmt, Block, BlockRealize, BufferStore, Evaluate, For, ForKind, IfThenElse,
    IterKind, IterVar, LetStmt, MatchBufferRegion, SeqStmt, Stmt, While, seq,
)
from .structural import assert_structural_equal, structural_equal, structural_hash

# name -> submodule that defines it; imported on first attribute access.
_LAZY = {
    "parse": "parser",
    "parse_file": "parser",
    "ParseError": "errors",
    "to_script": "printer",
    "verify": "verifier",
    "VerifyError": "verifier",
    "run": "execute",
    "interpret": "interp",
    "emit_c": "codegen_c",
    "build": "codegen_c",
    "relax": "relax",
    "topi": "topi",
    "builder": "builder",
}


__getattr__ = lazy_getattr(__name__, _LAZY)
