"""ONNX converters of elementwise, reduction and data-movement ops (see :mod:`byoc.onnx_nn`)."""
from __future__ import annotations

import numpy as np

from .region import Unsupported

# Relax name -> ONNX op of the same meaning on every element.
UNARY = {
    "nn.relu": "Relu", "sigmoid": "Sigmoid", "tanh": "Tanh", "exp": "Exp", "log": "Log",
    "sqrt": "Sqrt", "abs": "Abs", "negative": "Neg", "erf": "Erf", "floor": "Floor",
    "ceil": "Ceil", "sin": "Sin", "cos": "Cos", "tan": "Tan", "sign": "Sign",
    "nn.selu": "Selu",
}
# Relax name -> ONNX op with numpy broadcasting.
BINARY = {
    "add": "Add", "subtract": "Sub", "multiply": "Mul", "maximum": "Max", "minimum": "Min",
    "power": "Pow", "equal": "Equal", "less": "Less", "greater": "Greater",
    "less_equal": "LessOrEqual", "greater_equal": "GreaterOrEqual",
}
# Relax reductions -> ONNX ops; ReduceSum takes axes as an input since opset 13, the others
# as an attribute until opset 18.
REDUCE = {"sum": "ReduceSum", "mean": "ReduceMean", "max": "ReduceMax", "min": "ReduceMin", "prod": "ReduceProd"}


def _float(b, name: str, what: str) -> None:
    if not np.issubdtype(b.dtype(name), np.floating):
        raise Unsupported(f"{what}: only floating-point inputs are offloaded")


def unary(b, op, ins, out) -> None:
    _float(b, ins[0], op.name)
    b.node(UNARY[op.name], [ins[0]], out)


def _two(b, op, ins) -> list:
    """The op's two operands: a scalar the legalization folded into the loops
    (:attr:`opinfo.OpInfo.constants`, ``power(x, 0.75)``) becomes an initializer of the
    tensor's type on its side."""
    ins = list(ins)
    constants = getattr(op, "constants", ())
    if len(ins) == 1 and len(constants) == 1:
        role, value = constants[0]
        c = b.const(np.asarray(value, dtype=b.dtype(ins[0])))
        ins = [ins[0], c] if role == "rhs" else [c, ins[0]]
    if len(ins) != 2:
        raise Unsupported(f"{op.name}: expected 2 operands, got {len(ins)}")
    return ins


def binary(b, op, ins, out) -> None:
    b.node(BINARY[op.name], _two(b, op, ins), out)


def divide(b, op, ins, out) -> None:
    """divide: Div on floats (integer division rounds differently)."""
    _float(b, ins[0], op.name)
    b.node("Div", _two(b, op, ins), out)


def rsqrt(b, op, ins, out) -> None:
    _float(b, ins[0], op.name)
    b.node("Reciprocal", [b.node("Sqrt", [ins[0]])], out)


def square(b, op, ins, out) -> None:
    b.node("Mul", [ins[0], ins[0]], out)


def silu(b, op, ins, out) -> None:
    _float(b, ins[0], op.name)
    b.node("Mul", [ins[0], b.node("Sigmoid", [ins[0]])], out)


def leaky_relu(b, op, ins, out) -> None:
    b.node("LeakyRelu", [ins[0]], out, alpha=float(op.attrs.get("alpha", 0.01)))


def clip(b, op, ins, out) -> None:
    """clip / nn.relu6: Clip with min and max initializers of the input's dtype."""
    a = op.attrs
    lo = a.get("min", 0.0 if op.name == "nn.relu6" else None)
    hi = a.get("max", 6.0 if op.name == "nn.relu6" else None)
    if lo is None or hi is None:
        raise Unsupported(f"{op.name}: min and max must be known")
    dt = b.dtype(ins[0])
    b.node("Clip", [ins[0], b.const(np.asarray(lo, dt)), b.const(np.asarray(hi, dt))], out)


