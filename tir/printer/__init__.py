"""The TVMScript printer: ``tir.to_script(node, dialect="tirx" | "tir")``.

Prints what TVM prints (headers, ``T.grid`` for perfect serial nests, ``T.axis.remap`` for
plain loop bindings, typed literals) so that ``tir.parse(tir.to_script(m))`` is structurally
equal to ``m``. Names are given here, at print time: clashing hints get ``_1``, ``_2``...
"""
from __future__ import annotations

from .. import relax as rx
from ..expr import PrimExpr, SizeVar
from ..function import PrimFunc
from ..module import IRModule
from ..node import Map, Node
from ..stmt import Stmt
from .names import Namer
from .prim_func import DIALECTS, FuncPrinter, free_vars
from .relax import RelaxPrinter
from .tir_stmt import StmtPrinter

__all__ = ["to_script"]


def to_script(node: Node, dialect: str = "tirx") -> str:
    """TVMScript text of an IRModule, PrimFunc, graph Function, statement or expression."""
    d = DIALECTS.get(dialect)
    if d is None:
        raise ValueError(f"unknown dialect {dialect!r}; expected 'tirx' or 'tir'")
    if isinstance(node, IRModule):
        return _module(node, d)
    if isinstance(node, PrimFunc):
        lines = [f"# from tvm.script import {d.module} as T", ""]
        name = node.attrs.get("global_symbol", "main")
        FuncPrinter(Namer(), d, lines).function(node, name if str(name).isidentifier() else "main", 0)
        return "\n".join(lines) + "\n"
    if isinstance(node, rx.Function):
        lines = ["# from tvm.script import relax as R", ""]
        RelaxPrinter(Namer(), lines).function(node, node.attrs.get("global_symbol", "main"), 0)
        return "\n".join(lines) + "\n"
    return _fragment(node, d)


def _fragment(node, d) -> str:
    p = FuncPrinter(Namer(), d, [])
    if isinstance(node, PrimExpr):
        return p.expr(node)
    if isinstance(node, Stmt):
        StmtPrinter(p).stmt(node, 0)
        return "\n".join(p.lines)
    raise TypeError(f"cannot print {type(node).__name__} as TVMScript")


def _module(mod: IRModule, d) -> str:
    namer = Namer()
    shared = _module_vars(mod)
    has_graph = any(isinstance(f, rx.Function) for f in mod.functions.values())
    lines = ["# from typing import TypeVar"] if shared else []
    lines += ["# from tvm.script import ir as I", f"# from tvm.script import {d.module} as T"]
    lines += ["# from tvm.script import relax as R"] if has_graph else []
    lines.append("")
    for v in shared:
        lines.append(f'{namer(v)} = TypeVar("{namer(v)}")')
    namer.reserve("Module")
    lines += ["@I.ir_module", "class Module:"]
    if mod.attrs:
        lines += _module_attrs(mod.attrs, FuncPrinter(namer, d, []))
    ids = frozenset(id(v) for v in shared)
    for k, (name, f) in enumerate(mod.functions.items()):
        if k:
            lines.append("")
        _member(f, name, Namer(namer), d, lines, ids)
    return "\n".join(lines) + "\n"


def _module_attrs(mod_attrs, printer) -> list:
    """``I.module_attrs({...})`` of the attributes TVMScript can hold; an attribute holding
    compiled objects (BYOC's ``external_mods``) is named in a comment instead, since a
    script cannot carry it (``byoc`` rebuilds those from the module's Compiler functions)."""
    from .tir_stmt import literal

    kept, skipped = {}, []
    for k, v in mod_attrs.items():
        try:
            literal(printer, v)
        except TypeError:
            skipped.append(k)
            continue
        kept[k] = v
    out = [f"    # module attribute {k!r} holds compiled objects and is not printed" for k in skipped]
    if kept:
        out.append(f"    I.module_attrs({literal(printer, Map(kept))})")
    return out


def _member(f, name, namer, d, lines, ids) -> None:
    if isinstance(f, PrimFunc):
        FuncPrinter(namer, d, lines, ids).function(f, name, 1)
    elif isinstance(f, rx.Function):
        RelaxPrinter(namer, lines, ids).function(f, name, 1)
    else:
        raise TypeError(f"cannot print module member {name!r} of type {type(f).__name__}")


def _module_vars(mod: IRModule) -> list:
    """Free int64 size variables, printed once at module level as ``n = TypeVar("n")``."""
    out, seen = [], set()
    for f in mod.functions.values():
        for v in free_vars(f):
            if isinstance(v, SizeVar) and str(v.dtype) == "int64" and id(v) not in seen:
                seen.add(id(v))
                out.append(v)
    return out
