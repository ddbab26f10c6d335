"""Pass ``partition_graph``: each region becomes one graph function owned by its backend.

The calls of the composites of one region (their ``"Region"`` attribute) move into a public
function named after the region, with attributes ``{"Compiler": backend, "global_symbol":
name}``; main calls it. The composite functions stay in the module, called from it, so the
module still runs in TIR until ``run_codegen``.
"""
from __future__ import annotations

from tir import relax as R
from tir.module import IRModule

from .dataflow import attached_items
from .outline import Group, outline


def partition_graph(mod: IRModule) -> IRModule:
    """``mod`` with one ``Compiler`` function per region (see the module docstring)."""
    items = attached_items(mod.main)
    regions: dict = {}
    for i, b in enumerate(mod.main.bindings):
        v = b.value
        if not (isinstance(v, R.Call) and isinstance(mod[v.func.name], R.Function)):
            continue
        func = mod[v.func.name]
        rid = func.attrs.get("Region")
        if rid is None:
            continue
        target = func.attrs["Target"]
        members = regions.setdefault((rid, target), [])
        members += [i] + items.get(i, [])
    if not regions:
        return mod
    groups = [Group(tuple(sorted(m)), rid, {"Compiler": target, "global_symbol": rid})
              for (rid, target), m in regions.items()]
    return outline(mod, groups)
