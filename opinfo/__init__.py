"""opinfo: recover op name, kind and attributes from lowered TVM PrimFuncs.

Public API (loaded on first use): ``analyze(prim_func) -> FuncInfo``,
``analyze_module(mod) -> dict[str, FuncInfo]``, ``OpInfo``, ``FuncInfo``.
"""
from __future__ import annotations

import importlib

_LAZY = {
    "analyze": "api",
    "analyze_module": "api",
    "FuncInfo": "info",
    "OpInfo": "info",
}


def __getattr__(name: str):
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'opinfo' has no attribute {name!r}")
    return getattr(importlib.import_module(f".{mod}", __name__), name)
