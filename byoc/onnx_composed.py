"""ONNX converters of ops that ONNX (opset 17) has no single node for, built from several
nodes with exactly the formula TVM's legalization uses."""
from __future__ import annotations

import math

import numpy as np

from .region import Unsupported


def _c(b, value, like: str) -> str:
    """A scalar initializer in the dtype of value ``like``."""
    return b.const(np.asarray(value, dtype=b.dtype(like)))


def _float(b, name: str, what: str) -> None:
    if not np.issubdtype(b.dtype(name), np.floating):
        raise Unsupported(f"{what}: only floating-point inputs are offloaded")


def gelu(b, op, ins, out) -> None:
    """x * (0.5 + erf(x / sqrt(2)) * 0.5)"""
    x = ins[0]
    _float(b, x, op.name)
    e = b.node("Erf", [b.node("Mul", [x, _c(b, 1 / math.sqrt(2), x)])])
    b.node("Mul", [x, b.node("Add", [_c(b, 0.5, x), b.node("Mul", [e, _c(b, 0.5, x)])])], out)


def gelu_tanh(b, op, ins, out) -> None:
    """0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))"""
    x = ins[0]
    _float(b, x, op.name)
    cube = b.node("Mul", [b.node("Mul", [x, x]), x])
    inner = b.node("Add", [x, b.node("Mul", [cube, _c(b, 0.044715, x)])])
    t = b.node("Tanh", [b.node("Mul", [inner, _c(b, math.sqrt(2 / math.pi), x)])])
    half_x = b.node("Mul", [x, _c(b, 0.5, x)])
    b.node("Mul", [half_x, b.node("Add", [t, _c(b, 1.0, x)])], out)


def softplus(b, op, ins, out) -> None:
    """x where beta * x > threshold, else log(1 + exp(beta * x)) / beta"""
    x = ins[0]
    _float(b, x, op.name)
    beta, thr = float(op.attrs.get("beta", 1.0)), float(op.attrs.get("threshold", 20.0))
    bx = b.node("Mul", [x, _c(b, beta, x)])
    soft = b.node("Div", [b.node("Log", [b.node("Add", [b.node("Exp", [bx]), _c(b, 1.0, x)])]), _c(b, beta, x)])
    b.node("Where", [b.node("Greater", [bx, _c(b, thr, x)]), x, soft], out)


def floor_divide(b, op, ins, out) -> None:
    """floor(a / b) on floats (integer floor division is not offloaded)."""
    _float(b, ins[0], op.name)
    b.node("Floor", [b.node("Div", list(ins))], out)


def _axes(op, rank: int, key: str = "axis") -> list:
    axis = op.attrs.get(key)
    if axis is None:
        return list(range(rank))
    axis = axis if isinstance(axis, (tuple, list)) else [axis]
    return sorted(int(a) % rank for a in axis)


def variance(b, op, ins, out) -> None:
    """mean((x - mean(x, axes, keepdims=1))^2, axes, keepdims)"""
    x = ins[0]
    _float(b, x, op.name)
    axes = _axes(op, b.rank(x, op.name))
    d = b.node("Sub", [x, b.node("ReduceMean", [x], axes=axes, keepdims=1)])
    keep = int(bool(op.attrs.get("keepdims", False)))
    b.node("ReduceMean", [b.node("Mul", [d, d])], out, axes=axes, keepdims=keep)


def rms_norm(b, op, ins, out) -> None:
    """x / sqrt(mean(x^2, axes) + epsilon) * weight"""
    if len(ins) != 2:
        raise Unsupported(f"{op.name}: expected data and weight")
    x, w = ins
    _float(b, x, op.name)
    axes = _axes(op, b.rank(x, op.name), "axes")
    ms = b.node("ReduceMean", [b.node("Mul", [x, x])], axes=axes, keepdims=1)
    rms = b.node("Sqrt", [b.node("Add", [ms, _c(b, float(op.attrs.get("epsilon", 1e-5)), x)])])
    b.node("Mul", [b.node("Div", [x, rms]), w], out)


def arg_reduce(b, op, ins, out) -> None:
    """argmax / argmin over one axis (first index on ties, as TVM)."""
    axis = op.attrs.get("axis")
    if axis is None or isinstance(axis, (tuple, list)):
        raise Unsupported(f"{op.name}: only a single axis is offloaded")
    onnx_op = "ArgMax" if op.name == "argmax" else "ArgMin"
    b.node(onnx_op, [ins[0]], out, axis=int(axis), keepdims=int(bool(op.attrs.get("keepdims", False))),
           select_last_index=0)


def tile(b, op, ins, out) -> None:
    """Tile, repeats padded with leading 1s up to the rank."""
    reps = [int(r) for r in op.attrs.get("repeats", ())]
    rank = b.rank(ins[0], op.name)
    if len(reps) > rank:
        raise Unsupported(f"{op.name}: more repeats than dimensions (the rank grows)")
    b.node("Tile", [ins[0], b.ints([1] * (rank - len(reps)) + reps)], out)


def flip(b, op, ins, out) -> None:
    """Slice with step -1 along the axis."""
    axis = int(op.attrs.get("axis", 0))
    big = np.iinfo(np.int64)
    b.node("Slice", [ins[0], b.ints([-1]), b.ints([big.min]), b.ints([axis]), b.ints([-1])], out)
