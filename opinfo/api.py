"""The public entry points: ``analyze(prim_func)`` and ``analyze_module(mod)``."""
from __future__ import annotations

from tir.function import PrimFunc
from tir.module import IRModule

from .decompose import Decomposer
from .info import FuncInfo
from .kind import pattern_kind
from .normalize import normalize
from .op_graph import fusable
from .recognize import families
from .semantic import Semantics
from .packed_ops import recognize_packed


def recognize_ops(func: PrimFunc) -> tuple:
    """The ops of ``func`` in dataflow order, or () when any part is not understood, when
    several outputs need ops of their own (split), or when the ops could not be one fused
    kernel of TVM (see :func:`.op_graph.fusable`). Read after :func:`.normalize.normalize`."""
    func = normalize(func)
    if func is None:
        return ()
    sem = Semantics(func)
    if sem.opaque:
        return ()
    dec = Decomposer(sem, families.ALL)
    outputs = sem.outputs()
    if not outputs:
        return ()
    decomposed = 0
    for stage in outputs:
        if dec.done and families.absorbed(stage, sem, dec):
            continue
        decomposed += 1
        if decomposed > 1 or not dec.output(stage):
            return ()
    return tuple(dec.ops) if fusable(sem, dec.links) else ()


def analyze(prim_func: PrimFunc, name: "str | None" = None) -> FuncInfo:
    """Kind and recognized ops of one PrimFunc (``ops`` empty when not certain)."""
    kind = pattern_kind(prim_func)
    try:
        ops = recognize_packed(prim_func, recognize_ops)
        ops = recognize_ops(prim_func) if ops is None else ops
    except (ValueError, TypeError, ZeroDivisionError, RecursionError):
        ops = ()
    return FuncInfo(name if name is not None else prim_func.name, kind, ops)


def analyze_module(mod: IRModule) -> dict:
    """``{name: FuncInfo}`` for every PrimFunc of ``mod``, in module order."""
    return {name: analyze(f, name) for name, f in mod.prim_funcs()}
