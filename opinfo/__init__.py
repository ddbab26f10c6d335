"""opinfo: recover op name, kind and attributes from lowered TVM PrimFuncs.

Public API (loaded on first use): ``analyze(prim_func) -> FuncInfo``,
``analyze_module(mod) -> dict[str, FuncInfo]``, ``analyze_in_network`` (analyze with the
conventions of framework importers allowed), ``verify_op(prim_func, op)`` (the op lowered
afresh and run against the function: True, False or None when it cannot be checked),
``OpInfo``, ``FuncInfo``.
"""
from __future__ import annotations

from tir.lazy import lazy_getattr

_LAZY = {
    "analyze": "api",
    "analyze_module": "api",
    "analyze_in_network": "api",
    "verify_op": "verify",
    "FuncInfo": "info",
    "OpInfo": "info",
}


__getattr__ = lazy_getattr(__name__, _LAZY)
