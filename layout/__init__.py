"""layout: data layouts after lowering.

``Layout`` (TVM layout strings, packed ones too), ``IndexMap`` (lambdas with inverses),
``transform_layout`` (re-lay-out a buffer of a PrimFunc), per-op layout rules, and the
graph-level planner ``plan(mod, targets)``.
"""
from __future__ import annotations

import importlib

_LAZY = {
    "Layout": "layout",
    "LayoutError": "layout",
    "layout": "layout",
    "IndexMap": "index_map",
    "layout_index_map": "layout_map",
    "transform_layout": "transform",
    "layout_transform_func": "transform_func",
    "layout_transform_between": "transform_func",
    "TensorLayout": "tensor_layout",
    "plan": "planner",
    "PlanSummary": "summary",
}


def __getattr__(name: str):
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'layout' has no attribute {name!r}")
    return getattr(importlib.import_module(f".{mod}", __name__), name)
