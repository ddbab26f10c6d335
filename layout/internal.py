"""Layouts for a PrimFunc's internal buffers that no recovered op names (e.g. ``pad_temp``).

A block that writes an internal buffer ``B[v0, ..., vn]`` from loads of a re-laid-out buffer
``A`` of the same rank, whose i-th index uses ``vi`` and no other written variable (a copy,
a pad, an elementwise stage), gives ``B`` the layout of ``A``: the consumer then reads both
in the same order, which keeps the converted loops clean for re-analysis. Any choice is
correct (transform_layout only relabels memory); this one is only about clarity.
"""
from __future__ import annotations

from tir.expr import BufferLoad, Var
from tir.function import PrimFunc
from tir.functor import post_order_visit
from tir.stmt import Block, BufferStore

from .layout import LayoutError


def _vars_in(expr) -> set:
    found = set()
    post_order_visit(expr, lambda n: found.add(id(n)) if isinstance(n, Var) else None)
    return found


def _aligned(load: BufferLoad, store_vars: list) -> bool:
    if len(load.indices) != len(store_vars):
        return False
    ids = [id(v) for v in store_vars]
    for i, idx in enumerate(load.indices):
        used = _vars_in(idx) & set(ids)
        if used != {ids[i]}:
            return False
    return True


def _candidate(block: Block, layouts: dict, params: set):
    """(internal buffer, layout) this block suggests, or None."""
    stores = []
    post_order_visit(block.body, lambda n: stores.append(n) if isinstance(n, BufferStore) else None)
    if len(stores) != 1:
        return None
    store = stores[0]
    buf = store.buffer
    if buf in params or buf in layouts or not all(isinstance(i, Var) for i in store.indices):
        return None
    loads = []
    post_order_visit(store.value, lambda n: loads.append(n) if isinstance(n, BufferLoad) else None)
    for load in loads:
        tl = layouts.get(load.buffer)
        if tl is not None and _aligned(load, list(store.indices)):
            return buf, tl
    return None


def internal_layouts(func: PrimFunc, layouts: dict) -> dict:
    """Layouts (by Buffer) for internal buffers that follow a re-laid-out buffer."""
    params = set(func.buffers)
    out = dict(layouts)
    changed = True
    while changed:
        changed = False
        for block in func.blocks():
            found = _candidate(block, out, params)
            if found is None:
                continue
            buf, tl = found
            try:
                tl.shape(buf.shape)
            except LayoutError:
                continue
            out[buf] = tl
            changed = True
    return {k: v for k, v in out.items() if k not in layouts}
