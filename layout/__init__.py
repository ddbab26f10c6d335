"""layout: data layouts after lowering.

``Layout`` (TVM layout strings, packed ones too), ``IndexMap`` (lambdas with inverses),
``transform_layout`` (re-lay-out a buffer of a PrimFunc), per-op layout rules, and the
graph-level planner ``plan(mod, targets)``.
"""
from __future__ import annotations

from tir.lazy import lazy_getattr

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


__getattr__ = lazy_getattr(__name__, _LAZY)
