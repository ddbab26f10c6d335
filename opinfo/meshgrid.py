"""``meshgrid`` (``indexing``): k one-dimensional inputs, k outputs of rank k.

TVM writes one block per output, ``out_i[v_0, ..., v_{k-1}] = x_i[v_d(i)]``: with
``indexing="ij"`` input ``i`` runs along output axis ``i``; with ``"xy"`` the first two
inputs run along axes 1 and 0 (the outputs' first two extents swapped). A function is named
only when every output is exactly such a copy of a different input, the outputs share one
shape that matches one indexing, its blocks carry TVM's ``T_meshgrid`` tag (cache copies
set aside), and k >= 2; the blocks may come in any order
(with one input both indexings are the same copy).
"""
from __future__ import annotations

from tir.expr import BufferLoad, Var
from tir.function import PrimFunc

from .info import OpInfo, Operand
from .semantic import Semantics
from .tags import under_tag

TAG = "T_meshgrid"


def _axis_order(k: int, indexing: str) -> list:
    """Output axis along which each input runs."""
    return [1, 0] + list(range(2, k)) if indexing == "xy" else list(range(k))


def recognize_meshgrid(func: PrimFunc) -> "OpInfo | None":
    """The meshgrid ``func`` computes, or None (see the module doc)."""
    norm = under_tag(func, TAG)
    if norm is None:
        return None
    sem = Semantics(norm)
    params = list(sem.params)
    outputs = sem.outputs()
    k = len(outputs)
    if k < 2 or len(params) != 2 * k or sem.opaque:
        return None
    ins, outs = params[:k], params[k:]
    if any(len(b.shape) != 1 for b in ins) or any(len(b.shape) != k for b in outs):
        return None
    # the outputs are independent copies: a schedule may write them in any order
    # (compute_at of an input's cache under one of them moves that block first)
    position = {id(b): i for i, b in enumerate(outs)}
    if sorted(position.get(id(s.buffer), -1) for s in outputs) != list(range(k)):
        return None
    outputs = sorted(outputs, key=lambda s: position[id(s.buffer)])
    axes = []
    for i, stage in enumerate(outputs):
        e = stage.expr
        if not (isinstance(e, BufferLoad) and e.buffer is ins[i] and len(e.indices) == 1
                and isinstance(e.indices[0], Var)):
            return None
        idx = list(stage.indices)
        if not all(isinstance(v, Var) for v in idx) or len(set(map(id, idx))) != k:
            return None
        pos = [d for d, v in enumerate(idx) if v is e.indices[0]]
        if len(pos) != 1:
            return None
        axes.append(pos[0])
    fits = [ix for ix in ("ij", "xy") if axes == _axis_order(k, ix)]
    if len(fits) != 1:
        return None
    shape = [str(s) for s in outs[0].shape]
    if any([str(s) for s in b.shape] != shape for b in outs):
        return None
    if any(str(ins[i].shape[0]) != shape[a] for i, a in enumerate(axes)):
        return None
    operands = tuple(Operand("tensors", b.name, j) for j, b in enumerate(ins))
    return OpInfo("meshgrid", {"indexing": fits[0]}, operands, Operand("output", outs[0].name, k))
