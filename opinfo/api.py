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
from .unpack import buffer_shapes, repack, unpack


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


def recognize_unpacked(func: PrimFunc) -> tuple:
    """The ops of ``func`` read on its logical tensors when buffers are stored packed by
    TVM's ``transform_layout`` (see :mod:`.unpack`), their layouts named packed; () when no
    buffer is packed or when not certain."""
    got = unpack(func)
    if got is None:
        return ()
    shapes = buffer_shapes(got[0])
    ops = [repack(op, got[1], shapes) for op in recognize_ops(got[0])]
    return () if None in ops else tuple(ops)


def analyze(prim_func: PrimFunc, name: "str | None" = None) -> FuncInfo:
    """Kind and recognized ops of one PrimFunc (``ops`` empty when not certain)."""
    kind = pattern_kind(prim_func)
    try:
        ops = recognize_unpacked(prim_func) or recognize_ops(prim_func)
    except (ValueError, TypeError, ZeroDivisionError, RecursionError):
        ops = ()
    return FuncInfo(name if name is not None else prim_func.name, kind, ops)


def analyze_module(mod: IRModule) -> dict:
    """``{name: FuncInfo}`` for every PrimFunc of ``mod``, in module order."""
    return {name: analyze(f, name) for name, f in mod.prim_funcs()}
