"""Relax ops TVM 0.27's LegalizeOps leaves in ``main`` (no PrimFunc: its build dispatches them
to library kernels), run by the graph executor with numpy: ``R.cumsum``, ``R.cumprod``,
``R.sort``, ``R.argsort`` and ``R.topk``.

Each takes the evaluated tensor and the call's attributes as printed
(``R.cumsum(x, axis=1, dtype=None, exclusive=False)``). Scans accumulate in order, element
after element, in the output type, as TVM's kernels do; sorts are stable, so equal values
keep their order (the first index first), descending included.
"""
from __future__ import annotations

import numpy as np

from .interp_data import InterpError


def _tensor(args, op: str) -> np.ndarray:
    if len(args) != 1 or not isinstance(args[0], np.ndarray):
        raise InterpError(f"R.{op} takes one tensor")
    return args[0]


def _axis(attrs: dict, x: np.ndarray, op: str, default=-1) -> int:
    axis = attrs.get("axis", default)
    if not isinstance(axis, int) or isinstance(axis, bool) or not -x.ndim <= axis < x.ndim:
        raise InterpError(f"R.{op}: axis {axis!r} is not an axis of a {x.ndim}-d tensor")
    return axis % x.ndim


def _dtype(attrs: dict, default):
    d = attrs.get("dtype")
    return np.dtype(default if d is None else str(d))


def _scan(ufunc, op: str):
    def run(args, attrs):
        x = _tensor(args, op)
        dtype = _dtype(attrs, x.dtype)
        if attrs.get("axis") is None:
            x, axis = x.reshape(-1), 0
        else:
            axis = _axis(attrs, x, op)
        x = x.astype(dtype, copy=False)
        if attrs.get("exclusive", False):  # the identity, then the scan of all but the last
            first = np.full_like(np.take(x, [0], axis=axis), ufunc.identity)
            x = np.concatenate([first, np.delete(x, -1, axis=axis)], axis=axis) if x.shape[axis] else x
        return np.ascontiguousarray(ufunc.accumulate(x, axis=axis, dtype=dtype))
    return run


def stable_order(x: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """Indices sorting ``x`` along ``axis``, stable in both directions (equal values keep their
    order, the first index first), as TVM's sort kernels order them."""
    if not descending:
        return np.argsort(x, axis=axis, kind="stable")
    flipped = np.flip(x, axis=axis)  # stable descending: reverse, sort ascending, reverse back
    idx = np.flip(np.argsort(flipped, axis=axis, kind="stable"), axis=axis)
    return x.shape[axis] - 1 - idx


def _sort(args, attrs):
    x = _tensor(args, "sort")
    axis = _axis(attrs, x, "sort")
    return np.ascontiguousarray(np.take_along_axis(x, stable_order(x, axis, bool(attrs.get("descending"))), axis))


def _argsort(args, attrs):
    x = _tensor(args, "argsort")
    axis = _axis(attrs, x, "argsort")
    idx = stable_order(x, axis, bool(attrs.get("descending")))
    return np.ascontiguousarray(idx.astype(_dtype(attrs, "int32")))


def _topk(args, attrs):
    x = _tensor(args, "topk")
    axis = _axis(attrs, x, "topk")
    k = attrs.get("k", 1)
    if not isinstance(k, int) or isinstance(k, bool):
        raise InterpError(f"R.topk: k must be an integer, got {k!r}")
    n = x.shape[axis]
    k = n if k < 1 else min(k, n)  # k < 1 takes everything, as TVM's topk does
    idx = np.take(stable_order(x, axis, bool(attrs.get("largest", True))), np.arange(k), axis=axis)
    values = np.ascontiguousarray(np.take_along_axis(x, idx, axis))
    indices = np.ascontiguousarray(idx.astype(_dtype(attrs, "int32")))
    ret = attrs.get("ret_type", "both")
    if ret == "both":
        return values, indices
    if ret in ("values", "indices"):
        return values if ret == "values" else indices
    raise InterpError(f"R.topk: ret_type {ret!r} is not both, values or indices")


NUMPY_OPS = {
    "cumsum": _scan(np.add, "cumsum"),
    "cumprod": _scan(np.multiply, "cumprod"),
    "sort": _sort,
    "argsort": _argsort,
    "topk": _topk,
}
"""Relax op name -> ``fn(evaluated args, attrs)`` giving its value (a tuple for topk's both)."""