def _axes(op, rank: int) -> list:
    axis = op.attrs.get("axis")
    if axis is None:
        return list(range(rank))
    axis = axis if isinstance(axis, (tuple, list)) else [axis]
    return sorted(int(x) % rank for x in axis)


def reduce(b, op, ins, out) -> None:
    rank = b.rank(ins[0], op.name)
    axes = _axes(op, rank)
    keep = int(bool(op.attrs.get("keepdims", False)))
    stacked = b.stacks.get(ins[0])
    if op.name == "sum" and not keep and stacked is not None and axes == [stacked[1] % rank]:
        # sum over the axis of a stack is the elementwise sum of the stacked values
        # (how ONNX importers lower Sum); the stack itself becomes dead.
        b.node("Sum", list(stacked[0]), out)
        return
    if op.name == "sum":
        b.node("ReduceSum", [ins[0], b.ints(axes)], out, keepdims=keep)
        return
    b.node(REDUCE[op.name], [ins[0]], out, axes=axes, keepdims=keep)


def reshape(b, op, ins, out) -> None:
    shape = op.attrs.get("shape")
    if shape is None or any(not isinstance(s, (int, np.integer)) for s in shape):
        raise Unsupported("reshape: the target shape must be static")
    b.node("Reshape", [ins[0], b.ints(shape)], out)


def permute_dims(b, op, ins, out) -> None:
    axes = op.attrs.get("axes")
    perm = list(reversed(range(b.rank(ins[0], op.name)))) if axes is None else [int(x) for x in axes]
    b.node("Transpose", [ins[0]], out, perm=perm)


def broadcast_to(b, op, ins, out) -> None:
    shape = op.attrs.get("shape")
    if shape is None or any(not isinstance(s, (int, np.integer)) for s in shape):
        raise Unsupported("broadcast_to: the target shape must be static")
    if b.shape(ins[0]) == tuple(int(s) for s in shape):
        b.node("Identity", [ins[0]], out)
        return
    b.node("Expand", [ins[0], b.ints(shape)], out)


def concat(b, op, ins, out) -> None:
    b.node("Concat", list(ins), out, axis=int(op.attrs.get("axis", 0)))


def stack(b, op, ins, out) -> None:
    axis = int(op.attrs.get("axis", 0))
    parts = [b.node("Unsqueeze", [x, b.ints([axis])]) for x in ins]
    b.node("Concat", parts, out, axis=axis)
    b.stacks[out] = (tuple(ins), axis)


def expand_dims(b, op, ins, out) -> None:
    axis = op.attrs.get("axis")
    axes = axis if isinstance(axis, (tuple, list)) else [axis]
    b.node("Unsqueeze", [ins[0], b.ints([int(x) for x in axes])], out)


def squeeze(b, op, ins, out) -> None:
    axis = op.attrs.get("axis")
    if axis is None:
        b.node("Squeeze", [ins[0]], out)
        return
    axes = axis if isinstance(axis, (tuple, list)) else [axis]
    b.node("Squeeze", [ins[0], b.ints([int(x) for x in axes])], out)


def astype(b, op, ins, out) -> None:
    from onnx import helper

    dtype = np.dtype(str(op.attrs["dtype"]))
    b.node("Cast", [ins[0]], out, to=helper.np_dtype_to_tensor_dtype(dtype))


def strided_slice(b, op, ins, out) -> None:
    a = op.attrs
    axes, begin, end = a.get("axes"), a.get("begin"), a.get("end")
    if axes is None or begin is None or end is None:
        raise Unsupported("strided_slice: axes, begin and end must be known")
    steps = a.get("strides") or [1] * len(axes)
    b.node("Slice", [ins[0], b.ints(begin), b.ints(end), b.ints(axes), b.ints(steps)], out)


def where(b, op, ins, out) -> None:
    b.node("Where", list(ins), out)
